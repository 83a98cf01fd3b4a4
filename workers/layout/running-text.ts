// Running headers, footers and page numbers, removed before the body text is read.
import type { Fragment, Row } from './types.js';
import { rowsOf } from './rows.js';
import {
  LARGE_TYPE_SHARE, PAGE_NUMBER_ZONE_SHARE, RUNNING_GAP_EM, RUNNING_MAX_CHARS, RUNNING_ZONE_SHARE, SMALLER_THAN_BODY_SHARE,
} from './thresholds.js';

const PAGE_NUMBER = /^(page\s*)?[-–—(]?\s*([0-9]{1,4}|[ivxlcdm]{1,7})\s*[-–—)]?(\s*(of|\/)\s*[0-9]{1,4})?$/i;

/** A bare page number: digits or a lower-case roman numeral (a capital letter alone is more often a label). */
const BARE_NUMBER = /^([0-9]{1,4}|[ivxlcdm]{1,7})$/;

function normalizeRunning(text: string): string {
  return text.toLowerCase().replace(/[0-9]+/g, '#').replace(/\s+/g, ' ').trim();
}

/** A row followed or preceded by this gap is set apart from the body: the gap is wider than RUNNING_GAP_EM of the row's own size. */
function isSetApart(gap: number, row: Row): boolean {
  return gap > row.size * RUNNING_GAP_EM;
}

/**
 * The rows at the top of a page, inside its top zone, down to the first one set apart from the
 * row below it; none when no such gap comes before the zone ends (the body starts at the top).
 */
function headRows(rows: Row[], zone: number): Row[] {
  const top: Row[] = [];
  for (let i = 0; i < rows.length - 1 && rows[i]!.y1 < zone; i++) {
    top.push(rows[i]!);
    if (isSetApart(rows[i + 1]!.y0 - rows[i]!.y1, rows[i]!)) return top;
  }
  return [];
}

/**
 * The rows at the foot of a page, bottom up, inside its bottom zone, up to the first one set apart
 * from the row above it; none without such a gap.
 */
function footRows(rows: Row[], height: number, zone: number): Row[] {
  const bottom: Row[] = [];
  for (let i = rows.length - 1; i > 0 && rows[i]!.y0 > height - zone; i--) {
    bottom.push(rows[i]!);
    if (isSetApart(rows[i]!.y0 - rows[i - 1]!.y1, rows[i]!)) return bottom;
  }
  return [];
}

/** One fragment holding a bare number only. */
function isBareNumber(row: Row): boolean {
  return row.fragments.length === 1 && BARE_NUMBER.test(row.fragments[0]!.text.trim());
}

/**
 * A page number alone may sit further in than running text (TeX leaves a deep bottom margin):
 * the last row of the page, in its outer PAGE_NUMBER_ZONE_SHARE, set apart, and a bare number.
 */
function isLoneFootNumber(rows: Row[], height: number): boolean {
  const last = rows[rows.length - 1]!;
  return last.y0 > height * (1 - PAGE_NUMBER_ZONE_SHARE) && isSetApart(last.y0 - rows[rows.length - 2]!.y1, last) && isBareNumber(last);
}

/** The same as isLoneFootNumber for the first row of the page. */
function isLoneHeadNumber(rows: Row[], height: number): boolean {
  const first = rows[0]!;
  return first.y1 < height * PAGE_NUMBER_ZONE_SHARE && isSetApart(rows[1]!.y0 - first.y1, first) && isBareNumber(first);
}

/** A page's rows that may be running text: its head and foot rows, then a lone page number further in (a row may come twice). */
function runningCandidates(page: { height: number; fragments: Fragment[] }): Row[] {
  const rows = rowsOf(page.fragments);
  if (rows.length < 2) return [];
  const zone = page.height * RUNNING_ZONE_SHARE;
  const out = [...headRows(rows, zone), ...footRows(rows, page.height, zone)];
  if (isLoneFootNumber(rows, page.height)) out.push(rows[rows.length - 1]!);
  if (isLoneHeadNumber(rows, page.height)) out.push(rows[0]!);
  return out;
}

/** Running text is short: a title, a chapter, a page number (RUNNING_MAX_CHARS); a longer row is content. */
function isShortRow(row: Row): boolean {
  return row.fragments.map((f) => f.text).join(' ').trim().length <= RUNNING_MAX_CHARS;
}

/** Every fragment of the row reads as a page number ("12", "Page 3 of 9", "- iv -"). */
function isPageNumberRow(row: Row): boolean {
  return row.fragments.every((f) => PAGE_NUMBER.test(f.text.trim()));
}

/**
 * What marks a row as running text besides repetition. Across pages, a number beside other words
 * ("Annual Report 12"); on a single page, where nothing repeats, a row set smaller than the body
 * (SMALLER_THAN_BODY_SHARE): "Invoice 2024" or a letter's "Dear Ms Smith," at body size is content.
 */
function bearsRunningMark(row: Row, onePage: boolean, bodySize: number): boolean {
  return onePage
    ? row.size < bodySize * SMALLER_THAN_BODY_SHARE
    : row.fragments.some((f) => PAGE_NUMBER.test(f.text.trim()));
}

/**
 * Whether a row is set in large type (LARGE_TYPE_SHARE of the body size): running heads and page
 * numbers are set at the body size or smaller, a number that large alone at the top is a chapter's.
 */
export function isLargeRow(row: Row, bodySize: number): boolean {
  return row.size >= bodySize * LARGE_TYPE_SHARE;
}

/**
 * Whether a candidate row is running text: short, not in large type, and a page number, repeated
 * on another page (digits ignored: `timesSeen` counts its text among all candidates), or bearing
 * a running mark.
 */
function isRunningRow(row: Row, timesSeen: number, onePage: boolean, bodySize: number): boolean {
  return isShortRow(row) && !isLargeRow(row, bodySize)
    && (isPageNumberRow(row) || timesSeen >= 2 || bearsRunningMark(row, onePage, bodySize));
}

/**
 * Removes running headers, footers and page numbers: short rows in the top or bottom tenth
 * of a page, set apart from the body by a clear gap, that either look like a page number or
 * repeat (digits ignored) on other pages. A one-page document has no repetition to go by:
 * there a row goes only when it is also set smaller than the body text, as running heads and
 * feet are, so that a letter's "Dear Ms Smith," or a title line at body size stays.
 */
export function dropRunningText(pages: { height: number; fragments: Fragment[] }[], bodySize: number): void {
  const candidates = pages.flatMap((page) => runningCandidates(page).map((row) => ({ row, key: normalizeRunning(row.fragments.map((f) => f.text).join(' ')) })));
  const counts = new Map<string, number>();
  for (const c of candidates) counts.set(c.key, (counts.get(c.key) ?? 0) + 1);
  const drop = new Set<Fragment>();
  for (const c of candidates) {
    if (isRunningRow(c.row, counts.get(c.key) ?? 0, pages.length === 1, bodySize)) {
      for (const f of c.row.fragments) drop.add(f);
    }
  }
  if (drop.size === 0) return;
  for (const page of pages) page.fragments = page.fragments.filter((f) => !drop.has(f));
}

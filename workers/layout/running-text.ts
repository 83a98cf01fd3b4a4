// Running headers, footers and page numbers, removed before the body text is read.
import type { Fragment, Row } from './types.js';
import { rowsOf } from './rows.js';
import { PAGE_NUMBER_ZONE_SHARE, RUNNING_GAP_EM, RUNNING_MAX_CHARS, RUNNING_ZONE_SHARE, SMALLER_THAN_BODY_SHARE } from './thresholds.js';

const PAGE_NUMBER = /^(page\s*)?[-–—(]?\s*([0-9]{1,4}|[ivxlcdm]{1,7})\s*[-–—)]?(\s*(of|\/)\s*[0-9]{1,4})?$/i;

function normalizeRunning(text: string): string {
  return text.toLowerCase().replace(/[0-9]+/g, '#').replace(/\s+/g, ' ').trim();
}

/**
 * Removes running headers, footers and page numbers: short rows in the top or bottom tenth
 * of a page, set apart from the body by a clear gap, that either look like a page number or
 * repeat (digits ignored) on other pages. A one-page document has no repetition to go by:
 * there a row goes only when it is also set smaller than the body text, as running heads and
 * feet are, so that a letter's "Dear Ms Smith," or a title line at body size stays.
 */
export function dropRunningText(pages: { height: number; fragments: Fragment[] }[], bodySize: number): void {
  const candidates: { page: number; row: Row; key: string }[] = [];
  const counts = new Map<string, number>();
  pages.forEach((page, index) => {
    const rows = rowsOf(page.fragments);
    if (rows.length < 2) return;
    const zone = page.height * RUNNING_ZONE_SHARE;
    const top: Row[] = [];
    for (let i = 0; i < rows.length - 1 && rows[i]!.y1 < zone; i++) {
      const gap = rows[i + 1]!.y0 - rows[i]!.y1;
      top.push(rows[i]!);
      if (gap > rows[i]!.size * RUNNING_GAP_EM) { for (const r of top) candidates.push({ page: index, row: r, key: '' }); break; }
    }
    const bottom: Row[] = [];
    for (let i = rows.length - 1; i > 0 && rows[i]!.y0 > page.height - zone; i--) {
      const gap = rows[i]!.y0 - rows[i - 1]!.y1;
      bottom.push(rows[i]!);
      if (gap > rows[i]!.size * RUNNING_GAP_EM) { for (const r of bottom) candidates.push({ page: index, row: r, key: '' }); break; }
    }
    // A page number alone may sit further in (TeX leaves a deep bottom margin): the first or
    // last row of the page, in its outer fifth, set apart, and one bare number (digits or a
    // lower-case roman numeral: a capital letter alone is more often a label).
    const last = rows[rows.length - 1]!, first = rows[0]!;
    const alone = (r: Row) => r.fragments.length === 1 && /^([0-9]{1,4}|[ivxlcdm]{1,7})$/.test(r.fragments[0]!.text.trim());
    if (last.y0 > page.height * (1 - PAGE_NUMBER_ZONE_SHARE) && last.y0 - rows[rows.length - 2]!.y1 > last.size * RUNNING_GAP_EM && alone(last)) candidates.push({ page: index, row: last, key: '' });
    if (first.y1 < page.height * PAGE_NUMBER_ZONE_SHARE && rows[1]!.y0 - first.y1 > first.size * RUNNING_GAP_EM && alone(first)) candidates.push({ page: index, row: first, key: '' });
  });
  for (const c of candidates) {
    c.key = normalizeRunning(c.row.fragments.map((f) => f.text).join(' '));
    counts.set(c.key, (counts.get(c.key) ?? 0) + 1);
  }
  const drop = new Set<Fragment>();
  for (const c of candidates) {
    const text = c.row.fragments.map((f) => f.text).join(' ').trim();
    const short = text.length <= RUNNING_MAX_CHARS;
    const pageNumber = c.row.fragments.every((f) => PAGE_NUMBER.test(f.text.trim()));
    const repeated = (counts.get(c.key) ?? 0) >= 2;
    // Across pages, a number beside other words ("Annual Report 12") marks a running head; on a
    // single page the row must be smaller than the body ("Invoice 2024" at body size is content).
    const evidence = pages.length === 1
      ? c.row.size < bodySize * SMALLER_THAN_BODY_SHARE
      : c.row.fragments.some((f) => PAGE_NUMBER.test(f.text.trim()));
    if (short && (pageNumber || repeated || evidence)) {
      for (const f of c.row.fragments) drop.add(f);
    }
  }
  if (drop.size === 0) return;
  for (const page of pages) page.fragments = page.fragments.filter((f) => !drop.has(f));
}

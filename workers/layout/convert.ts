// The pure pipeline: structured-text XML and link areas in, Markdown out. No I/O here, so
// every step can be tested on fixtures and timed without subprocesses.
import { parseStext, type StextPage } from './stext.js';
import type { Block, Cell, Fragment, LinkArea, Rect, Rule } from './types.js';
import { fragmentsOf } from './fragments.js';
import { dropRunningText } from './running-text.js';
import { readingRegions } from './reading-regions/index.js';
import { joinSpans } from './rows.js';
import { assignHeadingLevels, blocksOf } from './structure.js';
import { bodySizeOf } from './row-predicates.js';
import { emit } from './emit.js';
import { ruledTables, rulesOf, type RuledTable, type Rules } from './rules.js';
import { underlinedTablesOfPage } from './underlined-tables.js';
import { joinRowsAcrossColumnBreaks } from './aligned-tables/index.js';
import { withDocumentWords, wordsOf } from './hyphens.js';
import { CELL_ALIGN_PT, CUT_LABEL_MIN_ROWS, IMAGE_COVER_SCANNED, OWN_RULE_PT, THIN_TEXT_CHARS, UNMAPPED_SHARE } from './thresholds.js';

function tableWidth(rows: Cell[][]): number {
  return (rows[0] ?? []).reduce((n, c) => n + c.colspan, 0);
}

/** Two rows of the same cells: as many, each spanning as many columns. */
const sameShape = (a: Cell[], b: Cell[]) => a.length === b.length && a.every((c, k) => c.colspan === b[k]!.colspan);

const filled = (c: Cell) => c.spans.some((s) => s.text.trim() !== '');
const rowKey = (row: Cell[]) => row.map((c) => `${c.colspan}:${c.spans.map((s) => s.text).join('').replace(/\s+/g, ' ').trim()}`).join('\u0000');

/**
 * Whether the first row of a table's continuation is the rest of the row cut at the break: its
 * first cell is empty (a new row names itself there) and its text sits only in columns the cut
 * row left empty, as happens when the row's taller cells ran on past the break.
 */
function restOfCutRow(tail: Cell[], head: Cell[]): boolean {
  if (!head.length || filled(head[0]!) || !head.some(filled)) return false;
  return tail.every((c, k) => !filled(c) || !filled(head[k]!));
}

/**
 * Whether a row at the top of a table's continuation carries on the cells of the row cut at the
 * break, line by line: its text sits in cells the cut row filled, and goes on there as a
 * sentence does, with a small letter (or a number) and no capital opening any cell. A new row
 * names itself with a capital or a number alone; in a table whose cells open with small
 * letters, the cut row's cells end with a full stop.
 */
export function carriesOnCutRow(tail: Cell[], head: Cell[]): boolean {
  const opening = head.filter(filled).map((c) => c.spans.map((s) => s.text).join('').trimStart());
  if (!opening.some((t) => /^\p{Ll}/u.test(t)) || opening.some((t) => /^\p{Lu}/u.test(t))) return false;
  return head.every((c, k) => !filled(c) || (filled(tail[k]!) && !/[.!?:]$/.test(tail[k]!.spans.map((s) => s.text).join('').trimEnd())));
}

const spanText = (spans: { text: string }[]) => spans.map((s) => s.text).join('').trim();

/**
 * Whether a paragraph read first after a break is the last label of a form table cut there: the
 * table's last CUT_LABEL_MIN_ROWS rows or more are labels (the first cell filled, the cells
 * beside it left empty), and the paragraph is as narrow and as low as one of those labels (one
 * label's lines, CELL_ALIGN_PT to spare), in their weight, with no full stop: prose after a table
 * runs wider, or ends a sentence.
 */
export function isCutLabel(table: Cell[][], paragraph: Block): boolean {
  if (paragraph.kind !== 'paragraph' || !paragraph.box) return false;
  const labels = table.slice(-CUT_LABEL_MIN_ROWS);
  const labelOnly = (r: Cell[]) => r.length > 1 && filled(r[0]!) && r[0]!.box && !r.slice(1).some(filled);
  if (labels.length < CUT_LABEL_MIN_ROWS || !labels.every(labelOnly)) return false;
  const [x0, y0, x1, y1] = paragraph.box;
  const wide = Math.max(...labels.map((r) => r[0]!.box![2] - r[0]!.box![0]));
  const high = Math.max(...labels.map((r) => r[0]!.box![3] - r[0]!.box![1]));
  const bold = labels[0]![0]!.spans.some((s) => s.text.trim() && s.bold);
  return x1 - x0 <= wide + CELL_ALIGN_PT && y1 - y0 <= high + CELL_ALIGN_PT
    && paragraph.spans.some((s) => s.text.trim() && s.bold) === bold && !/[.!?]$/.test(spanText(paragraph.spans));
}

/**
 * Appends the blocks read after a column or page break: a paragraph or list item cut by the
 * break (no full stop before it, a small letter after it) runs on into the first paragraph
 * after it, and a table right after a table of the same width is its continuation.
 */
export function appendBlocks(into: Block[], blocks: Block[]): void {
  const last = into[into.length - 1], first = blocks[0];
  if ((last?.kind === 'paragraph' || last?.kind === 'item') && first?.kind === 'paragraph') {
    const tail = last.spans.map((s) => s.text).join('').trimEnd();
    const head = first.spans.map((s) => s.text).join('').trimStart();
    if (!/[.!?:]$/.test(tail) && /^[a-z]/.test(head)) {
      last.spans = joinSpans([last.spans, first.spans]);
      last.placed?.push(...first.placed ?? []);
      blocks = blocks.slice(1);
    }
  }
  blocks.forEach((b, at) => {
    const last = into[into.length - 1];
    if (at === 0 && last?.kind === 'table' && isCutLabel(last.rows, b) && b.kind === 'paragraph') {
      // The label's row, its cells beside it left empty as the rows above leave theirs.
      const shape = last.rows[last.rows.length - 1]!;
      last.rows.push(shape.map((c, n) => ({
        spans: n === 0 ? b.spans : [], colspan: c.colspan, rowspan: 1, ...(n === 0 && b.box ? { box: b.box } : {}),
      })));
      last.placed?.push(...b.placed ?? []);
      return;
    }
    if (b.kind === 'table' && last?.kind === 'table' && tableWidth(last.rows) === tableWidth(b.rows)) {
      // The header repeated at the top of the continuation is not a row of the table.
      if (b.rows.length > 1 && rowKey(b.rows[0]!) === rowKey(last.rows[0]!)) b.rows = b.rows.slice(1);
      const tail = last.rows[last.rows.length - 1]!, head = b.rows[0]!;
      const sameCells = sameShape(tail, head);
      if (sameCells && ((last.openBottom && b.openTop) || restOfCutRow(tail, head))) {
        // One row cut by the break: its two halves are one row again.
        tail.forEach((c, k) => { c.spans = joinSpans([c.spans, head[k]!.spans]); });
        last.rows.push(...b.rows.slice(1));
      } else {
        // Rows whose cells carry on the cut row's, line by line, are its rest.
        let rest = b.rows;
        while (rest.length && sameShape(tail, rest[0]!) && carriesOnCutRow(tail, rest[0]!)) {
          const head = rest[0]!;
          tail.forEach((c, k) => { c.spans = joinSpans([c.spans, head[k]!.spans]); });
          rest = rest.slice(1);
        }
        last.rows.push(...rest);
      }
      last.openBottom = b.openBottom;
      last.placed?.push(...b.placed ?? []);
      return;
    }
    into.push(b);
  });
}

/** What the page script reports for one page: link areas, drawn boxes and how much of it images cover. */
export interface PageDrawing {
  links: { rect: [number, number, number, number]; uri: string }[];
  boxes: Rect[];
  /** Share of the page's area that drawn images cover (0 to 1); absent in older answers and tests. */
  imageCover?: number;
  /** The boxes of the images drawn on the page, clipped to it; absent in older answers and tests. */
  images?: Rect[];
}

const USABLE_URI = /^(https?:|mailto:|ftp:)/i;

function glyphCounts(page: StextPage): { total: number; bad: number } {
  let total = 0, bad = 0;
  for (const line of page.lines) for (const run of line.runs) for (const g of run.glyphs) {
    if (/\s/.test(g.c)) continue;
    total++;
    const code = g.c.codePointAt(0) ?? 0;
    if (code === 0xfffd || (code >= 0xe000 && code <= 0xf8ff) || code < 0x20) bad++;
  }
  return { total, bad };
}

function needsOcr({ total, bad }: { total: number; bad: number }): boolean {
  return total === 0 || bad / total > UNMAPPED_SHARE;
}

export function ocrNote(pageNumber: number): string {
  return `*Page ${pageNumber} has no text layer: OCR is needed to read it.*`;
}

/** For a scanned page OCR could not finish before the call's deadline. */
export function ocrTimeNote(pageNumber: number): string {
  return `*Page ${pageNumber} has no text layer and could not be read within this call's time limit: convert it in a smaller document to read it.*`;
}

/** For a scanned page on which OCR found no text. */
export function ocrEmptyNote(pageNumber: number): string {
  return `*Page ${pageNumber} has no text layer, and OCR found no text on it.*`;
}

/** The note the Markdown gives a page OCR did not read, saying why. */
export function noteFor(page: PageLayout, pageNumber: number): string {
  if (page.ocr === 'timeout') return ocrTimeNote(pageNumber);
  if (page.ocr === 'empty') return ocrEmptyNote(pageNumber);
  return ocrNote(pageNumber);
}

/**
 * Why a page may need OCR: 'none' (its text layer is readable), 'no-text' (no usable text layer:
 * without OCR it becomes a note) or 'image' (a thin text layer over an image covering most of the
 * page: without OCR its few characters are converted as they are, as before OCR existed).
 */
export type ScanKind = 'none' | 'no-text' | 'image';

/** One page after layout: its size, whether it is scanned, its drawn rules and its text fragments. */
export interface PageLayout {
  height: number; width: number; scan: ScanKind; rules: Rules; fragments: Fragment[];
  /**
   * What OCR made of a scanned page: 'read' (its lines replace the text layer), 'empty' (it found
   * no text: a photo, a blank sheet) or 'timeout' (the call's deadline came first). Absent: not run.
   */
  ocr?: 'read' | 'empty' | 'timeout';
}

/** The pages of one stext document after layout, before Markdown; firstPage numbers them in notes. */
export interface StextLayout { pages: PageLayout[]; firstPage: number }

export function layoutStext(xml: string, drawings: PageDrawing[] = [], firstPage = 1): StextLayout {
  const pages = parseStext(xml);
  const perPage = pages.map((page, index): PageLayout => {
    const drawn = drawings[index];
    const areas: LinkArea[] = (drawn?.links ?? [])
      .filter((l) => USABLE_URI.test(l.uri))
      .map((l) => ({ x0: l.rect[0], y0: l.rect[1], x1: l.rect[2], y1: l.rect[3], uri: l.uri }));
    const rules = rulesOf(drawn?.boxes ?? []);
    const counts = glyphCounts(page);
    const scan: ScanKind = needsOcr(counts) ? 'no-text'
      : counts.total < THIN_TEXT_CHARS && (drawn?.imageCover ?? 0) >= IMAGE_COVER_SCANNED ? 'image' : 'none';
    return { height: page.height, width: page.width, scan, rules, fragments: fragmentsOf(page.lines, areas, rules.vertical) as Fragment[] };
  });
  return { pages: perPage, firstPage };
}

/**
 * Drops the running heads and feet (from the pages OCR read as from the others: a scanned book's
 * page numbers and titles repeat just the same; pages left as notes have no text to go by) and
 * returns the document's words, in whose scope (withDocumentWords) blocks are to be made: they
 * tell a broken word from a compound at a line end. Shared with the tables endpoint's local
 * engine (tables.ts), so both read a page the same way.
 */
export function prepareText(layout: StextLayout): Set<string> {
  const withText = layout.pages.filter((p) => !unread(p));
  dropRunningText(withText, bodySizeOfPages(withText));
  return wordsOf(layout.pages.flatMap((p) => p.fragments.map((f) => f.text)));
}

/** Markdown for a laid-out document, with the text OCR read in place of the scanned pages' text layers. */
export function markdownOf(layout: StextLayout): string {
  const words = prepareText(layout);
  return withDocumentWords(words, () => convertPages(layout.pages, layout.firstPage));
}

/** Markdown for the pages of one stext document; firstPage numbers them in notes. */
export function convertStext(xml: string, drawings: PageDrawing[] = [], firstPage = 1): string {
  return markdownOf(layoutStext(xml, drawings, firstPage));
}

/** A page without a text layer that OCR did not read: it becomes a note. */
export function unread(p: PageLayout): boolean {
  return p.scan === 'no-text' && p.ocr !== 'read';
}

const drawn = new WeakMap<Fragment[], { tables: RuledTable[]; rest: Fragment[] }>();

/**
 * The tables drawn with rules on a page (grids, and rows ruled by underlines) and the fragments
 * outside them. Kept per list of fragments: the body size and the blocks both need them, and a
 * page whose fragments change (running text dropped, OCR read) gets a new list.
 */
function drawnTables(p: PageLayout): { tables: RuledTable[]; rest: Fragment[] } {
  let found = drawn.get(p.fragments);
  if (!found) {
    const ruled = ruledTables(p.fragments, p.rules);
    // Rules inside a grid are its own; the others may underline the rows of a table without a grid.
    const inside = (r: Rule, t: RuledTable) =>
      r.at >= t.y0 - OWN_RULE_PT && r.at <= t.y1 + OWN_RULE_PT && r.from >= t.x0 - OWN_RULE_PT && r.to <= t.x1 + OWN_RULE_PT;
    const loose = p.rules.horizontal.filter((r) => !ruled.tables.some((t) => inside(r, t)));
    const underlined = underlinedTablesOfPage(ruled.rest, loose, p.width);
    found = { tables: ruled.tables.concat(underlined.tables), rest: underlined.rest };
    drawn.set(p.fragments, found);
  }
  return found;
}

/**
 * The body text's size over pages, from the text outside drawn tables: a page given over to a
 * table in small type still has its running text (and its headings) measured against the prose.
 */
export function bodySizeOfPages(pages: PageLayout[]): number {
  return bodySizeOf(pages.flatMap((p) => drawnTables(p).rest));
}

/** The blocks of one page with a text layer, one list per reading region, in reading order. */
export function regionBlocks(p: PageLayout, bodySize: number): Block[][] {
  // A drawn table joins the layout as one fragment the size of the table.
  const { tables, rest } = drawnTables(p);
  const fragments = rest.concat(tables.map((t) => ({
    x0: t.x0, x1: t.x1, y0: t.y0, y1: t.y1, size: bodySize, spans: [], text: '', bold: false, italic: false, mono: false, charWidth: 0, table: t,
  })));
  return joinRowsAcrossColumnBreaks(readingRegions(fragments, p.width), bodySize).map((region) => blocksOf(region, { bodySize }));
}

/** A run of blocks in reading order, or a page without a text layer that OCR did not read (`page` numbers it). */
export type FlowPart = { blocks: Block[] } | { unreadPage: number; layout: PageLayout };

/**
 * The blocks of the pages in reading order, as the Markdown has them: heading levels set over the
 * pages, blocks cut by a column or page break joined again (appendBlocks), and a page OCR did not
 * read between two runs of blocks (nothing is joined across it). Each block is placed: its page,
 * numbered from firstPage, and its box there, one per piece of a block joined across a break;
 * table cells get their page.
 */
export function flowOf(perPage: PageLayout[], firstPage: number): FlowPart[] {
  const bodySize = bodySizeOfPages(perPage);
  const pageRegions: (Block[][] | 'ocr')[] = perPage.map((p) => (unread(p) ? 'ocr' : regionBlocks(p, bodySize)));
  assignHeadingLevels(pageRegions.flatMap((regions) => (regions === 'ocr' ? [] : regions.flat())), bodySize);
  const flow: FlowPart[] = [];
  let pending: Block[] = [];
  const flush = () => { if (pending.length) flow.push({ blocks: pending }); pending = []; };
  pageRegions.forEach((regions, index) => {
    const page = firstPage + index;
    if (regions === 'ocr') {
      flush();
      flow.push({ unreadPage: page, layout: perPage[index]! });
      return;
    }
    for (const blocks of regions) {
      for (const b of blocks) {
        b.placed = b.box ? [{ page, box: b.box }] : [];
        if (b.kind === 'table') for (const row of b.rows) for (const cell of row) cell.page = page;
      }
      appendBlocks(pending, blocks);
    }
  });
  flush();
  return flow;
}

function convertPages(perPage: PageLayout[], firstPage: number): string {
  return flowOf(perPage, firstPage).map((part) => ('blocks' in part ? emit(part.blocks) : `${noteFor(part.layout, part.unreadPage)}\n`)).join('\n');
}

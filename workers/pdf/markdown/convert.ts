// The pure pipeline: structured-text XML and link areas in, Markdown out. No I/O here, so
// every step can be tested on fixtures and timed without subprocesses.
import { parseStext, type StextPage } from './stext.js';
import type { Block, Cell, Fragment, LinkArea, Rect } from './types.js';
import { fragmentsOf } from './fragments.js';
import { dropRunningText } from './running-text.js';
import { readingRegions } from './reading-regions.js';
import { joinSpans } from './rows.js';
import { assignHeadingLevels, blocksOf, bodySizeOf } from './structure.js';
import { emit } from './emit.js';
import { ruledTables, rulesOf, type Rules } from './rules.js';
import { withDocumentWords, wordsOf } from './hyphens.js';

function tableWidth(rows: Cell[][]): number {
  return (rows[0] ?? []).reduce((n, c) => n + c.colspan, 0);
}

/** Appends blocks; a table right after a table of the same width is its continuation past a column or page break. */
export function appendBlocks(into: Block[], blocks: Block[]): void {
  for (const b of blocks) {
    const last = into[into.length - 1];
    if (b.kind === 'table' && last?.kind === 'table' && tableWidth(last.rows) === tableWidth(b.rows)) {
      const tail = last.rows[last.rows.length - 1]!, head = b.rows[0]!;
      const sameCells = tail.length === head.length && tail.every((c, k) => c.colspan === head[k]!.colspan);
      if (last.openBottom && b.openTop && sameCells) {
        // One row cut by the break: its two halves are one row again.
        tail.forEach((c, k) => { c.spans = joinSpans([c.spans, head[k]!.spans]); });
        last.rows.push(...b.rows.slice(1));
      } else {
        last.rows.push(...b.rows);
      }
      last.openBottom = b.openBottom;
      continue;
    }
    into.push(b);
  }
}

/** What the page script reports for one page: link areas and drawn boxes. */
export interface PageDrawing {
  links: { rect: [number, number, number, number]; uri: string }[];
  boxes: Rect[];
}

const USABLE_URI = /^(https?:|mailto:|ftp:)/i;

function needsOcr(page: StextPage): boolean {
  let total = 0, bad = 0;
  for (const line of page.lines) for (const run of line.runs) for (const g of run.glyphs) {
    if (/\s/.test(g.c)) continue;
    total++;
    const code = g.c.codePointAt(0) ?? 0;
    if (code === 0xfffd || (code >= 0xe000 && code <= 0xf8ff) || code < 0x20) bad++;
  }
  return total === 0 || bad / total > 0.3;
}

export function ocrNote(pageNumber: number): string {
  return `*Page ${pageNumber} has no text layer: OCR is needed to read it.*`;
}

/** Markdown for the pages of one stext document; firstPage numbers them in notes. */
export function convertStext(xml: string, drawings: PageDrawing[] = [], firstPage = 1): string {
  const { perPage, words } = layoutStext(xml, drawings);
  return withDocumentWords(words, () => convertPages(perPage, firstPage));
}

/**
 * The pages of one stext document after layout (running text dropped), and the document's
 * words, in whose scope (withDocumentWords) blocks are to be made. Shared with the tables
 * endpoint's local engine (tables.ts), so both read a page the same way.
 */
export function layoutStext(xml: string, drawings: PageDrawing[] = []): { perPage: PageLayout[]; words: Set<string> } {
  const pages = parseStext(xml);
  const perPage = pages.map((page, index): PageLayout => {
    const drawn = drawings[index];
    const areas: LinkArea[] = (drawn?.links ?? [])
      .filter((l) => USABLE_URI.test(l.uri))
      .map((l) => ({ x0: l.rect[0], y0: l.rect[1], x1: l.rect[2], y1: l.rect[3], uri: l.uri }));
    const rules = rulesOf(drawn?.boxes ?? []);
    return { height: page.height, width: page.width, ocr: needsOcr(page), rules, fragments: fragmentsOf(page.lines, areas, rules.vertical) as Fragment[] };
  });
  const withText = perPage.filter((p) => !p.ocr);
  dropRunningText(withText, bodySizeOf(withText.flatMap((p) => p.fragments)));
  // The document's own words tell a broken word from a compound at a line end.
  const words = wordsOf(perPage.flatMap((p) => p.fragments.map((f) => f.text)));
  return { perPage, words };
}

/** One page after layout: its size, whether it needs OCR, its drawn rules and its text fragments. */
export interface PageLayout { height: number; width: number; ocr: boolean; rules: Rules; fragments: Fragment[] }

/** The blocks of one page with a text layer, one list per reading region, in reading order. */
export function regionBlocks(p: PageLayout, bodySize: number): Block[][] {
  // A ruled table joins the layout as one fragment the size of the table.
  const { tables, rest } = ruledTables(p.fragments, p.rules);
  const fragments = rest.concat(tables.map((t) => ({
    x0: t.x0, x1: t.x1, y0: t.y0, y1: t.y1, size: bodySize, spans: [], text: '', bold: false, italic: false, mono: false, charWidth: 0, table: t,
  })));
  return readingRegions(fragments, p.width).map((region) => blocksOf(region, { bodySize }));
}

function convertPages(perPage: PageLayout[], firstPage: number): string {
  const bodySize = bodySizeOf(perPage.flatMap((p) => p.fragments));
  const pageBlocks: (Block[] | 'ocr')[] = perPage.map((p) => {
    if (p.ocr) return 'ocr';
    return regionBlocks(p, bodySize).flat();
  });
  const all = pageBlocks.flatMap((b) => (b === 'ocr' ? [] : b));
  assignHeadingLevels(all, bodySize);
  const out: string[] = [];
  let pending: Block[] = [];
  const flush = () => { if (pending.length) out.push(emit(pending)); pending = []; };
  pageBlocks.forEach((blocks, index) => {
    if (blocks === 'ocr') { flush(); out.push(`${ocrNote(firstPage + index)}\n`); return; }
    // A paragraph cut by the page break continues on the next page.
    const last = pending[pending.length - 1];
    const first = blocks[0];
    if (last?.kind === 'paragraph' && first?.kind === 'paragraph') {
      const tail = last.spans.map((s) => s.text).join('').trimEnd();
      const head = first.spans.map((s) => s.text).join('').trimStart();
      if (!/[.!?:]$/.test(tail) && /^[a-z]/.test(head)) {
        last.spans = joinSpans([last.spans, first.spans]);
        blocks = blocks.slice(1);
      }
    }
    appendBlocks(pending, blocks);
  });
  flush();
  return out.join('\n');
}

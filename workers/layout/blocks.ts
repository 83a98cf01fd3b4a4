// The document as blocks with their places, for /v1/pdf/blocks: the blocks the Markdown is
// made of (flowOf), each with its page, its box in PDF points from the displayed page's top-left
// corner (mupdf's structured text already has the page's rotation, its crop box's origin and its
// UserUnit applied; OCR lines are scaled from the rendered page), its kind, its text and its
// Markdown; the running heads and feet the Markdown leaves out, as headers and footers; the images
// drawn on the page, as figures; paragraphs that name a figure or table, as captions.
import type { Block, Cell, Fragment, Placement, Rect, Span } from './types.js';
import { flowOf, noteFor, prepareText, type PageDrawing, type StextLayout } from './convert.js';
import { withDocumentWords } from './hyphens.js';
import { emit } from './emit.js';
import { drawnBox, rowsOf } from './rows.js';
import { CAPTION_MAX_CHARS, FIGURE_BACKGROUND_SHARE, FIGURE_JOIN_PT, FIGURE_MIN_SIDE_PT } from './thresholds.js';

/** A box as the answer gives it: [x0, y0, x1, y1] in points from the displayed page's top-left corner. */
export type BBox = [number, number, number, number];

export type BlockKind = 'heading' | 'paragraph' | 'list_item' | 'table' | 'figure' | 'caption' | 'code' | 'header' | 'footer';

export interface TableCellOut { text: string; colspan: number; rowspan: number; bbox?: BBox }
export interface TableRowOut { page: number; bbox: BBox; cells: TableCellOut[] }

export interface DocBlock {
  page: number;
  bbox: BBox;
  kind: BlockKind;
  /** Headings: 1 is the largest type. */
  level?: number;
  /** List items: nesting depth from 0, whether numbered, and the marker as printed. */
  depth?: number;
  ordered?: boolean;
  marker?: string;
  /** Tables: rows of cells, each row where it is drawn. */
  rows?: TableRowOut[];
  text: string;
  markdown: string;
  /** The further pieces of a block cut by a column or page break, in reading order. */
  continued?: { page: number; bbox: BBox }[];
}

export interface PageOut {
  page: number;
  width: number;
  height: number;
  /** Where its text came from: its text layer, OCR, or nowhere (`note` says why). */
  read: 'text-layer' | 'ocr' | 'unread';
  note?: string;
}

/** A block of the answer with the layout block it was made from, which chunking cuts into pieces. */
export interface LaidOutBlock { out: DocBlock; source: Block }

const round = (v: number) => Math.round(v * 100) / 100;
export const bboxOf = (r: Rect): BBox => [round(r[0]), round(r[1]), round(r[2]), round(r[3])];
/** The smallest box around both. */
export const unionOf = (a: Rect, b: Rect): Rect => [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];

/** Text without Markdown: one space between words. */
export function plainText(spans: Span[]): string {
  return spans.map((s) => s.text).join('').replace(/\s+/g, ' ').trim();
}

/** A block's text: words of headings, paragraphs and items; code lines as set; a table's cells parted by tabs, its rows by line breaks. */
export function textOf(b: Block): string {
  switch (b.kind) {
    case 'code': return b.lines.join('\n');
    case 'table': return b.rows.map((r) => r.map((c) => plainText(c.spans)).join('\t')).join('\n');
    default: return plainText(b.spans);
  }
}

/** A block's Markdown, as the Markdown of the whole document has it. */
export function markdownOfBlock(b: Block): string {
  return emit([b]).replace(/\n$/, '');
}

// "Figure 3: Yields", "Fig. 2.1. Sites", "Table IV — Costs", "Chart A: Rain": a caption, as
// opposed to a sentence that starts with the word ("Figure 3 shows ...").
const CAPTION = /^(?:fig(?:ure)?|table|tab|chart|graph|exhibit|plate|scheme|listing|diagram|illustration|map|photo)\.?\s*(?:[0-9]+(?:[.-][0-9]+)*[a-z]?|[ivxlc]+|[a-z])\s*[:.\u2013\u2014-]/i;

export function isCaption(text: string): boolean {
  return text.length <= CAPTION_MAX_CHARS && CAPTION.test(text);
}

/** The rows of a table block as the answer gives them: each row's page and box from its cells (the table's when its cells have none). */
function tableRows(rows: Cell[][], fallback: Placement): TableRowOut[] {
  return rows.map((row) => {
    const placed = row.filter((c) => c.box);
    const page = placed[0]?.page ?? fallback.page;
    const boxes = placed.filter((c) => (c.page ?? page) === page).map((c) => c.box!);
    const box = boxes.length ? boxes.reduce(unionOf) : fallback.box;
    return {
      page, bbox: bboxOf(box),
      cells: row.map((c) => ({
        text: plainText(c.spans), colspan: c.colspan, rowspan: c.rowspan, ...(c.box ? { bbox: bboxOf(c.box) } : {}),
      })),
    };
  });
}

function docBlock(b: Block): DocBlock | undefined {
  const markdown = markdownOfBlock(b);
  const [first, ...rest] = b.placed ?? [];
  if (!markdown.trim() || !first) return undefined;
  const where = { page: first.page, bbox: bboxOf(first.box) };
  const continued = rest.length ? { continued: rest.map((p) => ({ page: p.page, bbox: bboxOf(p.box) })) } : {};
  const text = textOf(b);
  switch (b.kind) {
    case 'heading': return { ...where, kind: 'heading', level: b.level, text, markdown, ...continued };
    case 'paragraph': return { ...where, kind: isCaption(text) ? 'caption' : 'paragraph', text, markdown, ...continued };
    case 'item': return { ...where, kind: 'list_item', depth: b.depth, ordered: b.ordered, marker: b.marker, text, markdown, ...continued };
    case 'code': return { ...where, kind: 'code', text, markdown, ...continued };
    case 'table': return { ...where, kind: 'table', rows: tableRows(b.rows, first), text, markdown, ...continued };
  }
}

/** The running heads (upper half of the page) and feet of one page, one block each, made from the rows running-text.ts dropped. */
function runningBlocks(dropped: Fragment[], page: number, height: number): { header?: LaidOutBlock; footer?: LaidOutBlock } {
  const rows = rowsOf(dropped);
  const make = (kind: 'header' | 'footer', lines: Fragment[][]): LaidOutBlock | undefined => {
    const box = drawnBox(lines.flat());
    if (!box) return undefined;
    const source: Block = { kind: 'paragraph', spans: [{ text: lines.map((p) => p.map((f) => f.text).join(' ')).join(' '), bold: false, italic: false, mono: false }], box, placed: [{ page, box }] };
    const text = textOf(source);
    return text ? { out: { page, bbox: bboxOf(box), kind, text, markdown: markdownOfBlock(source) }, source } : undefined;
  };
  const top = rows.filter((r) => (r.y0 + r.y1) / 2 < height / 2).map((r) => r.fragments);
  const bottom = rows.filter((r) => (r.y0 + r.y1) / 2 >= height / 2).map((r) => r.fragments);
  return { header: make('header', top), footer: make('footer', bottom) };
}

/**
 * The figures of a page with a text layer: its drawn images at least FIGURE_MIN_SIDE_PT on each
 * side (smaller ones are bullets, rules and logos), those that touch or overlap made one (a picture
 * drawn in tiles), and none that covers FIGURE_BACKGROUND_SHARE of the page (a background or a
 * letterhead printed as one image). Top to bottom.
 */
export function figuresOf(images: Rect[], width: number, height: number): Rect[] {
  const area = Math.max(1, width * height);
  const merged: Rect[] = [];
  const background = (r: Rect) => ((r[2] - r[0]) * (r[3] - r[1])) / area >= FIGURE_BACKGROUND_SHARE;
  for (const image of images.filter((r) => !background(r))) {
    let box: Rect = [...image];
    for (let k = merged.length - 1; k >= 0; k--) {
      const m = merged[k]!;
      const touching = box[0] <= m[2] + FIGURE_JOIN_PT && m[0] <= box[2] + FIGURE_JOIN_PT
        && box[1] <= m[3] + FIGURE_JOIN_PT && m[1] <= box[3] + FIGURE_JOIN_PT;
      if (touching) {
        box = unionOf(box, m);
        merged.splice(k, 1);
        k = merged.length;
      }
    }
    merged.push(box);
  }
  return merged
    .filter((r) => r[2] - r[0] >= FIGURE_MIN_SIDE_PT && r[3] - r[1] >= FIGURE_MIN_SIDE_PT && !background(r))
    .sort((a, b) => a[1] - b[1] || a[0] - b[0]);
}

/**
 * Puts a figure among a page's blocks in reading order: before the first block under its top
 * edge that shares some of its width (the text it stands above in its column), else after the
 * last block that shares some of its width, else at the end of the page.
 */
export function placeFigure(blocks: LaidOutBlock[], figure: LaidOutBlock): void {
  const f = figure.out.bbox;
  const overlaps = (b: LaidOutBlock) => b.out.bbox[0] < f[2] && b.out.bbox[2] > f[0];
  const below = blocks.findIndex((b) => overlaps(b) && b.out.bbox[1] >= f[1]);
  if (below >= 0) { blocks.splice(below, 0, figure); return; }
  let after = -1;
  blocks.forEach((b, k) => { if (overlaps(b)) after = k; });
  blocks.splice(after >= 0 ? after + 1 : blocks.length, 0, figure);
}

/**
 * The blocks of the pages of one stext document (firstPage numbers the first), in reading order
 * page by page: a page's header, its blocks with its figures among them, its footer. A block cut by
 * a page break counts on the page where it starts. Also each page's size and how it was read.
 */
export function documentBlocks(layout: StextLayout, drawings: PageDrawing[] = []): { blocks: LaidOutBlock[]; pages: PageOut[] } {
  const before = layout.pages.map((p) => p.fragments);
  const words = prepareText(layout);
  return withDocumentWords(words, () => {
    const byPage = new Map<number, LaidOutBlock[]>();
    const pages: PageOut[] = layout.pages.map((p, index) => ({
      page: layout.firstPage + index, width: round(p.width), height: round(p.height), read: p.ocr === 'read' ? 'ocr' : 'text-layer',
    }));
    for (const part of flowOf(layout.pages, layout.firstPage)) {
      if ('unreadPage' in part) {
        const page = pages[part.unreadPage - layout.firstPage]!;
        page.read = 'unread';
        page.note = noteFor(part.layout, part.unreadPage).replace(/^\*|\*$/g, '');
        continue;
      }
      for (const source of part.blocks) {
        const out = docBlock(source);
        if (!out) continue;
        let list = byPage.get(out.page);
        if (!list) byPage.set(out.page, list = []);
        list.push({ out, source });
      }
    }
    const blocks: LaidOutBlock[] = [];
    layout.pages.forEach((p, index) => {
      const page = layout.firstPage + index;
      const own = byPage.get(page) ?? [];
      if (p.scan === 'none') {
        for (const box of figuresOf(drawings[index]?.images ?? [], p.width, p.height)) {
          placeFigure(own, { out: { page, bbox: bboxOf(box), kind: 'figure', text: '', markdown: '' }, source: { kind: 'paragraph', spans: [], box, placed: [{ page, box }] } });
        }
      }
      const kept = new Set(p.fragments);
      const { header, footer } = runningBlocks(before[index]!.filter((f) => !kept.has(f)), page, p.height);
      if (header) blocks.push(header);
      blocks.push(...own);
      if (footer) blocks.push(footer);
    });
    return { blocks, pages };
  });
}

// Chunks for retrieval (/v1/pdf/blocks with chunk_chars): the blocks in reading order packed into
// chunks of at most `limit` characters (Unicode code points, of the chunk's text and of its
// Markdown alike, blocks parted by a blank line). A block longer than the limit is cut: text at
// sentence ends (then between words, then between characters, for a sentence or a word longer
// than the limit), code between lines, a table between rows. A table row is never cut, nor are
// rows that a cell spanning rows ties together; a piece of a table after the first repeats the
// header row when it still fits. A row longer than the limit by itself is a chunk of its own,
// longer than the limit, marked `oversized`. Each chunk lists the blocks it holds (a cut block in
// each chunk holding a piece), their pages and their boxes: a table's piece has the box of its
// rows on each page, a piece of text or code the boxes of its whole block.
import type { Block, Cell, Placement, Rect, Span } from './types.js';
import { bboxOf, markdownOfBlock, plainText, unionOf, type BBox, type LaidOutBlock } from './blocks.js';

export interface ChunkOut {
  text: string;
  markdown: string;
  pages: number[];
  boxes: { page: number; bbox: BBox }[];
  /** Indices of the blocks whose text (or a piece of it) the chunk holds, and of the figures among them. */
  blocks: number[];
  /** Set when the chunk is one table row (or rows tied by a spanning cell) longer than the limit. */
  oversized?: true;
}

/** Characters as the limit counts them: Unicode code points. */
export function charCount(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const h = text.charCodeAt(i - 1);
      if (h >= 0xd800 && h <= 0xdbff) n--;
    }
  }
  return n;
}

interface Rendered { text: string; markdown: string }
const sizeOf = (r: Rendered) => Math.max(charCount(r.text), charCount(r.markdown));
const SEPARATOR = 2; // the blank line between two blocks, "\n\n"

/** A piece of one block: its text, its Markdown, where it is drawn; oversized when it cannot be cut to the limit. */
interface Piece extends Rendered { block: number; boxes: Placement[]; oversized?: boolean }

interface Run { from: number; to: number; rendered: Rendered; fits: boolean }

/**
 * Packs units 0..n-1 into consecutive runs whose rendering is at most `limit`: a run grows while
 * the sizes of its units rendered alone add up to no more than the limit (joining units never
 * makes their Markdown longer: fewer emphasis marks), then is rendered and shortened while it
 * does not fit. A unit that does not fit alone is a run of its own with `fits` false.
 */
function pack(
  n: number, unitSize: (k: number) => number, render: (from: number, to: number) => Rendered, limit: number, separator: number,
): Run[] {
  const runs: Run[] = [];
  let from = 0;
  while (from < n) {
    let to = from, total = unitSize(from);
    while (to + 1 < n && total + separator + unitSize(to + 1) <= limit) { to++; total += separator + unitSize(to); }
    let rendered = render(from, to);
    while (to > from && sizeOf(rendered) > limit) { to--; rendered = render(from, to); }
    runs.push({ from, to, rendered, fits: sizeOf(rendered) <= limit });
    from = to + 1;
  }
  return runs;
}

/** The spans covering characters [from, to) of the spans' joined text. */
function sliceSpans(spans: Span[], from: number, to: number): Span[] {
  const out: Span[] = [];
  let at = 0;
  for (const s of spans) {
    const end = at + s.text.length;
    if (end > from && at < to) out.push({ ...s, text: s.text.slice(Math.max(0, from - at), Math.min(s.text.length, to - at)) });
    at = end;
  }
  return out;
}

const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/** Where a text may be cut, coarsest first: sentence ends, word ends, between characters. */
const CUTS: ((text: string) => number[])[] = [
  (text) => [...sentences.segment(text)].map((s) => s.index + s.segment.length),
  (text) => [...text.matchAll(/\S+\s*/g)].map((m) => m.index + m[0].length),
  (text) => { const ends: number[] = []; let at = 0; for (const c of text) { at += c.length; ends.push(at); } return ends; },
];

/** The pieces of a heading, paragraph or list item: the first keeps its kind (a heading's #, an item's marker), the rest are paragraphs. */
function textPieces(source: Extract<Block, { spans: Span[] }>, limit: number): Rendered[] {
  const joined = source.spans.map((s) => s.text).join('');
  const render = (from: number, to: number): Rendered => {
    const spans = sliceSpans(source.spans, from, to);
    const block: Block = from === 0 ? { ...source, spans } : { kind: 'paragraph', spans };
    return { text: plainText(spans), markdown: markdownOfBlock(block) };
  };
  const out: Rendered[] = [];
  const cut = (from: number, to: number, level: number) => {
    const ends = CUTS[level]!(joined.slice(from, to)).map((e) => from + e);
    const starts = [from, ...ends.slice(0, -1)];
    const unit = (k: number) => sizeOf(render(starts[k]!, ends[k]!));
    for (const run of pack(ends.length, unit, (a, b) => render(starts[a]!, ends[b]!), limit, 1)) {
      if (run.fits || level === CUTS.length - 1) out.push(run.rendered);
      else cut(starts[run.from]!, ends[run.to]!, level + 1);
    }
  };
  cut(0, joined.length, 0);
  return out.filter((r) => r.text || r.markdown);
}

/** The pieces of a code block: runs of whole lines; a line longer than the limit cut between characters. */
function codePieces(lines: string[], limit: number): Rendered[] {
  const render = (part: string[]): Rendered => ({ text: part.join('\n'), markdown: markdownOfBlock({ kind: 'code', lines: part }) });
  const out: Rendered[] = [];
  for (const run of pack(lines.length, (k) => sizeOf(render([lines[k]!])), (a, b) => render(lines.slice(a, b + 1)), limit, 1)) {
    if (run.fits) { out.push(run.rendered); continue; }
    const chars = [...lines[run.from]!];
    for (const piece of pack(chars.length, (k) => sizeOf(render([chars[k]!])), (a, b) => render([chars.slice(a, b + 1).join('')]), limit, 0)) out.push(piece.rendered);
  }
  return out;
}

/** A table's rows in units never to be cut: a row, with the rows below it that a cell spanning rows reaches into. */
export function rowUnits(rows: Cell[][]): number[][] {
  const units: number[][] = [];
  let reach = -1;
  rows.forEach((row, r) => {
    if (r > reach) units.push([]);
    units[units.length - 1]!.push(r);
    for (const c of row) reach = Math.max(reach, r + Math.max(1, c.rowspan) - 1);
  });
  return units;
}

/** The pieces of a table: runs of row units, each after the first led by the header unit when that still fits. */
function tablePieces(lb: LaidOutBlock & { source: { kind: 'table' } }, index: number, limit: number): Piece[] {
  const rows = lb.source.rows;
  const units = rowUnits(rows);
  const renderRows = (picked: number[]): Rendered => {
    const part = picked.map((r) => rows[r]!);
    return { text: part.map((r) => r.map((c) => plainText(c.spans)).join('\t')).join('\n'), markdown: markdownOfBlock({ kind: 'table', rows: part }) };
  };
  const header = units[0]!;
  const picked = (from: number, to: number): number[] => {
    const body = units.slice(from, to + 1).flat();
    return from > 0 && sizeOf(renderRows([...header, ...body])) <= limit ? [...header, ...body] : body;
  };
  const runs = pack(units.length, (k) => sizeOf(renderRows(units[k]!)), (a, b) => renderRows(picked(a, b)), limit, 1);
  return runs.map((run) => {
    const placed = new Map<number, Rect>();
    for (const r of picked(run.from, run.to)) {
      const row = lb.out.rows![r]!;
      const b = placed.get(row.page);
      placed.set(row.page, b ? unionOf(b, row.bbox) : [...row.bbox]);
    }
    const boxes = [...placed].map(([page, box]) => ({ page, box }));
    return { ...run.rendered, block: index, boxes, ...(run.fits ? {} : { oversized: true }) };
  });
}

/** The pieces one block is cut into for a limit (itself when it fits). */
export function piecesOf(lb: LaidOutBlock, index: number, limit: number): Piece[] {
  const boxes = lb.source.placed ?? [];
  const whole: Piece = { text: lb.out.text, markdown: lb.out.markdown, block: index, boxes };
  if (sizeOf(whole) <= limit) return [whole];
  const source = lb.source;
  if (source.kind === 'table') return tablePieces(lb as LaidOutBlock & { source: { kind: 'table' } }, index, limit);
  const pieces = source.kind === 'code' ? codePieces(source.lines, limit) : textPieces(source, limit);
  return pieces.map((p) => ({ ...p, block: index, boxes }));
}

/** The chunks of a document's blocks for a limit. */
export function chunksOf(blocks: LaidOutBlock[], limit: number): ChunkOut[] {
  const chunks: ChunkOut[] = [];
  let open: {
    texts: string[]; markdowns: string[]; textSize: number; markdownSize: number; boxes: Placement[]; blocks: number[];
  } | undefined;
  const start = () => (open ??= { texts: [], markdowns: [], textSize: 0, markdownSize: 0, boxes: [], blocks: [] });
  const add = (piece: Piece) => {
    const c = start();
    if (!c.blocks.includes(piece.block)) c.blocks.push(piece.block);
    c.boxes.push(...piece.boxes);
    if (!piece.text && !piece.markdown) return;
    const gap = c.texts.length ? SEPARATOR : 0;
    c.textSize += gap + charCount(piece.text);
    c.markdownSize += gap + charCount(piece.markdown);
    c.texts.push(piece.text);
    c.markdowns.push(piece.markdown);
  };
  const close = (oversized = false) => {
    // A run of figures alone waits for the text after it.
    if (!open || !open.texts.length) return;
    const seen = new Set<string>();
    const boxes = open.boxes.map((p) => ({ page: p.page, bbox: bboxOf(p.box) })).filter((b) => {
      const key = `${b.page}:${b.bbox.join(',')}`;
      return !seen.has(key) && !!seen.add(key);
    });
    chunks.push({
      text: open.texts.join('\n\n'), markdown: open.markdowns.join('\n\n'),
      pages: [...new Set(boxes.map((b) => b.page))].sort((a, b) => a - b), boxes, blocks: open.blocks,
      ...(oversized ? { oversized: true as const } : {}),
    });
    open = undefined;
  };
  blocks.forEach((lb, index) => {
    for (const piece of piecesOf(lb, index, limit)) {
      if (piece.oversized) { close(); add(piece); close(true); continue; }
      if (open?.texts.length && (piece.text || piece.markdown)) {
        const fits = open.textSize + SEPARATOR + charCount(piece.text) <= limit
          && open.markdownSize + SEPARATOR + charCount(piece.markdown) <= limit;
        if (!fits) close();
      }
      add(piece);
    }
  });
  close();
  // Figures after the last text go with the last chunk.
  const last = chunks[chunks.length - 1];
  if (open && last) {
    for (const p of open.boxes) {
      const box = { page: p.page, bbox: bboxOf(p.box) };
      if (!last.boxes.some((b) => b.page === box.page && b.bbox.join() === box.bbox.join())) last.boxes.push(box);
      if (!last.pages.includes(p.page)) last.pages.push(p.page);
    }
    last.pages.sort((a, b) => a - b);
    for (const k of open.blocks) if (!last.blocks.includes(k)) last.blocks.push(k);
  }
  return chunks;
}

// Turns the rows of one reading-order region into document blocks: headings, paragraphs,
// list items with nesting, code blocks and tables (a ruled table arrives as one fragment,
// from rules.ts; the others are found from column alignment, in aligned-tables.ts).
import type { Block, Fragment, Row } from './types.js';
import { drawnBox, greatestOf, joinSpans, leastOf, rowSpans, rowText, rowsOf } from './rows.js';
import { attachMarkers, BULLET, ORDERED } from './list-markers.js';
import { buildTable, findTables, type TableFound } from './aligned-tables/index.js';
import { isChartLabelRow } from './row-predicates.js';
import {
  AT_MARGIN_PT, BOLD_HEADING_MAX_CHARS, BOLD_HEADING_MAX_LINES, CODE_GAP_EM, DEEPEST_HEADING, DEFAULT_LINE_STEP_EM,
  FIGURE_LONE_LABEL_SHARE, FIGURE_MIN_LABEL_ROWS, HEADING_MAX_CHARS, ITEM_INDENT_PT, LARGE_TYPE_SHARE, LINE_STEP_MIN_EM,
  LINE_STEP_QUANTILE, MONO_ADVANCE_EM, NEST_STEP_PT, PARAGRAPH_GAP_EM, PARAGRAPH_INDENT_EM, PARAGRAPH_SHORT_LINE_EM, PARAGRAPH_STEP_EM,
  PARAGRAPH_STEP_LINES, SAME_HEADING_SIZE_PT, SAME_SIZE_PT, SIZE_CHANGE_PT,
} from './thresholds.js';

export interface DocStats {
  bodySize: number;
}

function isMonoRow(row: Row): boolean {
  return row.fragments.every((f) => f.mono) && row.fragments.some((f) => f.text.trim() !== '');
}

function codeLine(row: Row, left: number): string {
  let line = '';
  for (const f of row.fragments) {
    const cw = f.charWidth > 0 ? f.charWidth : f.size * MONO_ADVANCE_EM;
    const col = Math.max(0, Math.round((f.x0 - left) / cw));
    if (line.length < col) line += ' '.repeat(col - line.length);
    else if (line.length) line += ' ';
    line += f.text;
  }
  return line.replace(/\s+$/, '');
}

/**
 * The usual distance between baselines of body lines, to tell line breaks from paragraph
 * breaks: the LINE_STEP_QUANTILE of the steps between consecutive body-size lines.
 */
export function lineStepOf(rows: Row[], body: number): number {
  const steps: number[] = [];
  for (let k = 1; k < rows.length; k++) {
    const a = rows[k - 1]!, b = rows[k]!;
    if (Math.abs(a.size - body) < SAME_SIZE_PT && Math.abs(b.size - body) < SAME_SIZE_PT) {
      const s = b.base - a.base;
      if (s > body * LINE_STEP_MIN_EM) steps.push(s);
    }
  }
  steps.sort((a, b) => a - b);
  return steps.length ? steps[Math.floor(steps.length * LINE_STEP_QUANTILE)]! : body * DEFAULT_LINE_STEP_EM;
}

/**
 * Whether a block of lines is a heading: short, and in large type throughout, or bold at about
 * the body size on one or two lines without closing punctuation (a bold lead-in sentence or an
 * exclamation ends with one; a question may be a heading).
 */
export function isHeading(rows: Row[], text: string, body: number): boolean {
  const size = greatestOf(rows, (r) => r.size);
  const allBold = rows.every((r) => r.fragments.every((f) => f.bold));
  const big = size >= body * LARGE_TYPE_SHARE && rows.every((r) => r.size >= body * LARGE_TYPE_SHARE);
  return !!text && text.length < HEADING_MAX_CHARS && (big || (allBold && rows.length <= BOLD_HEADING_MAX_LINES && text.length < BOLD_HEADING_MAX_CHARS && !/[.,;:!]$/.test(text) && size >= body - SAME_SIZE_PT));
}

/**
 * The type size a white gap between two lines is measured in: that of the lines when both are
 * set in one size larger than the body (the lines of a title wrapped over several lines stand as
 * far apart as their own size makes them), else the body size.
 */
export function gapSizeOf(prev: Row, row: Row, body: number): number {
  return Math.abs(prev.size - row.size) < SAME_SIZE_PT ? Math.max(body, Math.min(prev.size, row.size)) : body;
}

/**
 * Whether the gap from `prev` to `row` is a paragraph break: a step well past the usual line step
 * (or the line's own size), or a wide white gap.
 */
export function breaksParagraph(prev: Row, row: Row, step: number, body: number): boolean {
  const longStep = row.base - prev.base > Math.max(step * PARAGRAPH_STEP_LINES, prev.size * PARAGRAPH_STEP_EM);
  return longStep || row.y0 - prev.y1 > gapSizeOf(prev, row, body) * PARAGRAPH_GAP_EM;
}

/** Whether the type size changes from `prev` to `row` (a heading and its text, a caption and a paragraph). */
export function changesSize(prev: Row, row: Row): boolean {
  return Math.abs(row.size - prev.size) > SIZE_CHANGE_PT;
}

/** A first-line indent: `row` starts well right of the region's left edge under a line that ended well short of where `row` ends. */
export function opensIndentedParagraph(row: Row, prev: Row | undefined, left: number, body: number): boolean {
  return row.x0 > left + body * PARAGRAPH_INDENT_EM && !!prev && prev.x1 < row.x1 - body * PARAGRAPH_SHORT_LINE_EM;
}

/** Whether a monospaced line continues the code block above it, or a wide gap starts another. */
export function continuesCode(prev: Row, row: Row, body: number): boolean {
  return !(row.y0 - prev.y1 > body * CODE_GAP_EM);
}

/**
 * The nesting depth of a list marker at `x`, with the stack of the markers' x above it: markers
 * right of `x` (by more than NEST_STEP_PT) are closed levels, a marker further right opens one.
 */
export function nestMarker(markerStack: number[], x: number): number {
  while (markerStack.length && markerStack[markerStack.length - 1]! > x + NEST_STEP_PT) markerStack.pop();
  if (!markerStack.length || markerStack[markerStack.length - 1]! < x - NEST_STEP_PT) markerStack.push(x);
  return markerStack.length - 1;
}

/**
 * Whether a run of label rows is a chart's text rather than a table of numbers: at least
 * FIGURE_MIN_LABEL_ROWS rows (an axis has three ticks or more), and a good share of them a single
 * number alone on its line (an axis tick, or a value over one bar), where every row of a table
 * holds a cell in each of its columns.
 */
export function isChartText(rows: Row[]): boolean {
  if (rows.length < FIGURE_MIN_LABEL_ROWS || !rows.every(isChartLabelRow)) return false;
  const lone = rows.filter((r) => r.fragments.length === 1 && !/\s/.test(r.fragments[0]!.text.trim())).length;
  return lone >= rows.length * FIGURE_LONE_LABEL_SHARE;
}

/** Runs of rows that are a chart's text (isChartText), as first and last row index. */
export function chartTextRuns(rows: Row[]): { start: number; end: number }[] {
  const runs: { start: number; end: number }[] = [];
  for (let k = 0; k < rows.length;) {
    if (!isChartLabelRow(rows[k]!)) { k++; continue; }
    let end = k;
    while (end + 1 < rows.length && isChartLabelRow(rows[end + 1]!)) end++;
    if (isChartText(rows.slice(k, end + 1))) runs.push({ start: k, end });
    k = end + 1;
  }
  return runs;
}

/** The rows being gathered into one block, and for a list item its depth and marker. */
interface OpenBlock { kind: 'text' | 'item' | 'code'; rows: Row[]; depth: number; ordered: boolean; marker: string; markerX: number }

/** The block gathered rows make: code with its indentation, a list item without its marker, a heading, or a paragraph. */
function closeBlock(c: OpenBlock, body: number): Block {
  if (c.kind === 'code') {
    const minX = leastOf(c.rows, (r) => r.x0);
    return { kind: 'code', lines: c.rows.map((r) => codeLine(r, minX)) };
  }
  const spans = joinSpans(c.rows.map(rowSpans));
  if (c.kind === 'item') {
    const first = spans[0];
    if (first) first.text = first.text.replace(c.ordered ? ORDERED : BULLET, '');
    return { kind: 'item', depth: c.depth, ordered: c.ordered, marker: c.marker, spans };
  }
  const text = spans.map((s) => s.text).join('').trim();
  if (isHeading(c.rows, text, body)) {
    const allBold = c.rows.every((r) => r.fragments.every((f) => f.bold));
    return { kind: 'heading', size: greatestOf(c.rows, (r) => r.size), bold: allBold, spans: spans.map((s) => ({ ...s, bold: false })), level: 0 };
  }
  return { kind: 'paragraph', spans };
}

/** Blocks of one region, in reading order. */
export function blocksOf(fragments: Fragment[], stats: DocStats): Block[] {
  const rows = rowsOf(fragments);
  if (!rows.length) return [];
  attachMarkers(rows);
  const body = stats.bodySize;
  // A chart's labels and values stay together as one paragraph, the figure's text: never
  // headings (they may be set large), never the cells of a table.
  const charts = chartTextRuns(rows);
  const chartAt = new Map(charts.map((c) => [c.start, c]));
  const tables = findTables(rows, body).filter((t) => !charts.some((c) => c.start <= t.end && c.end >= t.start));
  const tableAt = new Map<number, TableFound>();
  for (const t of tables) tableAt.set(t.start, t);
  const step = lineStepOf(rows, body);
  const left = leastOf(rows, (r) => r.x0);

  const blocks: Block[] = [];
  let current: OpenBlock | undefined;
  const markerStack: number[] = [];
  const flush = () => {
    if (current) blocks.push({ ...closeBlock(current, body), box: drawnBox(current.rows.flatMap((r) => r.fragments)) });
    current = undefined;
  };

  let prev: Row | undefined;
  for (let k = 0; k < rows.length; k++) {
    const chart = chartAt.get(k);
    if (chart) {
      flush(); markerStack.length = 0;
      const chartRows = rows.slice(chart.start, chart.end + 1);
      blocks.push({ kind: 'paragraph', spans: joinSpans(chartRows.map(rowSpans)), box: drawnBox(chartRows.flatMap((r) => r.fragments)) });
      k = chart.end;
      prev = rows[k];
      continue;
    }
    const table = tableAt.get(k);
    if (table) {
      flush(); markerStack.length = 0;
      const tableRows = rows.slice(table.start, table.end + 1);
      blocks.push({ kind: 'table', rows: buildTable(tableRows, table.columns), box: drawnBox(tableRows.flatMap((r) => r.fragments)) });
      k = table.end;
      prev = rows[k];
      continue;
    }
    const row = rows[k]!;
    const tableFragment = row.fragments.find((f) => f.table);
    if (tableFragment?.table) {
      const ruledTable = tableFragment.table;
      flush(); markerStack.length = 0;
      blocks.push({ kind: 'table', ...ruledTable, rows: ruledTable.rows.map((r) => r.map((c) => ({ ...c }))), box: drawnBox([tableFragment]) });
      prev = row;
      continue;
    }
    const text = rowText(row);
    const gapBreak = prev !== undefined && breaksParagraph(prev, row, step, body);
    const sizeBreak = prev !== undefined && changesSize(prev, row);
    if (isMonoRow(row)) {
      if (current?.kind === 'code' && continuesCode(prev!, row, body)) { current.rows.push(row); prev = row; continue; }
      flush();
      current = { kind: 'code', rows: [row], depth: 0, ordered: false, marker: '', markerX: row.x0 };
      prev = row;
      continue;
    }
    const bullet = BULLET.exec(text);
    const ordered = bullet ? null : ORDERED.exec(text);
    if ((bullet || ordered) && row.size < body * LARGE_TYPE_SHARE) {
      flush();
      const x = row.x0;
      current = { kind: 'item', rows: [row], depth: nestMarker(markerStack, x), ordered: !!ordered, marker: (bullet ?? ordered)![1]!, markerX: x };
      prev = row;
      continue;
    }
    if (current?.kind === 'item' && !gapBreak && !sizeBreak && row.x0 > current.markerX + ITEM_INDENT_PT) {
      current.rows.push(row); prev = row; continue;
    }
    if (current?.kind === 'text' && !gapBreak && !sizeBreak && !opensIndentedParagraph(row, prev, left, body)) {
      current.rows.push(row); prev = row; continue;
    }
    flush();
    if (gapBreak || row.x0 <= left + AT_MARGIN_PT) markerStack.length = 0;
    current = { kind: 'text', rows: [row], depth: 0, ordered: false, marker: '', markerX: row.x0 };
    prev = row;
  }
  flush();
  return blocks;
}

/** Heading levels for the whole document: larger type ranks higher; bold body-size headings rank last. */
export function assignHeadingLevels(blocks: Block[], bodySize: number): void {
  const sizes: number[] = [];
  for (const b of blocks) {
    if (b.kind !== 'heading' || b.size < bodySize * LARGE_TYPE_SHARE) continue;
    if (!sizes.some((s) => Math.abs(s - b.size) < SAME_HEADING_SIZE_PT)) sizes.push(b.size);
  }
  sizes.sort((a, b) => b - a);
  for (const b of blocks) {
    if (b.kind !== 'heading') continue;
    const rank = b.size < bodySize * LARGE_TYPE_SHARE ? sizes.length : sizes.findIndex((s) => Math.abs(s - b.size) < SAME_HEADING_SIZE_PT);
    b.level = Math.min(DEEPEST_HEADING, Math.max(1, rank + 1));
  }
}

// Turns the rows of one reading-order region into document blocks: headings, paragraphs,
// list items with nesting, code blocks and tables (a ruled table arrives as one fragment,
// from rules.ts; the others are found from column alignment, in aligned-tables.ts).
import type { Block, Fragment, Row } from './types.js';
import { greatestOf, joinSpans, leastOf, rowSpans, rowText, rowsOf } from './rows.js';
import { attachMarkers, BULLET, ORDERED } from './list-markers.js';
import { buildTable, findTables, type TableFound } from './aligned-tables.js';
import { AT_MARGIN_PT, BOLD_HEADING_MAX_CHARS, BOLD_HEADING_MAX_LINES, CODE_GAP_EM, DEEPEST_HEADING, DEFAULT_BODY_SIZE, DEFAULT_LINE_STEP_EM, HEADING_MAX_CHARS, ITEM_INDENT_PT, LARGE_TYPE_SHARE, LINE_STEP_MIN_EM, LINE_STEP_QUANTILE, MONO_ADVANCE_EM, NEST_STEP_PT, PARAGRAPH_GAP_EM, PARAGRAPH_INDENT_EM, PARAGRAPH_SHORT_LINE_EM, PARAGRAPH_STEP_EM, PARAGRAPH_STEP_LINES, SAME_HEADING_SIZE_PT, SAME_SIZE_PT, SIZE_CHANGE_PT } from './thresholds.js';

export interface DocStats {
  bodySize: number;
}

/**
 * The font size of the body text. Each piece weighs its length squared: lines of running text
 * are long and table cells short, so a table set in smaller type that holds as many characters
 * as the prose around it does not make its size the body's.
 */
export function bodySizeOf(fragments: Fragment[]): number {
  const weight = new Map<number, number>();
  for (const f of fragments) {
    const s = Math.round(f.size * 2) / 2;
    weight.set(s, (weight.get(s) ?? 0) + f.text.length * f.text.length);
  }
  let best = DEFAULT_BODY_SIZE, count = -1;
  for (const [s, w] of weight) if (w > count) { best = s; count = w; }
  return best;
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

/** Blocks of one region, in reading order. */
export function blocksOf(fragments: Fragment[], stats: DocStats): Block[] {
  const rows = rowsOf(fragments);
  if (!rows.length) return [];
  attachMarkers(rows);
  const body = stats.bodySize;
  const tables = findTables(rows, body);
  const tableAt = new Map<number, TableFound>();
  for (const t of tables) tableAt.set(t.start, t);

  // The usual distance between baselines of body lines, to tell line breaks from paragraph breaks.
  const steps: number[] = [];
  for (let k = 1; k < rows.length; k++) {
    const a = rows[k - 1]!, b = rows[k]!;
    if (Math.abs(a.size - body) < SAME_SIZE_PT && Math.abs(b.size - body) < SAME_SIZE_PT) {
      const s = b.base - a.base;
      if (s > body * LINE_STEP_MIN_EM) steps.push(s);
    }
  }
  steps.sort((a, b) => a - b);
  const step = steps.length ? steps[Math.floor(steps.length * LINE_STEP_QUANTILE)]! : body * DEFAULT_LINE_STEP_EM;
  const left = leastOf(rows, (r) => r.x0);

  const blocks: Block[] = [];
  let current: { kind: 'text' | 'item' | 'code'; rows: Row[]; depth: number; ordered: boolean; marker: string; markerX: number } | undefined;
  const markerStack: number[] = [];

  const flush = () => {
    if (!current) return;
    const c = current; current = undefined;
    if (c.kind === 'code') {
      const minX = leastOf(c.rows, (r) => r.x0);
      blocks.push({ kind: 'code', lines: c.rows.map((r) => codeLine(r, minX)) });
      return;
    }
    const spans = joinSpans(c.rows.map(rowSpans));
    if (c.kind === 'item') {
      const first = spans[0];
      if (first) first.text = first.text.replace(c.ordered ? ORDERED : BULLET, '');
      blocks.push({ kind: 'item', depth: c.depth, ordered: c.ordered, marker: c.marker, spans });
      return;
    }
    const text = spans.map((s) => s.text).join('').trim();
    const size = greatestOf(c.rows, (r) => r.size);
    const allBold = c.rows.every((r) => r.fragments.every((f) => f.bold));
    const big = size >= body * LARGE_TYPE_SHARE && c.rows.every((r) => r.size >= body * LARGE_TYPE_SHARE);
    if (text && text.length < HEADING_MAX_CHARS && (big || (allBold && c.rows.length <= BOLD_HEADING_MAX_LINES && text.length < BOLD_HEADING_MAX_CHARS && !/[.,;:]$/.test(text) && size >= body - SAME_SIZE_PT))) {
      blocks.push({ kind: 'heading', size, bold: allBold, spans: spans.map((s) => ({ ...s, bold: false })), level: 0 });
    } else {
      blocks.push({ kind: 'paragraph', spans });
    }
  };

  let prev: Row | undefined;
  for (let k = 0; k < rows.length; k++) {
    const table = tableAt.get(k);
    if (table) {
      flush(); markerStack.length = 0;
      blocks.push({ kind: 'table', rows: buildTable(rows.slice(table.start, table.end + 1), table.columns) });
      k = table.end;
      prev = rows[k];
      continue;
    }
    const row = rows[k]!;
    const ruledTable = row.fragments.find((f) => f.table)?.table;
    if (ruledTable) {
      flush(); markerStack.length = 0;
      blocks.push({ kind: 'table', ...ruledTable, rows: ruledTable.rows.map((r) => r.map((c) => ({ ...c }))) });
      prev = row;
      continue;
    }
    const text = rowText(row);
    const delta = prev ? row.base - prev.base : 0;
    const gapBreak = prev !== undefined && (delta > Math.max(step * PARAGRAPH_STEP_LINES, prev.size * PARAGRAPH_STEP_EM) || row.y0 - prev.y1 > body * PARAGRAPH_GAP_EM);
    const sizeBreak = prev !== undefined && Math.abs(row.size - prev.size) > SIZE_CHANGE_PT;
    if (isMonoRow(row)) {
      if (current?.kind === 'code' && !(row.y0 - prev!.y1 > body * CODE_GAP_EM)) { current.rows.push(row); prev = row; continue; }
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
      while (markerStack.length && markerStack[markerStack.length - 1]! > x + NEST_STEP_PT) markerStack.pop();
      if (!markerStack.length || markerStack[markerStack.length - 1]! < x - NEST_STEP_PT) markerStack.push(x);
      current = { kind: 'item', rows: [row], depth: markerStack.length - 1, ordered: !!ordered, marker: (bullet ?? ordered)![1]!, markerX: x };
      prev = row;
      continue;
    }
    if (current?.kind === 'item' && !gapBreak && !sizeBreak && row.x0 > current.markerX + ITEM_INDENT_PT) {
      current.rows.push(row); prev = row; continue;
    }
    if (current?.kind === 'text' && !gapBreak && !sizeBreak && !(row.x0 > left + body * PARAGRAPH_INDENT_EM && prev && prev.x1 < row.x1 - body * PARAGRAPH_SHORT_LINE_EM)) {
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

// A table row cut by a column break: the rest of the row, or label rows carried into the next
// column, moved back under the table they belong to.
import type { Fragment, Row } from '../types.js';
import { findTables, rowStepLimit } from './find.js';
import { isCellRow } from '../row-predicates.js';
import { greatestOf, leastOf, rowsOf } from '../rows.js';
import {
  CELL_ALIGN_PT, CUT_ROW_MIN_FRAGMENTS, LABEL_ROWS_UNDER_HEADER, MAX_ROWS_UP, MOVED_ROW_STEP_LINES, MOVED_ROW_STEPS_SEEN, NEXT_COLUMN_SHARE,
  SIZE_CHANGE_PT, WRAPPED_GAP_EM,
} from '../thresholds.js';

/**
 * A table row cut off from its table by a column break: the first row of a text column whose
 * fragments start where the fragments of the last row of the column before start, shifted by the
 * distance between the two columns (at least three of them: a line of prose has one fragment).
 * That row (with the lines of its wrapped cells under it) is moved, shifted back, under the
 * last row of the column before, so that a header left at the foot of a column and its rows
 * at the top of the next (or a table of one row on each side) read as one table. Returns the
 * regions as they are when no row is cut so.
 */
export function joinRowsAcrossColumnBreaks(regions: Fragment[][], bodySize: number): Fragment[][] {
  const out = regions.slice();
  for (let k = 0; k + 1 < out.length; k++) {
    let a = rowsOf(out[k]!), b = rowsOf(out[k + 1]!);
    if (a.length < 2 || !b.length || holdsDrawnTable(a[a.length - 1]!) || holdsDrawnTable(b[0]!)) continue;
    const offset = leastOf(b, (r) => r.x0) - leastOf(a, (r) => r.x0);
    if (!isNextColumn(a, b, offset)) continue;
    if (b[0]!.fragments.length === 1) {
      if (moveLabelRows(out, k, a, b, offset, bodySize)) continue;
      if (!moveRestOfCutRow(out, k, a, b, offset)) continue;
      a = rowsOf(out[k]!); b = rowsOf(out[k + 1]!);
    }
    const m = lastTableRow(a), head = a[m], first = b[0];
    if (!head || !first || first.fragments.length < CUT_ROW_MIN_FRAGMENTS || !cellsStartAlike(head, first, offset)) continue;
    const n = 1 + linesGoingWith(b, first);
    const dy = a[a.length - 1]!.base + movedRowStep(a, m) - first.base;
    moveRows(out, k, b.slice(0, n), offset, dy);
  }
  return out;
}

/**
 * Label rows of a table carried into the next column: rows whose cells right of the first are
 * empty (a form's labels), the table at the foot of the column before (findTables, reaching its
 * last line) being a header alone or already holding such rows. The next column opens with
 * single lines in the table's type size, each starting where its first column does and ending
 * before its second (shifted back by the column pitch), stepping as rows may (rowStepLimit);
 * they are moved under the table a row step
 * below (its widest step, or theirs). A header alone takes LABEL_ROWS_UNDER_HEADER of them at
 * least: one short line after a table is more likely a note than a row.
 */
function moveLabelRows(out: Fragment[][], k: number, a: Row[], b: Row[], offset: number, bodySize: number): boolean {
  const table = findTables(a, bodySize).find((t) => t.end === a.length - 1);
  if (!table || table.columns.length < 2) return false;
  const [first, second] = [table.columns[0]!, table.columns[1]!];
  const inFirstColumn = (r: Row, dx: number) =>
    r.fragments.every((f) => f.x1 - dx <= second.x0 + CELL_ALIGN_PT) && Math.abs(r.x0 - dx - first.x0) <= CELL_ALIGN_PT;
  const rows = a.slice(table.start, table.end + 1);
  const size = rows[0]!.size;
  let step = 0;
  for (let r = 1; r < rows.length; r++) step = Math.max(step, rows[r]!.base - rows[r - 1]!.base);
  let n = 0;
  while (n < b.length && b[n]!.fragments.length === 1 && inFirstColumn(b[n]!, offset) && Math.abs(b[n]!.size - size) <= SIZE_CHANGE_PT
    && (n === 0 || b[n]!.base - b[n - 1]!.base <= rowStepLimit(step, b[n]!.size))) n++;
  const hasLabels = rows.slice(1).some((r) => !isCellRow(r) && inFirstColumn(r, 0));
  if (!n || (!hasLabels && n < LABEL_ROWS_UNDER_HEADER)) return false;
  for (let r = 1; r < n; r++) step = Math.max(step, b[r]!.base - b[r - 1]!.base);
  moveRows(out, k, b.slice(0, n), offset, a[a.length - 1]!.base + step - b[0]!.base);
  return true;
}

/** A drawn table's stand-in among a row's fragments: a drawn table is never cut across a column break here (rules.ts joins its halves). */
function holdsDrawnTable(row: Row): boolean {
  return row.fragments.some((f) => f.table);
}

/**
 * The next column: to the right by NEXT_COLUMN_SHARE of this column's width at least (`offset`
 * apart), and starting above where this one ends.
 */
function isNextColumn(a: Row[], b: Row[], offset: number): boolean {
  return offset >= (greatestOf(a, (r) => r.x1) - leastOf(a, (r) => r.x0)) * NEXT_COLUMN_SHARE && b[0]!.y0 <= a[a.length - 1]!.y0;
}

/**
 * Whether the first row of the next column continues the table whose last row is `head`: every
 * fragment of the row with fewer fragments starts, within CELL_ALIGN_PT, where a fragment of the other
 * starts, the next column shifted back by `offset`.
 */
function cellsStartAlike(head: Row, first: Row, offset: number): boolean {
  const [fewer, more] = head.fragments.length <= first.fragments.length
    ? [head.fragments, first.fragments.map((f) => f.x0 - offset)]
    : [first.fragments.map((f) => ({ x0: f.x0 - offset })), head.fragments.map((f) => f.x0)];
  return fewer.every((f) => more.some((x) => Math.abs(x - f.x0) <= CELL_ALIGN_PT));
}

/** Whether a fragment starts at one of the cell starts and ends by the next one (both within CELL_ALIGN_PT). */
function inCellOf(starts: readonly number[], f: Fragment): boolean {
  return starts.some((x, c) => {
    const next = starts[c + 1];
    return Math.abs(f.x0 - x) <= CELL_ALIGN_PT && (next === undefined || f.x1 <= next + CELL_ALIGN_PT);
  });
}

/**
 * How many lines under the moved row go with it: while each is packed under the one before
 * (WRAPPED_GAP_EM) and its fragments each start where one of the row's fragments does and end before
 * the next one starts (its wrapped cells, and the rows after it in the same columns); a line of
 * prose after the table runs across them.
 */
function linesGoingWith(b: Row[], first: Row): number {
  const starts = first.fragments.map((f) => f.x0);
  const inCell = (f: Fragment) => inCellOf(starts, f);
  let n = 1;
  while (n < b.length && b[n]!.y0 - b[n - 1]!.y1 <= b[n]!.size * WRAPPED_GAP_EM && b[n]!.fragments.every(inCell)) n++;
  return n - 1;
}

/**
 * The step a moved row is placed at below the column's last line: the widest of the steps into
 * the table's last MOVED_ROW_STEPS_SEEN rows, and into each of its rows of CUT_ROW_MIN_FRAGMENTS
 * cells or more (from the line above, in the table too: each of its fragments within a cell), and
 * MOVED_ROW_STEP_LINES of its last row's height at least. The last row's cells may wrap over
 * many lines, all a line step apart; a step into a row of cells higher up shows the row pitch.
 */
function movedRowStep(a: Row[], m: number): number {
  const head = a[m]!;
  let step = (head.y1 - head.y0) * MOVED_ROW_STEP_LINES;
  for (let r = Math.max(1, m - MOVED_ROW_STEPS_SEEN + 1); r <= m; r++) step = Math.max(step, a[r]!.base - a[r - 1]!.base);
  const starts = [head.x0, ...cellStarts(a, m)].sort((p, q) => p - q);
  const inCells = (row: Row) => row.fragments.every((f) => inCellOf(starts, f));
  for (let r = m; r >= 1 && m - r < MAX_ROWS_UP && inCells(a[r - 1]!); r--) {
    if (a[r]!.fragments.length >= CUT_ROW_MIN_FRAGMENTS) step = Math.max(step, a[r]!.base - a[r - 1]!.base);
  }
  return step;
}

/**
 * Moves rows from the top of region k + 1 to region k, shifted back by the column pitch and down
 * by dy; each fragment keeps where it was drawn (drawnAt), so the boxes given for cells and
 * blocks (drawnBox) stay where the page shows them.
 */
function moveRows(out: Fragment[][], k: number, rows: Row[], offset: number, dy: number): void {
  const moved = new Set(rows.flatMap((r) => r.fragments));
  const shifted = (f: Fragment): Fragment =>
    ({ ...f, x0: f.x0 - offset, x1: f.x1 - offset, y0: f.y0 + dy, y1: f.y1 + dy, drawnAt: f.drawnAt ?? [f.x0, f.y0, f.x1, f.y1] });
  out[k] = out[k]!.concat([...moved].map(shifted));
  out[k + 1] = out[k + 1]!.filter((f) => !moved.has(f));
}

/**
 * The index of the last table row of a column's rows: the last row of three or more fragments,
 * with nothing under it but the wrapped lines of its cells after the first; -1 if none.
 */
function lastTableRow(a: Row[]): number {
  let m = a.length - 1;
  while (m >= 0 && a[m]!.fragments.length < CUT_ROW_MIN_FRAGMENTS) m--;
  if (m < 0 || a.length - m > MAX_ROWS_UP) return -1;
  const starts = cellStarts(a, m);
  const under = a.slice(m + 1).every((r) => r.fragments.every((f) => starts.some((s) => Math.abs(s - f.x0) <= CELL_ALIGN_PT)));
  return under ? m : -1;
}

/**
 * Where the cells after the first start in the table whose last row is `a[m]`: the starts of
 * its rows of three or more fragments, up to that row (a cell left empty in the last row, its text
 * all carried on in the next column, still starts where the rows above have it).
 */
function cellStarts(a: Row[], m: number): number[] {
  const first = a[m]!.x0;
  const starts: number[] = [];
  for (let r = m; r >= 0 && m - r < MAX_ROWS_UP; r--) {
    if (a[r]!.fragments.length < CUT_ROW_MIN_FRAGMENTS) continue;
    if (Math.abs(a[r]!.x0 - first) > CELL_ALIGN_PT) break;
    for (const f of a[r]!.fragments.slice(1)) if (!starts.some((s) => Math.abs(s - f.x0) <= CELL_ALIGN_PT)) starts.push(f.x0);
  }
  return starts;
}

/**
 * The rest of a row cut by a column break: single lines at the top of the next column, each
 * starting (shifted back by the column pitch) where a cell other than the first of the
 * column's last table row starts, while that row's wrapped lines run on at the foot of the
 * column before. They are moved under those lines, a line step below, as the rest of their
 * cells; a cell the break left empty in its row has all its text over there, and its lines go
 * onto the row's own line. The first column is left out: prose at the top of the next column
 * starts there.
 */
function moveRestOfCutRow(out: Fragment[][], k: number, a: Row[], b: Row[], offset: number): boolean {
  const m = lastTableRow(a);
  if (m < 0) return false;
  const starts = cellStarts(a, m);
  const atStart = (x: number) => starts.some((s) => Math.abs(s - x) <= CELL_ALIGN_PT);
  let n = 0;
  while (n < b.length && b[n]!.fragments.length === 1 && atStart(b[n]!.x0 - offset)
    && (n === 0 || b[n]!.y0 - b[n - 1]!.y1 <= b[n]!.size * WRAPPED_GAP_EM)) n++;
  if (!n) return false;
  const last = a[a.length - 1]!;
  const lineStep = a.length - m > 1 ? last.base - a[a.length - 2]!.base : (last.y1 - last.y0) * WRAPPED_GAP_EM;
  const x = b[0]!.x0 - offset;
  const emptyCell = !a.slice(m).some((r) => r.fragments.some((f) => Math.abs(f.x0 - x) <= CELL_ALIGN_PT));
  const dy = (emptyCell ? a[m]!.base : last.base + lineStep) - b[0]!.base;
  moveRows(out, k, b.slice(0, n), offset, dy);
  return true;
}

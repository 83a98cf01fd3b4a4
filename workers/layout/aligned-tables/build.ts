// A table found from alignment, built into cells: its lines grouped into logical rows (a cell's
// wrapped lines are one row), then placed in its columns (table-cells.ts).
import type { Cell, Row } from '../types.js';
import { cellsOfRows } from '../table-cells.js';
import { ROW_STEP_LINES, ROW_STEP_SLACK_PT, TABLE_LINE_STEP_EM, WRAPPED_ROW_MIN_LINES } from '../thresholds.js';

export function buildTable(rows: Row[], columns: { x0: number; x1: number }[]): Cell[][] {
  return cellsOfRows(logicalRows(rows, columns), columns);
}

/** Rows of a table: visual rows closer than the usual line step belong to one logical row. */
export function logicalRows(rows: Row[], columns: { x0: number; x1: number }[]): Row[][] {
  const steps: number[] = [];
  for (let k = 1; k < rows.length; k++) steps.push(stepFromAbove(rows, k));
  // The line step inside a cell: the smallest of the steps that are at least a line apart
  // (cells centred vertically can put lines closer than that). One wrapped header cell is
  // enough to show it, so no quantile.
  const real = steps.filter((s, k) => s >= rows[k + 1]!.size * TABLE_LINE_STEP_EM).sort((a, b) => a - b);
  const lineStep = real.length ? real[0]! : 0;
  const bimodal = real.some((s) => s > lineStep * ROW_STEP_LINES + ROW_STEP_SLACK_PT);
  if (!bimodal && oneWrappedRow(rows, columns)) return [rows];
  const groups: Row[][] = [];
  rows.forEach((row, k) => {
    // Whether the table has two spacings at all is read from the baselines; which one a line
    // follows, from the cell it continues.
    if (k === 0 || !bimodal || stepBetween(rows[k - 1]!, row) > lineStep * ROW_STEP_LINES + ROW_STEP_SLACK_PT) groups.push([row]);
    else groups[groups.length - 1]!.push(row);
  });
  return groups;
}

/**
 * The step down to row `k` from the nearest line above that has a fragment over one of its fragments
 * (the line before in the same column): the smallest such step over its fragments. Cells set at
 * different heights (a header cell centred beside cells of two lines) put lines of different
 * cells between the lines of one, closer than any line step; without a fragment above, the step
 * from the row before.
 */
export function stepFromAbove(rows: Row[], k: number): number {
  let best = Infinity;
  for (const f of rows[k]!.fragments) {
    for (let j = k - 1; j >= 0; j--) {
      const over = rows[j]!.fragments.find((g) => f.x0 < g.x1 && f.x1 > g.x0);
      if (over) { if (f.y1 - over.y1 > 0) best = Math.min(best, f.y1 - over.y1); break; }
    }
  }
  return Number.isFinite(best) ? best : rows[k]!.base - rows[k - 1]!.base;
}

/**
 * The step from one visual row to the next, taken where a fragment of the lower row sits right
 * under a fragment of the upper one (the next line of the same cell): a row's baseline comes from
 * one of its fragments, and in a header whose cells start at different heights (a cell spanning
 * rows beside cells of a second header row) that fragment may belong to another cell than the
 * one the lower line continues. Without a fragment above, the rows' baselines.
 */
function stepBetween(upper: Row, lower: Row): number {
  let best = Infinity;
  for (const f of lower.fragments) for (const g of upper.fragments) {
    if (f.x0 < g.x1 && f.x1 > g.x0) best = Math.min(best, f.y1 - g.y1);
  }
  return Number.isFinite(best) && best > 0 ? best : lower.base - upper.base;
}

/**
 * Whether evenly spaced lines are one row whose cells wrap rather than rows of one line each:
 * the first line fills every column, each column's text runs down from the top without a gap
 * (cells aligned to the top end at different lines), and the first column ends before the
 * last line. Rows of their own would each start with a label in the first column; a row cut
 * off by a page break (the rest of a row from the page before) looks the same.
 */
export function oneWrappedRow(rows: Row[], columns: { x0: number; x1: number }[]): boolean {
  if (rows.length < WRAPPED_ROW_MIN_LINES || columns.length < 2) return false;
  const filled = rows.map((r) => columns.map((c) => r.fragments.some((f) => f.x0 < c.x1 && f.x1 > c.x0)));
  if (!filled[0]!.every(Boolean)) return false;
  const depth = columns.map((_, c) => {
    let n = 0;
    while (n < rows.length && filled[n]![c]) n++;
    // Text again below a gap in the column: a new row.
    return filled.slice(n).some((f) => f[c]) ? -1 : n;
  });
  return depth.every((d) => d > 0) && depth[0]! < rows.length;
}

// Reading regions: tables carried on from one column into the next, or too wide for their column.
// A table's overrun, its carried-on part and drawn tables beside or across a gutter keep the page's
// columns (the table's own gutters make none).
import type { Fragment, Row } from '../types.js';
import { onBaselineOf, textBeside, type Box, type Gutter } from './box.js';
import { leastOf, rowsOf } from '../rows.js';
import {
  CARRIED_MIN_ROWS, CARRIED_MOVED_SHARE, CARRIED_OWN_ROWS_SHARE, CARRIED_TOP_LINES, COLUMN_PITCH_MAX_SHARE, COLUMN_PITCH_MIN_SHARE,
  COLUMN_START_PT, OVERRUN_MIN_ROWS, OVERRUN_PT, OWN_BASELINE_PT, SAME_TABLE_WIDTH_PT, SHORT_FRAGMENT_SHARE,
} from '../thresholds.js';

/**
 * A short fragment: narrower than SHORT_FRAGMENT_SHARE of the region's width. Cells, labels and list
 * entries are short; a line of running text is not, and it blocks any gutter it runs over.
 */
export function isShortFragment(f: Fragment, width: number): boolean {
  return f.x1 - f.x0 < width * SHORT_FRAGMENT_SHARE;
}

/**
 * Short fragments that continue a line begun further left (a table cell after another).
 * A table a little too wide for its text column spills such cells into the gutter; a few
 * of them must not hide the gutter.
 */
export function continuingCells(fragments: Fragment[], width: number): Set<Fragment> {
  const out = new Set<Fragment>();
  for (const row of rowsOf(fragments)) {
    for (let k = 1; k < row.fragments.length; k++) {
      const f = row.fragments[k]!;
      if (isShortFragment(f, width)) out.add(f);
    }
  }
  return out;
}

/**
 * Whether the right side of a cut is the left side's table carried on in the next column. A
 * column holding only a table shows no gutter of running text, but the carried-on part keeps
 * the table's cell positions moved by the column pitch (about half the page), and each side
 * opens its rows (lines of two or more cells, the first in the table's first column) on
 * baselines of its own, where the two halves of one wide table open each row on one baseline.
 * Both columns are filled from the top.
 */
export function continuedInNextColumn(left: Fragment[], right: Fragment[], pageWidth: number): boolean {
  const a = rowsOf(left), b = rowsOf(right);
  if (a.length < CARRIED_MIN_ROWS || b.length < CARRIED_MIN_ROWS) return false;
  const lineHeight = Math.max(a[0]!.y1 - a[0]!.y0, b[0]!.y1 - b[0]!.y0);
  if (Math.abs(a[0]!.y0 - b[0]!.y0) > lineHeight * CARRIED_TOP_LINES) return false;
  const ownRowsOpen = (rows: Row[], other: Row[]) => {
    const cellRows = rows.filter((r) => r.fragments.length >= 2);
    const firstColumn = leastOf(cellRows, (r) => r.x0);
    const opening = cellRows.filter((r) => r.x0 <= firstColumn + COLUMN_START_PT);
    const shared = onBaselineOf(other, OWN_BASELINE_PT);
    const apart = opening.filter((r) => !shared(r)).length;
    return opening.length >= 2 && apart >= opening.length * CARRIED_OWN_ROWS_SHARE;
  };
  if (!ownRowsOpen(a, b) || !ownRowsOpen(b, a)) return false;
  const from = startsOf1pt(left), to = startsOf1pt(right);
  const pitch = columnPitch(from, to, pageWidth);
  if (pitch === undefined) return false;
  const moved = to.filter(movedBy(from, pitch)).length;
  return moved >= 2 && moved >= to.length * CARRIED_MOVED_SHARE;
}

/** Where fragments start, in whole points, each point once. */
function startsOf1pt(side: Fragment[]): number[] {
  return [...new Set(side.map((f) => Math.round(f.x0)))];
}

/**
 * The column pitch (between COLUMN_PITCH_MIN_SHARE and COLUMN_PITCH_MAX_SHARE of the page) that
 * moves the most of the starts `to` onto the starts `from` (whole points, one either way),
 * counted over every pair of starts in one pass; undefined when no pair is a pitch apart.
 */
export function columnPitch(from: number[], to: number[], pageWidth: number): number | undefined {
  const pairs = new Map<number, number>();
  for (const l of from) {
    for (const r of to) {
      const pitch = r - l;
      if (isColumnPitch(pitch, pageWidth)) pairs.set(pitch, (pairs.get(pitch) ?? 0) + 1);
    }
  }
  let pitch = 0, most = 0;
  for (const p of pairs.keys()) {
    const n = (pairs.get(p - 1) ?? 0) + pairs.get(p)! + (pairs.get(p + 1) ?? 0);
    if (n > most) { most = n; pitch = p; }
  }
  return most ? pitch : undefined;
}

/** Whether a start (in whole points) is one of `from` moved by `pitch`, a point either way. */
function movedBy(from: number[], pitch: number): (x: number) => boolean {
  const set = new Set(from);
  return (x) => [-1, 0, 1].some((d) => set.has(x - pitch + d));
}

/**
 * A table too wide for its column and carried on into the next: its last columns overrun the
 * next column's first ones, so no strip is free of starts. The next column's part still keeps
 * the table's cell starts moved by the column pitch: the fragments starting one pitch right of
 * another start are that part (`moved`), the others the left column's, overrun included. Taken
 * only when the left part overruns the right one (OVERRUN_MIN_ROWS rows opened left of the right
 * part have cells starting past its edge) and the two parts are a table carried on
 * (continuedInNextColumn).
 */
export function carriedOverOverrun(fragments: Fragment[], pageWidth: number): Gutter | undefined {
  const starts = startsOf1pt(fragments.filter((f) => !f.table));
  const pitch = columnPitch(starts, starts, pageWidth);
  if (pitch === undefined) return undefined;
  const isMoved = movedBy(starts, pitch);
  const moved = new Set(fragments.filter((f) => !f.table && isMoved(Math.round(f.x0))));
  if (!moved.size) return undefined;
  const left = fragments.filter((f) => !moved.has(f)), right = [...moved];
  const edge = leastOf(right, (f) => f.x0);
  // The left part overruns the right one: rows opened left of its edge have cells past it.
  const overrunning = rowsOf(left).filter((r) => r.x0 < edge && r.fragments.some((f) => f.x0 >= edge));
  if (overrunning.length < OVERRUN_MIN_ROWS) return undefined;
  if (!continuedInNextColumn(left, right, pageWidth)) return undefined;
  return { x: edge, carriedOn: true, moved };
}

/**
 * Whether a drawn table crossing the cut is set across both columns, so that there is no cut:
 * it reaches halfway or more into the right column (which ends at `right`), or nothing of the
 * right column runs beside it: no text, and no drawn table starting where it ends (within
 * OVERRUN_PT) or moved from it by a column pitch (the part of a table carried on into the next
 * column). Otherwise it overruns the
 * left column only.
 */
export function tableSetAcross(fragments: Fragment[], cut: number, right: number, pageWidth: number): boolean {
  const crossing = fragments.filter((t) => t.table && t.x0 < cut && t.x1 > cut);
  if (!crossing.length) return false;
  const besideText = textBeside(fragments.filter((f) => f.x0 >= cut && !f.table));
  const tablesRight = fragments.filter((f) => f.table && f.x0 >= cut);
  const besideTable = (t: Fragment) =>
    textBeside(tablesRight.filter((f) => f.x0 >= t.x1 - OVERRUN_PT || movedByColumnPitch(t, f, pageWidth)))(t);
  return crossing.some((t) => t.x1 >= cut + (right - cut) / 2 || !(besideText(t) || besideTable(t)));
}

/**
 * Drawn tables on both sides of a cut, those on the left ending where those on the right start
 * (within OVERRUN_PT) or before, or the right one the left one moved by a column pitch (between
 * COLUMN_PITCH_MIN_SHARE and COLUMN_PITCH_MAX_SHARE of the page, as wide within
 * SAME_TABLE_WIDTH_PT): a table carried on into the next column, its two parts read one after the
 * other, though the left one overruns its column's gutter, even under the right one's first cells.
 */
export function tablesSideBySide(left: Fragment[], right: Fragment[], pageWidth: number): boolean {
  const l = left.filter((f) => f.table), r = right.filter((f) => f.table);
  if (!l.length || !r.length) return false;
  const leftEndsFirst = Math.max(...l.map((t) => t.x1)) <= leastOf(r, (t) => t.x0) + OVERRUN_PT;
  return leftEndsFirst || l.some((a) => r.some((b) => movedByColumnPitch(a, b, pageWidth)));
}

/** Whether box b is box a moved right by one column pitch, as wide within SAME_TABLE_WIDTH_PT. */
function movedByColumnPitch(a: Box, b: Box, pageWidth: number): boolean {
  return isColumnPitch(b.x0 - a.x0, pageWidth) && Math.abs(b.x1 - b.x0 - (a.x1 - a.x0)) <= SAME_TABLE_WIDTH_PT;
}

/** Whether a step across the page is as far as from one column to the next (a share of the page's width). */
function isColumnPitch(pitch: number, pageWidth: number): boolean {
  return pitch >= pageWidth * COLUMN_PITCH_MIN_SHARE && pitch <= pageWidth * COLUMN_PITCH_MAX_SHARE;
}

/**
 * A drawn table on one side of an empty strip, and text or another table on the other: a table
 * set in a column beside the other column (one fragment, a drawn table is never cut by a gutter, nor
 * are its rows read across the strip), as when a table carried over a column break leaves its
 * first rows at the foot of one column and the rest at the top of the next.
 */
export function drawnTableBeside(left: Fragment[], right: Fragment[]): boolean {
  return left.length > 0 && right.length > 0 && (left.some((f) => f.table) || right.some((f) => f.table));
}

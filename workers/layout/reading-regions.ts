// Reading order of a page: a recursive XY cut into bands and text columns; the fragments
// of each region are read top to bottom. A table's own gutters do not make columns.
import type { Fragment, Row } from './types.js';
import { leastOf, rowsOf } from './rows.js';
import { bodySizeOf, isChartLabelRow } from './structure.js';
import { isCellRow } from './aligned-tables.js';
import { ACROSS_HEADING_CLEAR_EM, BAND_GAP_PT, HEADING_MAX_CHARS, LARGE_TYPE_SHARE, CARRIED_MIN_ROWS, CARRIED_MOVED_SHARE, CARRIED_OWN_ROWS_SHARE, CARRIED_TOP_LINES, COLUMN_FILL_SHARE, COLUMN_PITCH_MAX_SHARE, COLUMN_PITCH_MIN_SHARE, COLUMN_START_PT, EDGE_ALIGN_PT, EDGE_CROSSING_SHARE, EDGE_MIN_PIECES, EDGE_OPENS_SHARE, FULL_LINE_SHARE, GUTTER_CANDIDATES, GUTTER_FROM_SHARE, GUTTER_TO_SHARE, LINES_APART_SHARE, MAX_CUT_DEPTH, MIDDLE_CLEARANCE_PT, MIN_COLUMNS_WIDTH_SHARE, MIN_COLUMN_PIECES, MIN_GUTTER_PT, MIN_SIDE_ROWS, MIN_SIDE_SHARE, OTHER_COLUMN_FILL_SHARE, OVERRUN_MIN_ROWS, OVERRUN_PT, OWN_BASELINE_PT, SAME_BASELINE_PT, SAME_TABLE_WIDTH_PT, SAME_SIZE_PT, SHARED_BASELINE_PT, SHORT_PIECE_SHARE, SPILL_CROSSING_MIN, SPILL_CROSSING_SHARE, TABLE_SIDE_SHARE, TABLE_SIDE_SHARED_SHARE, WHOLE_PAGE_PROSE_LINES } from './thresholds.js';

export interface Box { x0: number; x1: number; y0: number; y1: number }

/**
 * A column cut at `x`; `carriedOn` when the right column holds the rest of the left column's
 * table; `moved`, the pieces of the right column when the left column's overrun them (others
 * right of `x` are the left column's).
 */
export interface Gutter { x: number; carriedOn: boolean; moved?: Set<Fragment> }

export function bounds(fragments: Fragment[]): Box {
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const f of fragments) {
    if (f.x0 < x0) x0 = f.x0; if (f.x1 > x1) x1 = f.x1;
    if (f.y0 < y0) y0 = f.y0; if (f.y1 > y1) y1 = f.y1;
  }
  return { x0, x1, y0, y1 };
}

/**
 * A short piece: narrower than SHORT_PIECE_SHARE of the region's width. Cells, labels and list
 * entries are short; a line of running text is not, and it blocks any gutter it runs over.
 */
export function isShortPiece(f: Fragment, width: number): boolean {
  return f.x1 - f.x0 < width * SHORT_PIECE_SHARE;
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
      if (isShortPiece(f, width)) out.add(f);
    }
  }
  return out;
}

/** Vertical strips at least MIN_GUTTER_PT wide, away from the edges, where `open(x)` holds; nearest the middle first. */
export function stripsWhere(cells: number, open: (x: number) => boolean): { from: number; to: number }[] {
  const strips: { from: number; to: number }[] = [];
  let runFrom = -1;
  for (let x = 0; x <= cells; x++) {
    if (x < cells && open(x)) { if (runFrom < 0) runFrom = x; continue; }
    if (runFrom >= 0) {
      const mid = (runFrom + x) / 2;
      if (x - runFrom >= MIN_GUTTER_PT && mid > cells * GUTTER_FROM_SHARE && mid < cells * GUTTER_TO_SHARE) strips.push({ from: runFrom, to: x });
      runFrom = -1;
    }
  }
  return strips.sort((a, b) => Math.abs((a.from + a.to) / 2 - cells / 2) - Math.abs((b.from + b.to) / 2 - cells / 2));
}

/**
 * The two sides of a column cut. A piece reads on the side where it starts (a cell spilling over
 * the gutter stays left), except the cells of a table too wide for the left column that start
 * past the gutter: short pieces on the baseline of a row of the left side's table (a line of
 * two or more cells, in the same type size, that overruns its column) are that row's further
 * cells, not the right column's text, whose lines are long and have baselines of their own. A
 * table that fits its column has no cells over there, and a table carried on in the next
 * column has its further rows there, not cells of the left side's rows.
 */
export function sides(fragments: Fragment[], { x: cut, carriedOn, moved }: Gutter, width: number): [Fragment[], Fragment[]] {
  if (moved) return [fragments.filter((f) => !moved.has(f)), fragments.filter((f) => moved.has(f))];
  const left: Fragment[] = [], right: Fragment[] = [];
  for (const f of fragments) (f.x0 < cut ? left : right).push(f);
  if (!left.length || !right.length || carriedOn) return [left, right];
  // Where the two columns' running text ends and starts (without any, a band holding only the
  // table, every row may run on).
  let textEnd = -Infinity, textStart = Infinity;
  for (const f of left) if (!isShortPiece(f, width)) textEnd = Math.max(textEnd, f.x1);
  for (const f of right) if (!isShortPiece(f, width)) textStart = Math.min(textStart, f.x0);
  const short = (f: Fragment) => isShortPiece(f, width);
  const onRow = (r: Row, f: Fragment) => Math.abs(r.base - f.y1) <= SAME_BASELINE_PT && Math.abs(r.size - f.size) < SAME_SIZE_PT;
  // A row overruns its column when it ends past the left text or has a cell starting in the gutter.
  const tableRows = rowsOf(left).filter((r) => r.fragments.length >= 2
    && (r.x1 > textEnd + OVERRUN_PT || right.some((f) => short(f) && f.x0 < textStart - OVERRUN_PT && onRow(r, f))));
  if (!tableRows.length) return [left, right];
  // On each line of the right side, the spilled cells come first: once a piece there is the
  // right column's own (it starts at the column's edge, or sits on no table row), so is the rest.
  const spilled = new Set<Fragment>();
  for (const row of rowsOf(right)) {
    for (const f of row.fragments) {
      if (!short(f) || opensColumnLine(f, textStart, right) || !tableRows.some((r) => onRow(r, f))) break;
      spilled.add(f);
    }
  }
  return [left.concat(right.filter((f) => spilled.has(f))), right.filter((f) => !spilled.has(f))];
}

/**
 * Whether a piece opens a line of the right column (`column`, whose running text starts at
 * `textStart`): it starts at that edge (within COLUMN_START_PT) and overprints none of the
 * column's other pieces. A cell spilled from a table too wide for the left column is drawn over
 * the right column's lines wherever the table's columns put it, even at that edge.
 */
export function opensColumnLine(f: Fragment, textStart: number, column: Fragment[]): boolean {
  return Math.abs(f.x0 - textStart) <= COLUMN_START_PT
    && !column.some((g) => g !== f && g.x0 < f.x1 && g.x1 > f.x0 && g.y0 < f.y1 && g.y1 > f.y0);
}

/** The index of the first value in an ascending list that is at least `x` (a binary search). */
function firstAtLeast(sorted: number[], x: number): number {
  let lo = 0, hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/** Whether a row sits on a baseline of `rows`, within `tolerance`. */
export function onBaselineOf(rows: Row[], tolerance: number): (row: Row) => boolean {
  const bases = rows.map((r) => r.base).sort((p, q) => p - q);
  return (row) => {
    const k = firstAtLeast(bases, row.base - tolerance);
    return k < bases.length && bases[k]! <= row.base + tolerance;
  };
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

/** Where pieces start, in whole points, each point once. */
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
      if (pitch >= pageWidth * COLUMN_PITCH_MIN_SHARE && pitch <= pageWidth * COLUMN_PITCH_MAX_SHARE) pairs.set(pitch, (pairs.get(pitch) ?? 0) + 1);
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
 * the table's cell starts moved by the column pitch: the pieces starting one pitch right of
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

/** A test of whether any of these fragments lies beside a box (overlaps its height), in logarithmic time. */
export function textBeside(fragments: Fragment[]): (box: Box) => boolean {
  const sorted = [...fragments].sort((a, b) => a.y0 - b.y0);
  const tops = sorted.map((f) => f.y0);
  // For each fragment, the furthest-down bottom among it and those starting above it.
  const bottoms: number[] = [];
  for (const f of sorted) bottoms.push(Math.max(bottoms.at(-1) ?? -Infinity, f.y1));
  return (box) => {
    const above = firstAtLeast(tops, box.y1);
    return above > 0 && bottoms[above - 1]! > box.y0;
  };
}

/**
 * Whether two sides of an empty strip are columns of short lines (a list, contents) rather than
 * a table's columns: a table's cells open each row on one baseline across its columns, while
 * two columns set apart from each other, one opened by a heading, keep baselines of their own.
 * Two sides holding only rows of numbers (chartValuesOnBothSides) are one chart's labels and
 * values, not two columns: values over bars of different heights keep baselines of their own too.
 * A chart beside a column of words is still set apart from it.
 */
export function linesApart(left: Fragment[], right: Fragment[]): boolean {
  const a = rowsOf(left), b = rowsOf(right);
  if (a.length < MIN_SIDE_ROWS || b.length < MIN_SIDE_ROWS || chartValuesOnBothSides(a, b)) return false;
  const [fewer, more] = a.length <= b.length ? [a, b] : [b, a];
  return fewer.filter(onBaselineOf(more, SHARED_BASELINE_PT)).length <= fewer.length * LINES_APART_SHARE;
}

/**
 * Whether one side of a strip is a column of running text (columnFill of COLUMN_FILL_SHARE) and
 * the other a table of its own: most of its rows (TABLE_SIDE_SHARE) are rows of cells, and they
 * open off the text's baselines (at most TABLE_SIDE_SHARED_SHARE of them within
 * SHARED_BASELINE_PT of one). A table whose last column holds long text opens each row on one
 * baseline across the strip; a table set in a column beside prose keeps its own row pitch.
 */
export function tableBesideText(left: Fragment[], right: Fragment[], width: number): boolean {
  const besideText = (table: Fragment[], text: Fragment[]) => {
    if (columnFill(text, width) < COLUMN_FILL_SHARE) return false;
    const rows = rowsOf(table);
    const cellRows = rows.filter(isCellRow);
    if (cellRows.length < MIN_SIDE_ROWS || cellRows.length < rows.length * TABLE_SIDE_SHARE) return false;
    return cellRows.filter(onBaselineOf(rowsOf(text), SHARED_BASELINE_PT)).length <= cellRows.length * TABLE_SIDE_SHARED_SHARE;
  };
  return besideText(left, right) || besideText(right, left);
}

/** Whether every row on both sides is a chart's label or value (isChartLabelRow): numbers alone, no word. */
export function chartValuesOnBothSides(left: Row[], right: Row[]): boolean {
  return left.every(isChartLabelRow) && right.every(isChartLabelRow);
}

/** How many pieces cover each point of a region (`cells` points from x = `start`). */
export function coverOf(fragments: Iterable<Fragment>, start: number, cells: number): Uint16Array {
  const cover = new Uint16Array(cells);
  for (const f of fragments) {
    const a = Math.max(0, Math.floor(f.x0) - start);
    const b = Math.min(cells - 1, Math.ceil(f.x1) - start);
    for (let x = a; x <= b; x++) cover[x]!++;
  }
  return cover;
}

/**
 * Where pieces start, each point counted once per piece starting there, except that a line of
 * running text (a piece that is not short and no drawn table) covers every point it runs over:
 * it is running text, not a cell, and no gutter runs under it.
 */
export function startsOf(fragments: Fragment[], start: number, cells: number, width: number): Uint16Array {
  const starts = new Uint16Array(cells);
  for (const f of fragments) {
    const a = Math.max(0, Math.floor(f.x0) - start);
    if (!isShortPiece(f, width) && !f.table) {
      const b = Math.min(cells - 1, Math.ceil(f.x1) - start);
      for (let x = a; x <= b; x++) starts[x]!++;
    } else {
      starts[a]!++;
    }
  }
  return starts;
}

/** A line of running text: one piece across most of its side's width (a table row is several cells). */
export function isFullLine(row: Row, sideWidth: number): boolean {
  return row.fragments.some((f) => f.x1 - f.x0 > sideWidth * FULL_LINE_SHARE);
}

/**
 * The share of a side's rows that are lines of running text, or 0 for a side too small or too
 * narrow (of a region `width` wide) to be a column. Rows of numbers alone (a chart's labels and
 * values, isChartLabelRow) count neither way: a chart beside running text in a column does not
 * make that column less of one.
 */
export function columnFill(side: Fragment[], width: number): number {
  if (side.length < MIN_SIDE_ROWS) return 0;
  const b = bounds(side);
  const sideWidth = b.x1 - b.x0;
  if (sideWidth < width * MIN_SIDE_SHARE) return 0;
  const rows = rowsOf(side).filter((r) => !isChartLabelRow(r));
  const full = rows.filter((r) => isFullLine(r, sideWidth)).length;
  return rows.length >= MIN_SIDE_ROWS ? full / rows.length : 0;
}

/** How many lines of running text a side holds, or 0 for a side too narrow (of a region `width` wide) to be a column. */
export function proseLines(side: Fragment[], width: number): number {
  const b = bounds(side);
  const w = b.x1 - b.x0;
  if (side.length < 1 || w < width * MIN_SIDE_SHARE) return 0;
  return rowsOf(side).filter((r) => isFullLine(r, w)).length;
}

/**
 * Whether both sides of a cut hold running text. Across the whole page, a few lines of it on one
 * side and one on the other are enough (a column may hold mostly a table); below it, most of one
 * side's rows and some of the other's must be lines of running text.
 */
export function runningTextOnBothSides(left: Fragment[], right: Fragment[], width: number, wholePage: boolean): boolean {
  if (wholePage) {
    const a = proseLines(left, width), b = proseLines(right, width);
    return Math.max(a, b) >= WHOLE_PAGE_PROSE_LINES && Math.min(a, b) >= 1;
  }
  const a = columnFill(left, width), b = columnFill(right, width);
  return Math.max(a, b) >= COLUMN_FILL_SHARE && Math.min(a, b) >= OTHER_COLUMN_FILL_SHARE;
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
  const besideTable = (t: Fragment) => textBeside(tablesRight.filter((f) => f.x0 >= t.x1 - OVERRUN_PT || movedByColumnPitch(t, f, pageWidth)))(t);
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
  return Math.max(...l.map((t) => t.x1)) <= leastOf(r, (t) => t.x0) + OVERRUN_PT || l.some((a) => r.some((b) => movedByColumnPitch(a, b, pageWidth)));
}

/** Whether box b is box a moved right by one column pitch, as wide within SAME_TABLE_WIDTH_PT. */
function movedByColumnPitch(a: Box, b: Box, pageWidth: number): boolean {
  const pitch = b.x0 - a.x0;
  return pitch >= pageWidth * COLUMN_PITCH_MIN_SHARE && pitch <= pageWidth * COLUMN_PITCH_MAX_SHARE && Math.abs(b.x1 - b.x0 - (a.x1 - a.x0)) <= SAME_TABLE_WIDTH_PT;
}

/**
 * A drawn table on one side of an empty strip, and text or another table on the other: a table
 * set in a column beside the other column (one piece, a drawn table is never cut by a gutter, nor
 * are its rows read across the strip), as when a table carried over a column break leaves its
 * first rows at the foot of one column and the rest at the top of the next.
 */
export function drawnTableBeside(left: Fragment[], right: Fragment[]): boolean {
  return left.length > 0 && right.length > 0 && (left.some((f) => f.table) || right.some((f) => f.table));
}

/** Whether a region is wide enough and holds pieces enough to show columns (drawn tables, one piece each, always may). */
export function mayHoldColumns(fragments: Fragment[], width: number, pageWidth: number): boolean {
  const drawnTables = fragments.some((f) => f.table);
  return !(width < pageWidth * MIN_COLUMNS_WIDTH_SHARE || (fragments.length < MIN_COLUMN_PIECES && !drawnTables));
}

/** What findGutter knows of the region it cuts. */
interface Region { fragments: Fragment[]; box: Box; width: number; pageWidth: number; start: number; wholePage: boolean; drawnTables: boolean }

/**
 * The first of the candidate strips (nearest the middle first) that is a column gutter: one
 * that leaves running text on both sides (a table's own gutters fail that test), or two columns
 * of short lines, or a table (drawn, or of its own rows) beside the other side, or (across the whole page) a table
 * carried on into the next column. `byStart`: each piece is on the side where it starts (pieces crossing
 * the cut are on the left); otherwise pieces crossing the cut take part in neither side's test.
 */
function firstGutter(region: Region, strips: { from: number; to: number }[], byStart = false): Gutter | undefined {
  const { fragments, wholePage } = region;
  for (const strip of strips.slice(0, GUTTER_CANDIDATES)) {
    const cut = region.start + (strip.from + strip.to) / 2;
    if (byStart && region.drawnTables && tableSetAcross(fragments, cut, region.box.x1, region.pageWidth)) continue;
    const left = fragments.filter((f) => (byStart ? f.x0 < cut : f.x1 <= cut));
    const right = fragments.filter((f) => f.x0 >= cut);
    if (runningTextOnBothSides(left, right, region.width, wholePage)) return { x: cut, carriedOn: false };
    if (!byStart && (linesApart(left, right) || drawnTableBeside(left, right) || tableBesideText(left, right, region.width))) return { x: cut, carriedOn: false };
    if (byStart && tablesSideBySide(left, right, region.pageWidth)) return { x: cut, carriedOn: false };
    if (!wholePage) continue;
    if (byStart && continuedInNextColumn(left, right, region.pageWidth)) return { x: cut, carriedOn: true };
  }
  return undefined;
}

/**
 * A vertical gutter that splits these fragments into two text columns, or undefined. Three
 * looks, each at the strips where a rule says nothing runs: strips no piece covers; strips
 * crossed only by a few short cells continuing a row from the left (a table spilling into the
 * gutter); and strips where nothing starts and no line of running text runs (a table too wide
 * for its column overruns the gutter with a whole column of cells, even under the next
 * column's text, or with its drawn frame; each piece then reads on the side where it starts).
 */
function findGutter(fragments: Fragment[], box: Box, pageWidth: number, wholePage = false): Gutter | undefined {
  const width = box.x1 - box.x0;
  if (!mayHoldColumns(fragments, width, pageWidth)) return undefined;
  const drawnTables = fragments.some((f) => f.table);
  const start = Math.floor(box.x0);
  const cells = Math.ceil(box.x1) - start + 1;
  const region: Region = { fragments, box, width, pageWidth, start, wholePage, drawnTables };
  const cover = coverOf(fragments, start, cells);
  const strict = firstGutter(region, stripsWhere(cells, (x) => cover[x] === 0));
  if (strict !== undefined) return strict;
  const spilling = continuingCells(fragments, width);
  if (spilling.size) {
    const solid = coverOf(fragments.filter((f) => !spilling.has(f)), start, cells);
    const allowed = Math.max(SPILL_CROSSING_MIN, Math.round(fragments.length * SPILL_CROSSING_SHARE));
    const few = firstGutter(region, stripsWhere(cells, (x) => solid[x] === 0 && cover[x]! <= allowed));
    if (few !== undefined) return few;
  }
  if (spilling.size || drawnTables) {
    const starts = startsOf(fragments, start, cells, width);
    const byStart = firstGutter(region, stripsWhere(cells, (x) => starts[x] === 0), true);
    if (byStart !== undefined) return byStart;
  }
  return overrunColumnEdge(fragments, box, wholePage) ?? (wholePage ? carriedOverOverrun(fragments, pageWidth) : undefined);
}

/**
 * The left edge of a right column that lines of the left column run over, as a cut (each piece
 * on the side where it starts), or undefined. Contents lines with dot leaders, or words too long
 * for a narrow column, overrun the gutter and hide it; the right column still shows by its edge:
 * many pieces start at one point in the middle of the region (EDGE_MIN_PIECES within
 * EDGE_ALIGN_PT), most rows right of it start there (EDGE_OPENS_SHARE: a column's lines do, a
 * table's cells need not), few rows left of it run over it (EDGE_CROSSING_SHARE: lines set across
 * the page, as a letter's beside an address block, are no overflow) and none of them as far as
 * the right column's middle (a line that does is set across both columns) nor in large type (a
 * heading wraps in its column; one over the edge is set across), and the two sides hold
 * running text or keep baselines of their own, as any two columns.
 */
export function overrunColumnEdge(fragments: Fragment[], box: Box, wholePage: boolean): Gutter | undefined {
  const width = box.x1 - box.x0;
  const from = box.x0 + width * GUTTER_FROM_SHARE, to = box.x0 + width * GUTTER_TO_SHARE;
  const startsAt = new Map<number, number>();
  for (const f of fragments) {
    if (f.x0 > from && f.x0 < to && !f.table) startsAt.set(Math.round(f.x0), (startsAt.get(Math.round(f.x0)) ?? 0) + 1);
  }
  let edge = 0, most = 0;
  for (const x of startsAt.keys()) {
    let n = 0;
    for (let d = -EDGE_ALIGN_PT; d <= EDGE_ALIGN_PT; d++) n += startsAt.get(x + d) ?? 0;
    if (n > most || (n === most && x < edge)) { most = n; edge = x; }
  }
  if (most < EDGE_MIN_PIECES) return undefined;
  // Starts were counted at whole points; half a point more keeps every start that rounded into the window.
  const cut = edge - EDGE_ALIGN_PT - 0.5;
  const left = fragments.filter((f) => f.x0 < cut), right = fragments.filter((f) => f.x0 >= cut);
  const leftRows = rowsOf(left), rightRows = rowsOf(right);
  const crossing = leftRows.filter((r) => r.x1 > edge + EDGE_ALIGN_PT);
  if (!crossing.length || crossing.length > leftRows.length * EDGE_CROSSING_SHARE) return undefined;
  // An overrun stops short of the right column's middle; a line reaching further is set across both.
  const rightEnd = bounds(right).x1;
  if (crossing.some((r) => r.x1 >= edge + (rightEnd - edge) / 2)) return undefined;
  // Headings wrap rather than overrun: a large line over the edge is a heading set across the columns.
  const text = bodySizeOf(fragments);
  if (crossing.some((r) => r.size >= text * LARGE_TYPE_SHARE)) return undefined;
  const opening = rightRows.filter((r) => r.x0 <= edge + EDGE_ALIGN_PT).length;
  if (opening < rightRows.length * EDGE_OPENS_SHARE) return undefined;
  return runningTextOnBothSides(left, right, width, wholePage) || linesApart(left, right) ? { x: cut, carriedOn: false } : undefined;
}

/** Bands: maximal groups of fragments whose vertical extents chain together (less than BAND_GAP_PT apart), top to bottom. */
export function bandsOf(fragments: Fragment[]): Fragment[][] {
  const sorted = [...fragments].sort((a, b) => a.y0 - b.y0);
  const bands: Fragment[][] = [];
  let band: Fragment[] = [];
  let bandBottom = -Infinity;
  for (const f of sorted) {
    if (band.length && f.y0 > bandBottom + BAND_GAP_PT) { bands.push(band); band = []; bandBottom = -Infinity; }
    band.push(f);
    bandBottom = Math.max(bandBottom, f.y1);
  }
  if (band.length) bands.push(band);
  return bands;
}

/** Whether a piece of the band runs across the middle `mid` of the region (a heading or a line across both columns). */
export function crossesMiddle(band: Fragment[], mid: number): boolean {
  return band.some((f) => f.x0 < mid - MIDDLE_CLEARANCE_PT && f.x1 > mid + MIDDLE_CLEARANCE_PT);
}

/** Whether a band has pieces on both sides of the middle `mid`: the lines of two columns side by side. */
export function sitsOnBothSides(band: Fragment[], mid: number): boolean {
  return band.some((f) => f.x1 <= mid + MIDDLE_CLEARANCE_PT) && band.some((f) => f.x0 >= mid - MIDDLE_CLEARANCE_PT);
}

/**
 * Whether a band is a heading set across the columns of the group above it, which ends there: one
 * line, with white beside it on the other side of the middle `mid` (no column runs on beside it),
 * in type larger than the group's text. The columns above it are read before it and those below
 * it after it; a heading inside one column has the other column's lines beside it.
 */
export function headingAcrossColumns(band: Fragment[], group: Fragment[], mid: number): boolean {
  if (!group.length || sitsOnBothSides(band, mid) || rowsOf(band).length !== 1) return false;
  const text = bodySizeOf(group);
  return band.every((f) => f.size >= text * LARGE_TYPE_SHARE);
}

/**
 * Headings set across both columns that end short of the gutter at `cut` (a short title over two
 * columns sits on the left side alone): rows of large type starting at the left edge, short as
 * headings are, with white beside them on the right over their height and ACROSS_HEADING_CLEAR_EM
 * of their size above and below, while the right column runs on both above and below them (a
 * heading inside the left column has the right column's lines beside it). Returns their vertical
 * extents top to bottom, the rows of a heading wrapped over several lines as one.
 */
export function headingsShortOfGutter(fragments: Fragment[], cut: number): Box[] {
  const body = bodySizeOf(fragments);
  const left = leastOf(fragments, (f) => f.x0);
  const right = fragments.filter((f) => f.x0 >= cut);
  const large = fragments.filter((f) => f.x1 <= cut && f.size >= body * LARGE_TYPE_SHARE);
  const headings = rowsOf(large).filter((row) => {
    const clear = row.size * ACROSS_HEADING_CLEAR_EM;
    const text = row.fragments.map((f) => f.text).join(' ').trim();
    return row.x0 <= left + row.size && text.length > 0 && text.length < HEADING_MAX_CHARS
      && !right.some((f) => f.y1 > row.y0 - clear && f.y0 < row.y1 + clear)
      && right.some((f) => f.y1 <= row.y0) && right.some((f) => f.y0 >= row.y1);
  });
  const held = new Set(headings.flatMap((row) => row.fragments));
  const others = fragments.filter((f) => !held.has(f));
  const spans: Box[] = [];
  for (const row of headings) {
    const last = spans[spans.length - 1];
    // Lines of one heading: nothing else lies between them.
    if (last && !others.some((f) => centreOf(f) > last.y1 && centreOf(f) < row.y0)) last.y1 = row.y1;
    else spans.push({ x0: row.x0, x1: row.x1, y0: row.y0, y1: row.y1 });
  }
  return spans;
}

function centreOf(f: Fragment): number {
  return (f.y0 + f.y1) / 2;
}

/** The fragments above, within and below each of `spans` (top to bottom), by their vertical centres; empty slices left out. */
export function slicesAround(fragments: Fragment[], spans: Box[]): Fragment[][] {
  const slices: Fragment[][] = Array.from({ length: spans.length * 2 + 1 }, () => []);
  for (const f of fragments) {
    const c = centreOf(f);
    let at = spans.findIndex((s) => c <= s.y1);
    at = at < 0 ? spans.length * 2 : c < spans[at]!.y0 ? at * 2 : at * 2 + 1;
    slices[at]!.push(f);
  }
  return slices.filter((s) => s.length);
}

/** Bands of a region read together: a group of two-sided bands, with the gutter it is read by, or bands read across. */
interface Part { fragments: Fragment[]; group: boolean; cut?: Gutter }

/**
 * Whether a group of a few lines sits in columns cut at `x`: no piece crosses it and a line of
 * running text stands on each side (a table's narrow cells do not).
 */
export function holdsColumnsAt(fragments: Fragment[], x: number): boolean {
  const b = bounds(fragments);
  const left = fragments.filter((f) => f.x1 <= x), right = fragments.filter((f) => f.x0 >= x);
  if (left.length + right.length !== fragments.length) return false;
  const prose = (side: Fragment[]) => proseLines(side, b.x1 - b.x0) >= 1;
  return (prose(left) || linesAtOneEdge(left)) && (prose(right) || linesAtOneEdge(right)) && (prose(left) || prose(right));
}

/**
 * Lines of a column without running text: MIN_SIDE_ROWS rows or more, all starting at one x
 * (within COLUMN_START_PT), as the labels of a table carried on at the top of a column do.
 */
export function linesAtOneEdge(side: Fragment[]): boolean {
  const rows = rowsOf(side);
  const edge = leastOf(rows, (r) => r.x0);
  return rows.length >= MIN_SIDE_ROWS && rows.every((r) => r.x0 <= edge + COLUMN_START_PT);
}

/**
 * Groups of two-sided bands too small to show their columns (two lines on the left and three on
 * the right between two headings across the page) take the page's: the gutter another group
 * of the region was read by, or else the one all the groups show together, where it holds
 * (holdsColumnsAt).
 */
export function keepPageColumns(parts: Part[], pageWidth: number): void {
  const open = parts.filter((p) => p.group && !p.cut);
  if (!open.length) return;
  const cuts = parts.flatMap((p) => (p.cut ? [p.cut] : []));
  if (!cuts.length) {
    const all = parts.filter((p) => p.group).flatMap((p) => p.fragments);
    const together = findGutter(all, bounds(all), pageWidth);
    if (together) cuts.push(together);
  }
  for (const part of open) part.cut = cuts.find((c) => holdsColumnsAt(part.fragments, c.x));
}

/**
 * Recursive XY cut: bands separated by horizontal whitespace, and within a run of bands
 * that share a column gutter, the left column before the right. Returns the fragments of
 * each reading-order region.
 */
export function readingRegions(fragments: Fragment[], pageWidth: number, depth = 0): Fragment[][] {
  if (fragments.length === 0) return [];
  const box = bounds(fragments);
  // A strip empty from the top of the page to the bottom is a strong sign of columns.
  const whole = depth < MAX_CUT_DEPTH ? findGutter(fragments, box, pageWidth, depth === 0) : undefined;
  if (whole !== undefined) {
    // A heading across the columns ends those above it: the page's columns hold in each slice
    // above, between and below such headings (however few its lines), read one after the other.
    const across = headingsShortOfGutter(fragments, whole.x);
    const slices = across.length ? slicesAround(fragments, across) : [fragments];
    return slices.flatMap((slice) => sides(slice, whole, box.x1 - box.x0).flatMap((side) => readingRegions(side, pageWidth, depth + 1)));
  }
  if (depth >= MAX_CUT_DEPTH) return [fragments];
  const bands = bandsOf(fragments);
  if (bands.length <= 1) return [fragments];
  // Merge consecutive bands into groups: a group with a gutter is read column by column.
  const parts: Part[] = [];
  let group: Fragment[] = [];
  const flushGroup = () => {
    if (!group.length) return;
    parts.push({ fragments: group, group: true, cut: findGutter(group, bounds(group), pageWidth) });
    group = [];
  };
  // A band is "columnar" when its lines sit on both sides of the page middle without crossing it.
  const mid = box.x0 + (box.x1 - box.x0) / 2;
  for (const b of bands) {
    // A heading across the columns ends the group above it.
    if (headingAcrossColumns(b, group, mid)) { flushGroup(); parts.push({ fragments: b, group: false }); continue; }
    // A band that crosses no middle joins a group it opens (two-sided) or continues.
    if (!crossesMiddle(b, mid) && (sitsOnBothSides(b, mid) || group.length)) { group.push(...b); continue; }
    flushGroup();
    parts.push({ fragments: b, group: false });
  }
  flushGroup();
  keepPageColumns(parts, pageWidth);
  const out: Fragment[][] = [];
  let plain: Fragment[] = [];
  const flushPlain = () => { if (plain.length) { out.push(plain); plain = []; } };
  for (const part of parts) {
    if (!part.cut) { plain.push(...part.fragments); continue; }
    flushPlain();
    const b = bounds(part.fragments);
    const [left, right] = sides(part.fragments, part.cut, b.x1 - b.x0);
    out.push(...readingRegions(left, pageWidth, depth + 1));
    out.push(...readingRegions(right, pageWidth, depth + 1));
  }
  flushPlain();
  return out;
}

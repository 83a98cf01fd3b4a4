// Reading regions: where a region is cut into columns. A gutter is an empty strip with running
// text on both sides (or a table beside running text, or a drawn table beside lines); the sides
// of a cut are what each column holds.
import type { Fragment, Row } from '../types.js';
import { bounds, onBaselineOf, type Box, type Gutter } from './box.js';
import {
  carriedOverOverrun, continuedInNextColumn, continuingCells, drawnTableBeside, isShortFragment, tableSetAcross, tablesSideBySide,
} from './carried-on.js';
import { bodySizeOf, isCellRow, isChartLabelRow } from '../row-predicates.js';
import { rowsOf } from '../rows.js';
import {
  COLUMN_FILL_SHARE, COLUMN_START_PT, EDGE_ALIGN_PT, EDGE_CROSSING_SHARE, EDGE_MIN_FRAGMENTS, EDGE_OPENS_SHARE, FULL_LINE_SHARE,
  GUTTER_CANDIDATES, GUTTER_FROM_SHARE, GUTTER_TO_SHARE, LARGE_TYPE_SHARE, LINES_APART_SHARE, MIN_COLUMN_FRAGMENTS, MIN_COLUMNS_WIDTH_SHARE,
  MIN_GUTTER_PT, MIN_SIDE_ROWS, MIN_SIDE_SHARE, OTHER_COLUMN_FILL_SHARE, OVERRUN_PT, SAME_BASELINE_PT, SAME_SIZE_PT, SHARED_BASELINE_PT,
  SPILL_CROSSING_MIN, SPILL_CROSSING_SHARE, TABLE_SIDE_SHARE, TABLE_SIDE_SHARED_SHARE, WHOLE_PAGE_PROSE_LINES,
} from '../thresholds.js';

/** Vertical strips at least MIN_GUTTER_PT wide, away from the edges, where `open(x)` holds; nearest the middle first. */
export function stripsWhere(cells: number, open: (x: number) => boolean): { from: number; to: number }[] {
  const strips: { from: number; to: number }[] = [];
  let runFrom = -1;
  for (let x = 0; x <= cells; x++) {
    if (x < cells && open(x)) { if (runFrom < 0) runFrom = x; continue; }
    if (runFrom >= 0) {
      const mid = (runFrom + x) / 2;
      const central = mid > cells * GUTTER_FROM_SHARE && mid < cells * GUTTER_TO_SHARE;
      if (x - runFrom >= MIN_GUTTER_PT && central) strips.push({ from: runFrom, to: x });
      runFrom = -1;
    }
  }
  return strips.sort((a, b) => Math.abs((a.from + a.to) / 2 - cells / 2) - Math.abs((b.from + b.to) / 2 - cells / 2));
}

/**
 * The two sides of a column cut. A fragment reads on the side where it starts (a cell spilling over
 * the gutter stays left), except the cells of a table too wide for the left column that start
 * past the gutter: short fragments on the baseline of a row of the left side's table (a line of
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
  for (const f of left) if (!isShortFragment(f, width)) textEnd = Math.max(textEnd, f.x1);
  for (const f of right) if (!isShortFragment(f, width)) textStart = Math.min(textStart, f.x0);
  const short = (f: Fragment) => isShortFragment(f, width);
  const onRow = (r: Row, f: Fragment) => Math.abs(r.base - f.y1) <= SAME_BASELINE_PT && Math.abs(r.size - f.size) < SAME_SIZE_PT;
  // A row overruns its column when it ends past the left text or has a cell starting in the gutter.
  const tableRows = rowsOf(left).filter((r) => r.fragments.length >= 2
    && (r.x1 > textEnd + OVERRUN_PT || right.some((f) => short(f) && f.x0 < textStart - OVERRUN_PT && onRow(r, f))));
  if (!tableRows.length) return [left, right];
  // On each line of the right side, the spilled cells come first: once a fragment there is the
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
 * Whether a fragment opens a line of the right column (`column`, whose running text starts at
 * `textStart`): it starts at that edge (within COLUMN_START_PT) and overprints none of the
 * column's other fragments. A cell spilled from a table too wide for the left column is drawn over
 * the right column's lines wherever the table's columns put it, even at that edge.
 */
export function opensColumnLine(f: Fragment, textStart: number, column: Fragment[]): boolean {
  return Math.abs(f.x0 - textStart) <= COLUMN_START_PT
    && !column.some((g) => g !== f && g.x0 < f.x1 && g.x1 > f.x0 && g.y0 < f.y1 && g.y1 > f.y0);
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

/** How many fragments cover each point of a region (`cells` points from x = `start`). */
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
 * Where fragments start, each point counted once per fragment starting there, except that a line of
 * running text (a fragment that is not short and no drawn table) covers every point it runs over:
 * it is running text, not a cell, and no gutter runs under it.
 */
export function startsOf(fragments: Fragment[], start: number, cells: number, width: number): Uint16Array {
  const starts = new Uint16Array(cells);
  for (const f of fragments) {
    const a = Math.max(0, Math.floor(f.x0) - start);
    if (!isShortFragment(f, width) && !f.table) {
      const b = Math.min(cells - 1, Math.ceil(f.x1) - start);
      for (let x = a; x <= b; x++) starts[x]!++;
    } else {
      starts[a]!++;
    }
  }
  return starts;
}

/** A line of running text: one fragment across most of its side's width (a table row is several cells). */
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

/** Whether a region is wide enough and holds fragments enough to show columns (drawn tables, one fragment each, always may). */
export function mayHoldColumns(fragments: Fragment[], width: number, pageWidth: number): boolean {
  const drawnTables = fragments.some((f) => f.table);
  return !(width < pageWidth * MIN_COLUMNS_WIDTH_SHARE || (fragments.length < MIN_COLUMN_FRAGMENTS && !drawnTables));
}

/** What findGutter knows of the region it cuts. */
interface Region {
  fragments: Fragment[]; box: Box; width: number; pageWidth: number; start: number; wholePage: boolean; drawnTables: boolean;
}

/**
 * The first of the candidate strips (nearest the middle first) that is a column gutter: one
 * that leaves running text on both sides (a table's own gutters fail that test), or two columns
 * of short lines, or a table (drawn, or of its own rows) beside the other side, or (across the whole page) a table
 * carried on into the next column. `byStart`: each fragment is on the side where it starts (fragments crossing
 * the cut are on the left); otherwise fragments crossing the cut take part in neither side's test.
 */
function firstGutter(region: Region, strips: { from: number; to: number }[], byStart = false): Gutter | undefined {
  const { fragments, wholePage } = region;
  for (const strip of strips.slice(0, GUTTER_CANDIDATES)) {
    const cut = region.start + (strip.from + strip.to) / 2;
    if (byStart && region.drawnTables && tableSetAcross(fragments, cut, region.box.x1, region.pageWidth)) continue;
    const left = fragments.filter((f) => (byStart ? f.x0 < cut : f.x1 <= cut));
    const right = fragments.filter((f) => f.x0 >= cut);
    if (runningTextOnBothSides(left, right, region.width, wholePage)) return { x: cut, carriedOn: false };
    const sidesApart = !byStart
      && (linesApart(left, right) || drawnTableBeside(left, right) || tableBesideText(left, right, region.width));
    if (sidesApart) return { x: cut, carriedOn: false };
    if (byStart && tablesSideBySide(left, right, region.pageWidth)) return { x: cut, carriedOn: false };
    if (!wholePage) continue;
    if (byStart && continuedInNextColumn(left, right, region.pageWidth)) return { x: cut, carriedOn: true };
  }
  return undefined;
}

/**
 * A vertical gutter that splits these fragments into two text columns, or undefined. Three
 * looks, each at the strips where a rule says nothing runs: strips no fragment covers; strips
 * crossed only by a few short cells continuing a row from the left (a table spilling into the
 * gutter); and strips where nothing starts and no line of running text runs (a table too wide
 * for its column overruns the gutter with a whole column of cells, even under the next
 * column's text, or with its drawn frame; each fragment then reads on the side where it starts).
 */
export function findGutter(fragments: Fragment[], box: Box, pageWidth: number, wholePage = false): Gutter | undefined {
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
 * The left edge of a right column that lines of the left column run over, as a cut (each fragment
 * on the side where it starts), or undefined. Contents lines with dot leaders, or words too long
 * for a narrow column, overrun the gutter and hide it; the right column still shows by its edge:
 * many fragments start at one point in the middle of the region (EDGE_MIN_FRAGMENTS within
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
  if (most < EDGE_MIN_FRAGMENTS) return undefined;
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

// Reading order of a page: a recursive XY cut into bands and text columns; the fragments
// of each region are read top to bottom. A table's own gutters do not make columns.
import type { Fragment, Row } from './types.js';
import { leastOf, rowsOf } from './rows.js';
import { BAND_GAP_PT, CARRIED_MIN_ROWS, CARRIED_MOVED_SHARE, CARRIED_OWN_ROWS_SHARE, CARRIED_TOP_LINES, COLUMN_FILL_SHARE, COLUMN_PITCH_MAX_SHARE, COLUMN_PITCH_MIN_SHARE, COLUMN_START_PT, FULL_LINE_SHARE, GUTTER_CANDIDATES, GUTTER_FROM_SHARE, GUTTER_TO_SHARE, LINES_APART_SHARE, MAX_CUT_DEPTH, MIDDLE_CLEARANCE_PT, MIN_COLUMNS_WIDTH_SHARE, MIN_COLUMN_PIECES, MIN_GUTTER_PT, MIN_SIDE_ROWS, MIN_SIDE_SHARE, OTHER_COLUMN_FILL_SHARE, OVERRUN_PT, OWN_BASELINE_PT, SAME_BASELINE_PT, SAME_SIZE_PT, SHARED_BASELINE_PT, SHORT_PIECE_SHARE, SPILL_CROSSING_MIN, SPILL_CROSSING_SHARE, WHOLE_PAGE_PROSE_LINES } from './thresholds.js';

interface Box { x0: number; x1: number; y0: number; y1: number }

/** A column cut at `x`; `carriedOn` when the right column holds the rest of the left column's table. */
interface Gutter { x: number; carriedOn: boolean }

function bounds(fragments: Fragment[]): Box {
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const f of fragments) {
    if (f.x0 < x0) x0 = f.x0; if (f.x1 > x1) x1 = f.x1;
    if (f.y0 < y0) y0 = f.y0; if (f.y1 > y1) y1 = f.y1;
  }
  return { x0, x1, y0, y1 };
}

/**
 * Short fragments that continue a line begun further left (a table cell after another).
 * A table a little too wide for its text column spills such cells into the gutter; a few
 * of them must not hide the gutter.
 */
function continuingCells(fragments: Fragment[], width: number): Set<Fragment> {
  const out = new Set<Fragment>();
  for (const row of rowsOf(fragments)) {
    for (let k = 1; k < row.fragments.length; k++) {
      const f = row.fragments[k]!;
      if (f.x1 - f.x0 < width * SHORT_PIECE_SHARE) out.add(f);
    }
  }
  return out;
}

/** Vertical strips at least MIN_GUTTER_PT wide, away from the edges, where `open(x)` holds; nearest the middle first. */
function stripsWhere(cells: number, open: (x: number) => boolean): { from: number; to: number }[] {
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
function sides(fragments: Fragment[], { x: cut, carriedOn }: Gutter, width: number): [Fragment[], Fragment[]] {
  const left: Fragment[] = [], right: Fragment[] = [];
  for (const f of fragments) (f.x0 < cut ? left : right).push(f);
  if (!left.length || !right.length || carriedOn) return [left, right];
  // Where the two columns' running text ends and starts (without any, a band holding only the
  // table, every row may run on).
  let textEnd = -Infinity, textStart = Infinity;
  for (const f of left) if (f.x1 - f.x0 >= width * SHORT_PIECE_SHARE) textEnd = Math.max(textEnd, f.x1);
  for (const f of right) if (f.x1 - f.x0 >= width * SHORT_PIECE_SHARE) textStart = Math.min(textStart, f.x0);
  const short = (f: Fragment) => f.x1 - f.x0 < width * SHORT_PIECE_SHARE;
  const onRow = (r: Row, f: Fragment) => Math.abs(r.base - f.y1) <= SAME_BASELINE_PT && Math.abs(r.size - f.size) < SAME_SIZE_PT;
  // A row overruns its column when it ends past the left text or has a cell starting in the gutter.
  const tableRows = rowsOf(left).filter((r) => r.fragments.length >= 2
    && (r.x1 > textEnd + OVERRUN_PT || right.some((f) => short(f) && f.x0 < textStart - OVERRUN_PT && onRow(r, f))));
  if (!tableRows.length) return [left, right];
  const spilled = (f: Fragment) => short(f) && tableRows.some((r) => onRow(r, f));
  return [left.concat(right.filter(spilled)), right.filter((f) => !spilled(f))];
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
function onBaselineOf(rows: Row[], tolerance: number): (row: Row) => boolean {
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
function continuedInNextColumn(left: Fragment[], right: Fragment[], pageWidth: number): boolean {
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
  // The pitch that moves the most of the right side's cell starts onto the left side's (whole
  // points, one either way), counted over every pair of starts in one pass.
  const starts = (side: Fragment[]) => [...new Set(side.map((f) => Math.round(f.x0)))];
  const from = starts(left), to = starts(right);
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
  if (!most) return false;
  const fromSet = new Set(from);
  const moved = to.filter((x) => [-1, 0, 1].some((d) => fromSet.has(x - pitch + d))).length;
  return moved >= 2 && moved >= to.length * CARRIED_MOVED_SHARE;
}

/** A test of whether any of these fragments lies beside a box (overlaps its height), in logarithmic time. */
function textBeside(fragments: Fragment[]): (box: Box) => boolean {
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
 */
function linesApart(left: Fragment[], right: Fragment[]): boolean {
  const a = rowsOf(left), b = rowsOf(right);
  if (a.length < MIN_SIDE_ROWS || b.length < MIN_SIDE_ROWS) return false;
  const [fewer, more] = a.length <= b.length ? [a, b] : [b, a];
  return fewer.filter(onBaselineOf(more, SHARED_BASELINE_PT)).length <= fewer.length * LINES_APART_SHARE;
}

/**
 * A vertical gutter that splits these fragments into two text columns, or undefined.
 * Tables also have gutters; a column of running text is told apart by its lines filling
 * most of the column's width and by both sides being wide.
 */
function findGutter(fragments: Fragment[], box: Box, pageWidth: number, wholePage = false): Gutter | undefined {
  const width = box.x1 - box.x0;
  const drawnTables = fragments.some((f) => f.table);
  // Too few pieces to show columns, unless drawn tables (one piece each) are among them.
  if (width < pageWidth * MIN_COLUMNS_WIDTH_SHARE || (fragments.length < MIN_COLUMN_PIECES && !drawnTables)) return undefined;
  const start = Math.floor(box.x0);
  const cells = Math.ceil(box.x1) - start + 1;
  const mark = (list: Iterable<Fragment>): Uint16Array => {
    const cover = new Uint16Array(cells);
    for (const f of list) {
      const a = Math.max(0, Math.floor(f.x0) - start);
      const b = Math.min(cells - 1, Math.ceil(f.x1) - start);
      for (let x = a; x <= b; x++) cover[x]!++;
    }
    return cover;
  };
  const fills = (side: Fragment[]): number => {
    if (side.length < MIN_SIDE_ROWS) return 0;
    const b = bounds(side);
    const sideWidth = b.x1 - b.x0;
    if (sideWidth < width * MIN_SIDE_SHARE) return 0;
    const rows = rowsOf(side);
    // A line of running text is one fragment across the column; a table row is several cells.
    const full = rows.filter((r) => r.fragments.some((f) => f.x1 - f.x0 > sideWidth * FULL_LINE_SHARE)).length;
    return rows.length >= MIN_SIDE_ROWS ? full / rows.length : 0;
  };
  // Lines of running text: one fragment across most of its side (table rows are several cells).
  const prose = (side: Fragment[]): number => {
    const b = bounds(side);
    const w = b.x1 - b.x0;
    if (side.length < 1 || w < width * MIN_SIDE_SHARE) return 0;
    return rowsOf(side).filter((r) => r.fragments.some((f) => f.x1 - f.x0 > w * FULL_LINE_SHARE)).length;
  };
  // Empty vertical strips; a column gutter is the one nearest the middle that leaves
  // running text on both sides (a table's own gutters fail that test). Fragments crossing
  // the cut take part in neither side's test.
  const test = (strips: { from: number; to: number }[], byStart = false): Gutter | undefined => {
    for (const strip of strips.slice(0, GUTTER_CANDIDATES)) {
      const cut = start + (strip.from + strip.to) / 2;
      // A drawn table crossing the cut overruns the left column when it reaches less than
      // halfway into the right one and the right column's text runs on beside it; otherwise it
      // is set across both columns, and there is no cut.
      if (byStart && drawnTables) {
        const crossing = fragments.filter((t) => t.table && t.x0 < cut && t.x1 > cut);
        if (crossing.length) {
          const besideText = textBeside(fragments.filter((f) => f.x0 >= cut && !f.table));
          if (crossing.some((t) => t.x1 >= cut + (box.x1 - cut) / 2 || !besideText(t))) continue;
        }
      }
      const left = fragments.filter((f) => (byStart ? f.x0 < cut : f.x1 <= cut));
      const right = fragments.filter((f) => f.x0 >= cut);
      if (wholePage) {
        const a = prose(left), b = prose(right);
        if (Math.max(a, b) >= WHOLE_PAGE_PROSE_LINES && Math.min(a, b) >= 1) return { x: cut, carriedOn: false };
      } else {
        const a = fills(left), b = fills(right);
        if (Math.max(a, b) >= COLUMN_FILL_SHARE && Math.min(a, b) >= OTHER_COLUMN_FILL_SHARE) return { x: cut, carriedOn: false };
      }
      if (!byStart && linesApart(left, right)) return { x: cut, carriedOn: false };
      if (!wholePage) continue;
      // A drawn table on each side of the strip: two columns of tables, read one after the other.
      if (!byStart && left.some((f) => f.table) && right.some((f) => f.table)) return { x: cut, carriedOn: false };
      if (byStart && continuedInNextColumn(left, right, pageWidth)) return { x: cut, carriedOn: true };
    }
    return undefined;
  };
  const cover = mark(fragments);
  const strict = test(stripsWhere(cells, (x) => cover[x] === 0));
  if (strict !== undefined) return strict;
  // A table spilling into the gutter: a strip crossed only by a few cells that continue a
  // row from the left, and by nothing else.
  const spilling = continuingCells(fragments, width);
  if (spilling.size) {
    const solid = mark(fragments.filter((f) => !spilling.has(f)));
    const allowed = Math.max(SPILL_CROSSING_MIN, Math.round(fragments.length * SPILL_CROSSING_SHARE));
    const few = test(stripsWhere(cells, (x) => solid[x] === 0 && cover[x]! <= allowed));
    if (few !== undefined) return few;
  } else if (!drawnTables) {
    return undefined;
  }
  // A table too wide for its column overruns the gutter with a whole column of cells, even
  // under the next column's text, or with its drawn frame. The gutter still shows where
  // nothing starts: the next column's lines all begin after it, and nothing but short cells
  // and drawn tables (no line of running text) runs across it. Each piece then reads on the
  // side where it starts.
  const starts = new Uint16Array(cells);
  for (const f of fragments) {
    const a = Math.max(0, Math.floor(f.x0) - start);
    if (f.x1 - f.x0 >= width * SHORT_PIECE_SHARE && !f.table) {
      // A long line blocks every strip it runs over: it is running text, not a cell.
      const b = Math.min(cells - 1, Math.ceil(f.x1) - start);
      for (let x = a; x <= b; x++) starts[x]!++;
    } else {
      starts[a]!++;
    }
  }
  return test(stripsWhere(cells, (x) => starts[x] === 0), true);
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
    const [left, right] = sides(fragments, whole, box.x1 - box.x0);
    return [...readingRegions(left, pageWidth, depth + 1), ...readingRegions(right, pageWidth, depth + 1)];
  }
  if (depth >= MAX_CUT_DEPTH) return [fragments];
  // Bands: maximal groups of fragments whose vertical extents chain together.
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
  if (bands.length <= 1) return [fragments];
  // Merge consecutive bands into groups: a group with a gutter is read column by column.
  const out: Fragment[][] = [];
  let group: Fragment[] = [];
  let plain: Fragment[] = [];
  const flushPlain = () => { if (plain.length) { out.push(plain); plain = []; } };
  const flushGroup = () => {
    if (!group.length) return;
    const g = group; group = [];
    const cut = findGutter(g, bounds(g), pageWidth);
    if (cut === undefined) { plain.push(...g); return; }
    flushPlain();
    const b = bounds(g);
    const [left, right] = sides(g, cut, b.x1 - b.x0);
    out.push(...readingRegions(left, pageWidth, depth + 1));
    out.push(...readingRegions(right, pageWidth, depth + 1));
  };
  // A band is "columnar" when its lines sit on both sides of the page middle without crossing it.
  const mid = box.x0 + (box.x1 - box.x0) / 2;
  for (const b of bands) {
    const crosses = b.some((f) => f.x0 < mid - MIDDLE_CLEARANCE_PT && f.x1 > mid + MIDDLE_CLEARANCE_PT);
    const twoSided = b.some((f) => f.x1 <= mid + MIDDLE_CLEARANCE_PT) && b.some((f) => f.x0 >= mid - MIDDLE_CLEARANCE_PT);
    if (!crosses && twoSided) { group.push(...b); continue; }
    if (!crosses && group.length) { group.push(...b); continue; }
    flushGroup();
    plain.push(...b);
  }
  flushGroup();
  flushPlain();
  return out;
}

// Reading regions: bands of a region read together, headings across the columns that end the
// bands above them or cut the page into slices, and groups too small to show a gutter of their own.
import type { Fragment } from '../types.js';
import { bounds, type Box, type Gutter } from './box.js';
import { findGutter, proseLines } from './gutters.js';
import { bodySizeOf } from '../row-predicates.js';
import { leastOf, rowsOf } from '../rows.js';
import {
  ACROSS_HEADING_CLEAR_EM, BAND_GAP_PT, COLUMN_START_PT, HEADING_MAX_CHARS, LARGE_TYPE_SHARE, MIDDLE_CLEARANCE_PT, MIN_SIDE_ROWS,
} from '../thresholds.js';

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

/** Whether a fragment of the band runs across the middle `mid` of the region (a heading or a line across both columns). */
export function crossesMiddle(band: Fragment[], mid: number): boolean {
  return band.some((f) => f.x0 < mid - MIDDLE_CLEARANCE_PT && f.x1 > mid + MIDDLE_CLEARANCE_PT);
}

/** Whether a band has fragments on both sides of the middle `mid`: the lines of two columns side by side. */
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
export interface Part { fragments: Fragment[]; group: boolean; cut?: Gutter }

/**
 * Whether a group of a few lines sits in columns cut at `x`: no fragment crosses it and a line of
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

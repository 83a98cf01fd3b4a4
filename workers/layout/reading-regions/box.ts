// Reading regions: the boxes, gutters and baselines the other parts of the stage measure with.
import type { Fragment, Row } from '../types.js';

export interface Box { x0: number; x1: number; y0: number; y1: number }

/**
 * A column cut at `x`; `carriedOn` when the right column holds the rest of the left column's
 * table; `moved`, the fragments of the right column when the left column's overrun them (others
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

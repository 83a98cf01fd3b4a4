// Reading order of a page: a recursive XY cut into bands and text columns; the fragments
// of each region are read top to bottom. A table's own gutters do not make columns.
// The stage's parts: box.ts (measures), gutters.ts (where to cut), carried-on.ts (tables across
// a column break), slices.ts (bands and headings across the columns). The next stage uses readingRegions.
import type { Fragment } from '../types.js';
import { bounds } from './box.js';
import { findGutter, sides } from './gutters.js';
import {
  bandsOf, crossesMiddle, headingAcrossColumns, headingsShortOfGutter, keepPageColumns, sitsOnBothSides, slicesAround, type Part,
} from './slices.js';
import { MAX_CUT_DEPTH } from '../thresholds.js';

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

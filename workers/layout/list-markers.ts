// List markers: the bullets and numbers that open list items, and a marker set apart from
// its text by a gap, joined to that text.
import type { Fragment, Row } from './types.js';
import { joinSpans } from './rows.js';
import { MARKER_GAP_EM } from './thresholds.js';

export const BULLET = /^([•◦▪▫‣⁃∙●○■□▶►✓✔·*–—-])\s+/;
export const ORDERED = /^(\(?(?:[0-9]{1,3}|[a-z]|[ivx]{1,4})[.)])\s+/;
const LONE_MARKER = /^([•◦▪▫‣⁃∙●○■□▶►✓✔·*–—-]|\(?(?:[0-9]{1,3}|[a-z]|[ivx]{1,4})[.)])$/;

/** A bullet or number standing alone before a wide gap belongs to the text after it. */
export function attachMarkers(rows: Row[]): void {
  for (const row of rows) {
    const [first, second] = row.fragments;
    if (!first || !second || !LONE_MARKER.test(first.text.trim())) continue;
    if (second.x0 - first.x1 > first.size * MARKER_GAP_EM) continue;
    const merged: Fragment = {
      ...second,
      x0: first.x0, y0: Math.min(first.y0, second.y0), y1: Math.max(first.y1, second.y1),
      spans: joinSpans([first.spans, second.spans]),
      text: `${first.text.trim()} ${second.text}`,
    };
    row.fragments.splice(0, 2, merged);
  }
}

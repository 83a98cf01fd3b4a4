// What several stages of the layout engine ask of a row or a page's fragments: the body's type size,
// whether a row is a row of table cells, or a chart's labels and values. Shared here so that an
// earlier stage (reading regions) need not import a later one (aligned tables, structure).
import type { Fragment, Row } from './types.js';
import { BULLET } from './list-markers.js';
import { DEFAULT_BODY_SIZE } from './thresholds.js';

/**
 * The font size of the body text. Each fragment weighs its length squared: lines of running text
 * are long and table cells short, so a table set in smaller type that holds as many characters
 * as the prose around it does not make its size the body's.
 */
export function bodySizeOf(fragments: Fragment[]): number {
  const weight = new Map<number, number>();
  for (const f of fragments) {
    const s = Math.round(f.size * 2) / 2;
    weight.set(s, (weight.get(s) ?? 0) + f.text.length * f.text.length);
  }
  let best = DEFAULT_BODY_SIZE, count = -1;
  for (const [s, w] of weight) if (w > count) { best = s; count = w; }
  return best;
}

/** A row of cells: two or more fragments, not all monospaced (code keeps its own spacing), not a bulleted line. */
export function isCellRow(row: Row): boolean {
  return row.fragments.length >= 2 && !row.fragments.every((f) => f.mono) && !BULLET.test(row.fragments[0]!.text);
}

/** A chart's label or value: a number, a year, a percentage or an amount. */
const CHART_LABEL = /^[-+−–]?[$€£]?\d[\d.,]*%?$/;

/** Whether a fragment holds only chart labels, one or more ("46 50"). */
const isLabelFragment = (f: Fragment) => {
  const words = f.text.trim().split(/\s+/);
  return words.length > 0 && words.every((w) => CHART_LABEL.test(w));
};

/** Whether every fragment of a row is a chart's label or value (numbers down an axis, years along it, values over bars). */
export function isChartLabelRow(row: Row): boolean {
  return row.fragments.length > 0 && row.fragments.every(isLabelFragment);
}

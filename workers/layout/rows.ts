// Visual rows: fragments whose vertical centres line up, read left to right; and the spans
// of several fragments joined into one text, with words broken at a line end made whole.
import type { Fragment, Rect, Row, Span } from './types.js';
import { lineEndHyphen } from './hyphens.js';
import { ROW_CENTRE_MARGIN_SHARE, ROW_OVERLAP_PT } from './thresholds.js';

/**
 * The least and the greatest of a value over a list, folded rather than spread into arguments:
 * a hostile page can hold more rows than one call takes arguments.
 */
export const leastOf = <T>(list: readonly T[], value: (item: T) => number): number =>
  list.reduce((m, item) => Math.min(m, value(item)), Infinity);
export const greatestOf = <T>(list: readonly T[], value: (item: T) => number): number =>
  list.reduce((m, item) => Math.max(m, value(item)), -Infinity);

/** Groups fragments whose vertical centres fall within one another's band into rows, top to bottom. */
export function rowsOf(fragments: Fragment[]): Row[] {
  const sorted = [...fragments].sort((a, b) => (a.y0 + a.y1) - (b.y0 + b.y1));
  const rows: Row[] = [];
  let row: Row | undefined;
  for (const f of sorted) {
    const centre = (f.y0 + f.y1) / 2;
    // A table stands alone in its row.
    if (row && !f.table && !row.fragments[0]!.table
      && centre > row.y0 + (row.y1 - row.y0) * ROW_CENTRE_MARGIN_SHARE
      && centre < row.y1 - (row.y1 - row.y0) * ROW_CENTRE_MARGIN_SHARE && overlapsNone(row, f)) {
      row.fragments.push(f);
      row.x0 = Math.min(row.x0, f.x0); row.x1 = Math.max(row.x1, f.x1);
      if (f.size > row.size) { row.size = f.size; row.base = f.y1; }
      row.y0 = Math.min(row.y0, f.y0); row.y1 = Math.max(row.y1, f.y1);
      continue;
    }
    row = { x0: f.x0, x1: f.x1, y0: f.y0, y1: f.y1, base: f.y1, size: f.size, fragments: [f] };
    rows.push(row);
  }
  for (const r of rows) r.fragments.sort((a, b) => a.x0 - b.x0);
  return rows;
}

function overlapsNone(row: Row, f: Fragment): boolean {
  for (const other of row.fragments) {
    if (f.x0 < other.x1 - ROW_OVERLAP_PT && f.x1 > other.x0 + ROW_OVERLAP_PT) return false;
  }
  return true;
}

/** The box that fragments are drawn in (a fragment a rule moved counts where it is drawn); undefined for none. */
export function drawnBox(fragments: Iterable<Fragment>): Rect | undefined {
  let box: Rect | undefined;
  for (const f of fragments) {
    const [x0, y0, x1, y1] = f.drawnAt ?? [f.x0, f.y0, f.x1, f.y1];
    box = box ? [Math.min(box[0], x0), Math.min(box[1], y0), Math.max(box[2], x1), Math.max(box[3], y1)] : [x0, y0, x1, y1];
  }
  return box;
}

export function joinSpans(parts: Span[][], separator = ' '): Span[] {
  const out: Span[] = [];
  for (const part of parts) {
    if (!part.length) continue;
    if (out.length) {
      const last = out[out.length - 1]!;
      const first = part[0]!;
      // A word broken by a hyphen at the end of a line is joined again; a compound keeps it.
      const hyphen = separator === ' ' ? lineEndHyphen(last.text, first.text) : undefined;
      if (hyphen === 'join') last.text = last.text.slice(0, -1);
      else if (!hyphen && !/\s$/.test(last.text)) last.text += separator;
    }
    for (const s of part) out.push({ ...s });
  }
  return out;
}

export function rowSpans(row: Row): Span[] {
  return joinSpans(row.fragments.map((f) => f.spans));
}

export function rowText(row: Row): string {
  return row.fragments.map((f) => f.text).join(' ');
}

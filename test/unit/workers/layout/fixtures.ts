// Small layouts built in code for the layout engine's rule tests: fragments of text (fragments) at
// given positions, in PDF points with y growing down the page, as fragments.ts makes them from
// mupdf's glyphs. No PDF is involved: each test states the geometry its rule looks at.
import type { Fragment, Row, TableCells } from '../../../../workers/layout/types.js';
import { rowsOf } from '../../../../workers/layout/testing.js';

export interface Style { size?: number; bold?: boolean; italic?: boolean; mono?: boolean }

/** A fragment of text from x0 to x1 whose box starts at `top` and is `size` high (10 pt unless given). */
export function fragment(text: string, x0: number, x1: number, top: number, style: Style = {}): Fragment {
  const size = style.size ?? 10;
  const bold = style.bold ?? false, italic = style.italic ?? false, mono = style.mono ?? false;
  return {
    x0, x1, y0: top, y1: top + size, size, text,
    spans: [{ text, bold, italic, mono }], bold, italic, mono,
    charWidth: (x1 - x0) / Math.max(1, text.length),
  };
}

/** Fragments on one line at `top`: each cell given as [text, x0, x1]. */
export function line(top: number, cells: [string, number, number][], style: Style = {}): Fragment[] {
  return cells.map(([text, x0, x1]) => fragment(text, x0, x1, top, style));
}

/** The one row these fragments make (they must make one). */
export function rowOf(fragments: Fragment[]): Row {
  const rows = rowsOf(fragments);
  if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}`);
  return rows[0]!;
}

/** `count` lines of running text from x0 to x1, one every `step` points from `top`. */
export function prose(count: number, x0: number, x1: number, top: number, step = 14, style: Style = {}): Fragment[] {
  return Array.from({ length: count }, (_, k) => fragment(`running text line ${k + 1} of the column`, x0, x1, top + k * step, style));
}

/** A drawn table's stand-in: one fragment the size of the table, carrying its cells. */
export function drawnTable(
  x0: number, x1: number, y0: number, y1: number, cells: TableCells = { rows: [], openTop: false, openBottom: false },
): Fragment {
  return { ...fragment('', x0, x1, y0), y1, table: cells };
}

/** The texts of fragments, in the order given. */
export const texts = (fragments: Fragment[]): string[] => fragments.map((f) => f.text);

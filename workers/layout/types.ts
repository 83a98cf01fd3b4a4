// The shapes the converter's steps hand to one another: styled text spans, positioned
// fragments and the visual rows they form, drawn rules, table cells and document blocks.

/** A drawn box: x0, y0, x1, y1. */
export type Rect = [number, number, number, number];

/** A rule: `at` is its y (horizontal) or x (vertical); from..to its extent along it. */
export interface Rule {
  at: number; from: number; to: number;
  /** Where one drawn segment of a rule ends and the next starts (a rule drawn cell by cell: its cells' edges). */
  joints?: number[];
}

export interface LinkArea {
  x0: number; y0: number; x1: number; y1: number;
  uri: string;
}

export interface Span {
  text: string;
  bold: boolean;
  italic: boolean;
  mono: boolean;
  link?: string;
}

export interface Fragment {
  x0: number; x1: number; y0: number; y1: number;
  size: number;
  spans: Span[];
  text: string;
  bold: boolean;
  italic: boolean;
  mono: boolean;
  /** Mean advance of a glyph, to turn indentation of code into spaces. */
  charWidth: number;
  /** Set on the one fragment standing for a whole ruled table (its box is the table's). */
  table?: TableCells;
  /** Where the fragment is drawn, when a rule moved it to be read with others (a table row cut by a column break). */
  drawnAt?: Rect;
}

export interface Row {
  x0: number; x1: number; y0: number; y1: number;
  /** Baseline-ish reference: the bottom of the tallest fragment. */
  base: number;
  size: number;
  fragments: Fragment[];
}

export interface Cell {
  spans: Span[]; colspan: number; rowspan: number;
  /** Where the cell is drawn (absent for an empty cell of a table without rules), and on which page once the document is laid out. */
  box?: Rect; page?: number;
}

/** Cells of a table; open at the top or bottom when a break cut its first or last row. */
export interface TableCells { rows: Cell[][]; openTop: boolean; openBottom: boolean }

/** Where a block, or one piece of a block cut by a column or page break, is drawn: its page (1-based) and box. */
export interface Placement { page: number; box: Rect }

export type Block = (
  | { kind: 'heading'; size: number; bold: boolean; spans: Span[]; level: number }
  | { kind: 'paragraph'; spans: Span[] }
  | { kind: 'item'; depth: number; ordered: boolean; marker: string; spans: Span[] }
  | { kind: 'code'; lines: string[] }
  | { kind: 'table'; rows: Cell[][]; openTop?: boolean; openBottom?: boolean }
) & {
  /** The box of the rows the block was read from, on its region's page. */
  box?: Rect;
  /** Where it is drawn in the document, once laid out: one placement per piece, in reading order. */
  placed?: Placement[];
};

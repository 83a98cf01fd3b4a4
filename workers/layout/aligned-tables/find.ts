// Tables without ruling lines, found from column alignment: runs of cell rows whose fragments line
// up in columns split by empty gutters, with the lines that belong to them; not prose or lists
// set in columns.
import type { Fragment, Row } from '../types.js';
import { BULLET, ORDERED } from '../list-markers.js';
import { isCellRow } from '../row-predicates.js';
import { rowText } from '../rows.js';
import { columnsOf } from '../table-cells.js';
import {
  CELL_START_PT, COLUMN_EDGE_PT, FITS_COLUMN_EM, HEADER_STEP_EM, PROSE_COLUMN_SHARE, PROSE_LINE_MIN_WORDS, SIZE_CHANGE_PT,
  TABLE_ALIGNED_COLUMNS, TABLE_LINE_GAP_EM, TABLE_LONG_LINE_SHARE, TABLE_MAX_ROW_CHARS, TABLE_PITCH_LINES, TABLE_PITCH_SLACK_PT,
  TABLE_ROW_GAP_EM, TABLE_STEP_EM, WRAPPED_INDENT_EM,
} from '../thresholds.js';

/** A table found among a region's rows: its first and last row, and its columns. */
export interface TableFound { start: number; end: number; columns: { x0: number; x1: number }[] }

/** Whether every fragment of a row stays inside one column slot (never runs across the start of a column). */
export function fitsColumns(row: Row, columns: { x0: number; x1: number }[], tolerance: number): boolean {
  const right = columns[columns.length - 1]!.x1;
  for (const f of row.fragments) {
    if (f.x1 > right + tolerance) return false;
    for (let c = 1; c < columns.length; c++) {
      const edge = columns[c]!.x0;
      if (f.x0 < edge - tolerance && f.x1 > edge + tolerance) return false;
    }
  }
  return true;
}

/**
 * Whether a single line inside a run of cell rows stays in the table: wrapped cell text
 * (indented inside the table, however long the cell) or a row whose other cells are empty
 * (short, and not left of the table); never a line as wide as running text.
 */
export function isLineInTable(r: Row, tableLeft: number, tableWidth: number, bodySize: number): boolean {
  const indented = r.x0 > tableLeft + bodySize * WRAPPED_INDENT_EM;
  return indented || !(r.x1 - r.x0 > tableWidth * TABLE_LONG_LINE_SHARE || r.x0 < tableLeft - bodySize);
}

/**
 * The last cell row of the table whose first is `rows[i]`: cell rows follow one another,
 * with runs of single lines in the table between them, each gap at most TABLE_LINE_GAP_EM
 * (a line) or TABLE_ROW_GAP_EM (a cell row) of the body size. The table's edges are those of
 * its cell rows so far: a header whose corner cell is empty starts right of the rows under it.
 */
function lastCellRow(rows: Row[], i: number, cellRow: boolean[], ruled: boolean[], bodySize: number): number {
  let j = i;
  let tableLeft = rows[i]!.x0, tableRight = rows[i]!.x1;
  for (;;) {
    let k = j + 1;
    while (k < rows.length && !cellRow[k] && !ruled[k] && rows[k]!.y0 - rows[k - 1]!.y1 <= bodySize * TABLE_LINE_GAP_EM) {
      if (!isLineInTable(rows[k]!, tableLeft, tableRight - tableLeft, bodySize)) break;
      k++;
    }
    if (k < rows.length && cellRow[k] && rows[k]!.y0 - rows[k - 1]!.y1 <= bodySize * TABLE_ROW_GAP_EM) {
      j = k; tableLeft = Math.min(tableLeft, rows[k]!.x0); tableRight = Math.max(tableRight, rows[k]!.x1);
      continue;
    }
    return j;
  }
}

/**
 * The largest step from one line to the next that still keeps a line in the table: the row
 * pitch so far (the widest step between its lines, with some slack) or a few ems of the line's
 * size; with only a header to go by, up to two and a half lines (a line and its padding).
 */
export function rowStepLimit(pitch: number, size: number): number {
  return pitch > 0 ? Math.max(pitch * TABLE_PITCH_LINES + TABLE_PITCH_SLACK_PT, size * TABLE_STEP_EM) : size * HEADER_STEP_EM;
}

/**
 * The last row of the table whose cell rows are `rows[i..j]`: lines after the last cell row
 * still belong to it while they keep its row spacing and stay inside its columns (the wrapped
 * rest of the last row's cells, and rows whose cells right of the first are empty: labels of a
 * form left to fill in). The text after a table stands further off than its rows; a heading is
 * no row. A line starting at the left edge of a column other than the first is the wrapped rest
 * of a cell however long it is (the text after a table starts at the margin), and in the last
 * column it may run on past the lines above it; elsewhere a line longer than half the table is
 * the text after it.
 */
function lastRowAfterCells(
  rows: Row[], i: number, j: number, columns: { x0: number; x1: number }[], cellRow: boolean[], ruled: boolean[], bodySize: number,
): number {
  let end = j;
  if (columns.length < 2) return end;
  let left = columns[0]!.x0;
  const right = columns[columns.length - 1]!.x1;
  let pitch = 0;
  for (let k = i + 1; k <= j; k++) pitch = Math.max(pitch, rows[k]!.base - rows[k - 1]!.base);
  for (let k = j + 1; k < rows.length && !cellRow[k] && !ruled[k]; k++) {
    const r = rows[k]!, step = r.base - rows[k - 1]!.base;
    const inColumn = columns.findIndex((c, n) => n > 0 && Math.abs(r.x0 - c.x0) <= COLUMN_EDGE_PT);
    const apart = step > rowStepLimit(pitch, r.size) || r.y0 - rows[k - 1]!.y1 > bodySize * TABLE_LINE_GAP_EM;
    if (apart || Math.abs(r.size - rows[j]!.size) > SIZE_CHANGE_PT
      || (inColumn !== columns.length - 1 && !fitsColumns(r, columns, bodySize * FITS_COLUMN_EM))) break;
    left = Math.min(left, r.x0);
    if (r.x1 - r.x0 > (right - left) * TABLE_LONG_LINE_SHARE && inColumn < 0) break;
    pitch = Math.max(pitch, step);
    end = k;
  }
  return end;
}

/**
 * Whether the lines after one cell row are labels: all starting at one x, where its first cell
 * does or left of it (under an empty corner cell). After a line of prose with a wide space in
 * it, the lines that follow are long and run under its first cell.
 */
export function areLabelRows(head: Row, labels: Row[]): boolean {
  const first = head.fragments[0]!, x = labels[0]!.x0;
  if (Math.abs(x - first.x0) > COLUMN_EDGE_PT && labels.some((r) => r.x1 > first.x0)) return false;
  return labels.every((r) => Math.abs(r.x0 - x) <= COLUMN_EDGE_PT);
}

/**
 * Borderless tables among a region's rows: runs of cell rows (isCellRow) with the lines that
 * belong to them, two cell rows at least, or one followed by two or more label rows; columns
 * from alignment (columnsOf); not prose set with wide spaces, nor a list set in columns.
 */
export function findTables(rows: Row[], bodySize: number): TableFound[] {
  const found: TableFound[] = [];
  const cellRow = rows.map(isCellRow);
  const ruled = rows.map((r) => r.fragments.some((f) => f.table));
  let i = 0;
  while (i < rows.length) {
    if (!cellRow[i]) { i++; continue; }
    const j = lastCellRow(rows, i, cellRow, ruled, bodySize);
    const cellRows = rows.slice(i, j + 1).filter((_, k) => cellRow[i + k]).length;
    const columns = columnsOf(rows.slice(i, j + 1));
    const end = lastRowAfterCells(rows, i, j, columns, cellRow, ruled, bodySize);
    if ((cellRows >= 2 || (end - j >= 2 && areLabelRows(rows[i]!, rows.slice(j + 1, end + 1)))) && columns.length >= 2) {
      const span = rows.slice(i, end + 1);
      const avgLen = span.reduce((n, r) => n + rowText(r).length, 0) / span.length;
      const cols = end > j ? columnsOf(span) : columns;
      const isTable = avgLen < TABLE_MAX_ROW_CHARS
        && !listInColumns(span, cols) && cellsAlignOverRows(span, cols) && !proseInColumns(span, cols);
      if (isTable) found.push({ start: i, end, columns: cols });
    }
    i = end + 1;
  }
  return found;
}

/** The fragments of `rows` that open a cell in each column (start inside it, at most CELL_START_PT left of it). */
function cellStartsByColumn(rows: Row[], columns: { x0: number; x1: number }[]): Fragment[][] {
  return columns.map((c) => rows.flatMap((r) => r.fragments.filter((g) => g.x0 >= c.x0 - CELL_START_PT && g.x0 < c.x1)));
}

/**
 * Whether a table's cells line up over several rows: at least TABLE_ALIGNED_COLUMNS columns
 * each open a cell on two rows or more. Scattered fragments that happen to share a few lines (the
 * labels of a chart, a running head beside a caption) put each column's text on one row only.
 */
export function cellsAlignOverRows(rows: Row[], columns: { x0: number; x1: number }[]): boolean {
  return cellStartsByColumn(rows, columns).filter((cells) => cells.length >= 2).length >= TABLE_ALIGNED_COLUMNS;
}

/**
 * Two columns of prose side by side, not a table: in every column, at least
 * PROSE_COLUMN_SHARE of the fragments are lines of running text (PROSE_LINE_MIN_WORDS words or
 * more). A table has at least one column of short cells: names, numbers, marks.
 */
export function proseInColumns(rows: Row[], columns: { x0: number; x1: number }[]): boolean {
  const words = (f: Fragment) => f.text.trim().split(/\s+/).length;
  return cellStartsByColumn(rows, columns).every((cells) => cells.length > 0
    && cells.filter((f) => words(f) >= PROSE_LINE_MIN_WORDS).length >= cells.length * PROSE_COLUMN_SHARE);
}

/**
 * A list set in columns (a table of contents in two columns, say), not a table: in every
 * column, at least half the fragments that open a cell start with a list marker. A table numbers
 * its rows in one column at most.
 */
export function listInColumns(rows: Row[], columns: { x0: number; x1: number }[]): boolean {
  return columns.every((c) => {
    let cells = 0, marked = 0;
    for (const r of rows) {
      const f = r.fragments.find((g) => g.x0 >= c.x0 - CELL_START_PT && g.x0 < c.x1);
      if (!f) continue;
      cells++;
      if (ORDERED.test(`${f.text} `) || BULLET.test(`${f.text} `)) marked++;
    }
    return cells > 0 && marked * 2 >= cells;
  });
}

// Tables without ruling lines, found from column alignment: runs of rows whose pieces line
// up in columns split by empty gutters, built into cells, with spans for header cells over
// several columns or rows. Tables drawn with rules are found in rules.ts.
import type { Cell, Fragment, Row, Span } from './types.js';
import { drawnBox, greatestOf, joinSpans, leastOf, rowText, rowsOf } from './rows.js';
import { BULLET, ORDERED } from './list-markers.js';
import { CELL_ALIGN_PT, CELL_REACH_PT, PROSE_COLUMN_SHARE, PROSE_LINE_MIN_WORDS, TABLE_ALIGNED_COLUMNS, CELL_START_PT, COLUMN_EDGE_PT, CUT_ROW_MIN_PIECES, FITS_COLUMN_EM, GUTTER_CROSSING_SHARE, HEADER_STEP_EM, MAX_HEADER_ROWS, MAX_ROWS_UP, MAX_SCAN_WIDTH_PT, MIN_TABLE_GUTTER_PT, MOVED_ROW_STEP_LINES, MOVED_ROW_STEPS_SEEN, NEXT_COLUMN_SHARE, ROW_STEP_LINES, ROW_STEP_SLACK_PT, SIZE_CHANGE_PT, TABLE_LINE_GAP_EM, TABLE_LINE_STEP_EM, TABLE_LONG_LINE_SHARE, TABLE_MAX_ROW_CHARS, TABLE_PITCH_LINES, TABLE_PITCH_SLACK_PT, TABLE_ROW_GAP_EM, TABLE_STEP_EM, UNDER_HEADER_PT, WRAPPED_GAP_EM, WRAPPED_INDENT_EM, WRAPPED_ROW_MIN_LINES, LABEL_ROWS_UNDER_HEADER } from './thresholds.js';

/** A table found among a region's rows: its first and last row, and its columns. */
export interface TableFound { start: number; end: number; columns: { x0: number; x1: number }[] }

/**
 * Columns of a borderless table: x ranges that the fuller rows cover, separated by empty
 * gutters. Rows with fewer pieces than usual (headers spanning columns, wrapped lines)
 * would bridge gutters, so they do not vote; a piece lying outside every column found
 * (a label column whose other cells are empty) adds a column of its own.
 */
export function columnsOf(all: Row[], minGutter = MIN_TABLE_GUTTER_PT): { x0: number; x1: number }[] {
  const counts = all.map((r) => r.fragments.length).filter((n) => n >= 2).sort((a, b) => a - b);
  const typical = counts[Math.floor(counts.length / 2)] ?? 2;
  const full = all.filter((r) => r.fragments.length >= typical);
  const rows = full.length >= 2 ? full : all;
  const columns = gutterColumns(rows, minGutter);
  for (const r of all) for (const f of r.fragments) {
    if (columns.some((c) => f.x0 < c.x1 && f.x1 > c.x0)) continue;
    columns.push({ x0: f.x0, x1: f.x1 });
  }
  columns.sort((a, b) => a.x0 - b.x0);
  // Added pieces that overlap one another are one column.
  const out: { x0: number; x1: number }[] = [];
  for (const c of columns) {
    const last = out[out.length - 1];
    if (last && c.x0 < last.x1) last.x1 = Math.max(last.x1, c.x1);
    else out.push({ ...c });
  }
  return out;
}

/** Columns split by strips at least `minGutter` points wide that few rows cover, scanned in whole points. */
export function gutterColumns(rows: Row[], minGutter = MIN_TABLE_GUTTER_PT): { x0: number; x1: number }[] {
  let minX = Infinity, maxX = -Infinity;
  for (const r of rows) { minX = Math.min(minX, r.x0); maxX = Math.max(maxX, r.x1); }
  const start = Math.floor(minX);
  const cells = Math.ceil(maxX) - start + 1;
  if (!Number.isFinite(cells) || cells <= 0 || cells > MAX_SCAN_WIDTH_PT) return [];
  const cover = new Uint16Array(cells);
  for (const r of rows) for (const f of r.fragments) {
    const a = Math.max(0, Math.floor(f.x0) - start);
    const b = Math.min(cells - 1, Math.ceil(f.x1) - start);
    for (let x = a; x <= b; x++) cover[x]!++;
  }
  // Cells spanning columns cross gutters; a gutter may be crossed by a few of them.
  const allowed = Math.floor(rows.length * GUTTER_CROSSING_SHARE);
  const columns: { x0: number; x1: number }[] = [];
  let from = -1;
  let gapRun = 0;
  for (let x = 0; x <= cells; x++) {
    const open = x < cells && cover[x]! > allowed;
    if (open) {
      if (from < 0) from = x;
      else if (gapRun > 0 && gapRun < minGutter) { /* a narrow dip inside a column */ }
      gapRun = 0;
      continue;
    }
    gapRun++;
    if (from >= 0 && (gapRun >= minGutter || x === cells)) {
      columns.push({ x0: start + from, x1: start + x - gapRun + 1 });
      from = -1;
    }
  }
  return columns;
}

/** Whether every piece of a row stays inside one column slot (never runs across the start of a column). */
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

/** A row of cells: two or more pieces, not all monospaced (code keeps its own spacing), not a bulleted line. */
export function isCellRow(row: Row): boolean {
  return row.fragments.length >= 2 && !row.fragments.every((f) => f.mono) && !BULLET.test(row.fragments[0]!.text);
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
function lastRowAfterCells(rows: Row[], i: number, j: number, columns: { x0: number; x1: number }[], cellRow: boolean[], ruled: boolean[], bodySize: number): number {
  let end = j;
  if (columns.length < 2) return end;
  let left = columns[0]!.x0;
  const right = columns[columns.length - 1]!.x1;
  let pitch = 0;
  for (let k = i + 1; k <= j; k++) pitch = Math.max(pitch, rows[k]!.base - rows[k - 1]!.base);
  for (let k = j + 1; k < rows.length && !cellRow[k] && !ruled[k]; k++) {
    const r = rows[k]!, step = r.base - rows[k - 1]!.base;
    const inColumn = columns.findIndex((c, n) => n > 0 && Math.abs(r.x0 - c.x0) <= COLUMN_EDGE_PT);
    if (step > rowStepLimit(pitch, r.size) || r.y0 - rows[k - 1]!.y1 > bodySize * TABLE_LINE_GAP_EM || Math.abs(r.size - rows[j]!.size) > SIZE_CHANGE_PT
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
      if (avgLen < TABLE_MAX_ROW_CHARS && !listInColumns(span, cols) && cellsAlignOverRows(span, cols) && !proseInColumns(span, cols)) found.push({ start: i, end, columns: cols });
    }
    i = end + 1;
  }
  return found;
}

/** The pieces of `rows` that open a cell in each column (start inside it, at most CELL_START_PT left of it). */
function cellStartsByColumn(rows: Row[], columns: { x0: number; x1: number }[]): Fragment[][] {
  return columns.map((c) => rows.flatMap((r) => r.fragments.filter((g) => g.x0 >= c.x0 - CELL_START_PT && g.x0 < c.x1)));
}

/**
 * Whether a table's cells line up over several rows: at least TABLE_ALIGNED_COLUMNS columns
 * each open a cell on two rows or more. Scattered pieces that happen to share a few lines (the
 * labels of a chart, a running head beside a caption) put each column's text on one row only.
 */
export function cellsAlignOverRows(rows: Row[], columns: { x0: number; x1: number }[]): boolean {
  return cellStartsByColumn(rows, columns).filter((cells) => cells.length >= 2).length >= TABLE_ALIGNED_COLUMNS;
}

/**
 * Two columns of prose side by side, not a table: in every column, at least
 * PROSE_COLUMN_SHARE of the pieces are lines of running text (PROSE_LINE_MIN_WORDS words or
 * more). A table has at least one column of short cells: names, numbers, marks.
 */
export function proseInColumns(rows: Row[], columns: { x0: number; x1: number }[]): boolean {
  const words = (f: Fragment) => f.text.trim().split(/\s+/).length;
  return cellStartsByColumn(rows, columns).every((cells) => cells.length > 0
    && cells.filter((f) => words(f) >= PROSE_LINE_MIN_WORDS).length >= cells.length * PROSE_COLUMN_SHARE);
}

/**
 * A list set in columns (a table of contents in two columns, say), not a table: in every
 * column, at least half the pieces that open a cell start with a list marker. A table numbers
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

export function buildTable(rows: Row[], columns: { x0: number; x1: number }[]): Cell[][] {
  return cellsOfRows(logicalRows(rows, columns), columns);
}

/** Rows of a table: visual rows closer than the usual line step belong to one logical row. */
export function logicalRows(rows: Row[], columns: { x0: number; x1: number }[]): Row[][] {
  const steps: number[] = [];
  for (let k = 1; k < rows.length; k++) steps.push(stepFromAbove(rows, k));
  // The line step inside a cell: the smallest of the steps that are at least a line apart
  // (cells centred vertically can put lines closer than that). One wrapped header cell is
  // enough to show it, so no quantile.
  const real = steps.filter((s, k) => s >= rows[k + 1]!.size * TABLE_LINE_STEP_EM).sort((a, b) => a - b);
  const lineStep = real.length ? real[0]! : 0;
  const bimodal = real.some((s) => s > lineStep * ROW_STEP_LINES + ROW_STEP_SLACK_PT);
  if (!bimodal && oneWrappedRow(rows, columns)) return [rows];
  const groups: Row[][] = [];
  rows.forEach((row, k) => {
    // Whether the table has two spacings at all is read from the baselines; which one a line
    // follows, from the cell it continues.
    if (k === 0 || !bimodal || stepBetween(rows[k - 1]!, row) > lineStep * ROW_STEP_LINES + ROW_STEP_SLACK_PT) groups.push([row]);
    else groups[groups.length - 1]!.push(row);
  });
  return groups;
}

/**
 * The step down to row `k` from the nearest line above that has a piece over one of its pieces
 * (the line before in the same column): the smallest such step over its pieces. Cells set at
 * different heights (a header cell centred beside cells of two lines) put lines of different
 * cells between the lines of one, closer than any line step; without a piece above, the step
 * from the row before.
 */
export function stepFromAbove(rows: Row[], k: number): number {
  let best = Infinity;
  for (const f of rows[k]!.fragments) {
    for (let j = k - 1; j >= 0; j--) {
      const over = rows[j]!.fragments.find((g) => f.x0 < g.x1 && f.x1 > g.x0);
      if (over) { if (f.y1 - over.y1 > 0) best = Math.min(best, f.y1 - over.y1); break; }
    }
  }
  return Number.isFinite(best) ? best : rows[k]!.base - rows[k - 1]!.base;
}

/**
 * The step from one visual row to the next, taken where a piece of the lower row sits right
 * under a piece of the upper one (the next line of the same cell): a row's baseline comes from
 * one of its pieces, and in a header whose cells start at different heights (a cell spanning
 * rows beside cells of a second header row) that piece may belong to another cell than the
 * one the lower line continues. Without a piece above, the rows' baselines.
 */
function stepBetween(upper: Row, lower: Row): number {
  let best = Infinity;
  for (const f of lower.fragments) for (const g of upper.fragments) {
    if (f.x0 < g.x1 && f.x1 > g.x0) best = Math.min(best, f.y1 - g.y1);
  }
  return Number.isFinite(best) && best > 0 ? best : lower.base - upper.base;
}

/**
 * Whether evenly spaced lines are one row whose cells wrap rather than rows of one line each:
 * the first line fills every column, each column's text runs down from the top without a gap
 * (cells aligned to the top end at different lines), and the first column ends before the
 * last line. Rows of their own would each start with a label in the first column; a row cut
 * off by a page break (the rest of a row from the page before) looks the same.
 */
export function oneWrappedRow(rows: Row[], columns: { x0: number; x1: number }[]): boolean {
  if (rows.length < WRAPPED_ROW_MIN_LINES || columns.length < 2) return false;
  const filled = rows.map((r) => columns.map((c) => r.fragments.some((f) => f.x0 < c.x1 && f.x1 > c.x0)));
  if (!filled[0]!.every(Boolean)) return false;
  const depth = columns.map((_, c) => {
    let n = 0;
    while (n < rows.length && filled[n]![c]) n++;
    // Text again below a gap in the column: a new row.
    return filled.slice(n).some((f) => f[c]) ? -1 : n;
  });
  return depth.every((d) => d > 0) && depth[0]! < rows.length;
}

/** A piece placed in a table: the column its text starts in and the last column it reaches into. */
interface Placed { f: Fragment; first: number; last: number }

/** A cell being gathered: the pieces starting in one column, and the last column any of them reaches into. */
interface CellParts { first: number; last: number; spans: Span[][]; pieces: Fragment[] }

/** The column a piece starting at x is in: the last column that starts left of x, or within CELL_START_PT right of it (text set a little left of its column). */
function columnStartingAt(columns: { x0: number; x1: number }[], x: number): number {
  let best = 0;
  for (let c = 0; c < columns.length; c++) if (x >= columns[c]!.x0 - CELL_START_PT) best = c;
  return best;
}

/** The last column a piece ending at x reaches into: one whose start it passes by more than CELL_REACH_PT (a piece overhanging a gutter a little stays in its column). */
function columnReachedBy(columns: { x0: number; x1: number }[], x: number): number {
  let best = 0;
  for (let c = 0; c < columns.length; c++) if (x > columns[c]!.x0 + CELL_REACH_PT) best = c;
  return best;
}

/** A piece placed in the columns: a piece reaching past its column's end spans the columns it reaches. */
function placePiece(f: Fragment, columns: { x0: number; x1: number }[]): Placed {
  const first = columnStartingAt(columns, f.x0);
  return { f, first, last: Math.max(first, columnReachedBy(columns, f.x1)) };
}

/** The pieces of a logical row gathered into one cell per starting column, left to right. */
function cellPartsOf(placed: Placed[]): CellParts[] {
  const parts: CellParts[] = [];
  const byColumn = new Map<number, CellParts>();
  for (const p of placed) {
    let cell = byColumn.get(p.first);
    if (!cell) { cell = { first: p.first, last: p.last, spans: [], pieces: [] }; byColumn.set(p.first, cell); parts.push(cell); }
    cell.last = Math.max(cell.last, p.last);
    cell.spans.push(p.f.spans);
    cell.pieces.push(p.f);
  }
  return parts.sort((a, b) => a.first - b.first);
}

/**
 * One row of cells from its placed pieces: each cell spans the columns its pieces reach, empty
 * columns get blank cells, and a cell starting under a spanning cell before it is folded into
 * that one. `only` keeps the blank cells to those columns (the lower row of a two-level header);
 * `rowspanFor` gives the single-column cells of those columns a rowspan of two (beside it).
 */
function rowCells(placed: Placed[], width: number, only?: Set<number>, rowspanFor?: Set<number>): Cell[] {
  const cells: Cell[] = [];
  const blank = (c: number) => { if (!only || only.has(c)) cells.push({ spans: [], colspan: 1, rowspan: rowspanFor?.has(c) ? 2 : 1 }); };
  let next = 0;
  let prevPieces: Fragment[] = [];
  for (const part of cellPartsOf(placed)) {
    if (part.first < next) { // overlaps a spanning cell before it: fold it in
      const prev = cells[cells.length - 1];
      if (prev) {
        prev.spans = joinSpans([prev.spans, joinSpans(part.spans)]);
        prevPieces = prevPieces.concat(part.pieces);
        prev.box = drawnBox(prevPieces);
      }
      continue;
    }
    while (next < part.first) blank(next++);
    const colspan = part.last - part.first + 1;
    prevPieces = part.pieces;
    cells.push({ spans: joinSpans(part.spans), colspan, rowspan: colspan === 1 && rowspanFor?.has(part.first) ? 2 : 1, box: drawnBox(part.pieces) });
    next += colspan;
  }
  while (next < width) blank(next++);
  return cells;
}

/**
 * A header cell spanning columns over cells of its own (a two-level header): the pieces of the
 * logical row that sit under the spanning cells (from UNDER_HEADER_PT above their foot down), one
 * column each, and the columns under them. Undefined when the row has no spanning cell, or the
 * pieces under it are none or all of the row.
 */
function twoLevelHeader(placed: Placed[]): { lower: Placed[]; under: Set<number> } | undefined {
  const spanning = placed.filter((p) => p.last > p.first);
  if (!spanning.length) return undefined;
  const under = new Set<number>();
  for (const p of spanning) for (let c = p.first; c <= p.last; c++) under.add(c);
  const cut = greatestOf(spanning, (p) => p.f.y1);
  const lower = placed.filter((p) => p.f.y0 >= cut - UNDER_HEADER_PT && p.last === p.first && under.has(p.first));
  return lower.length && lower.length < placed.length ? { lower, under } : undefined;
}

/**
 * The cells of a table whose logical rows (each one or more visual rows) and columns are known.
 * A two-level header makes two rows; the cells beside its spanning cells span both.
 */
export function cellsOfRows(groups: Row[][], columns: { x0: number; x1: number }[]): Cell[][] {
  const out: Cell[][] = [];
  for (const group of groups) {
    const placed = group.flatMap((row) => row.fragments.map((f) => placePiece(f, columns)));
    const header = twoLevelHeader(placed);
    if (header) {
      const { lower, under } = header;
      const upper = placed.filter((p) => !lower.includes(p));
      const beside = new Set<number>();
      for (let c = 0; c < columns.length; c++) if (!under.has(c)) beside.add(c);
      out.push(rowCells(upper, columns.length, undefined, beside));
      out.push(rowCells(lower, columns.length, under));
      continue;
    }
    out.push(rowCells(placed, columns.length));
  }
  spanHeaders(out, columns.length);
  return out;
}

const isBlank = (c: Cell) => c.spans.every((s) => !s.text.trim());

/**
 * A header of several levels, its group cells left-aligned: a group cell already wider
 * than one column reaches on to the next cell of its row (the empty cells after it are
 * the rest of its group), and a header cell with nothing under it down to the lowest
 * header row spans those rows (the column's one label).
 */
export function spanHeaders(rows: Cell[][], width: number): void {
  let last = -1;
  for (let r = 0; r < Math.min(rows.length - 1, MAX_HEADER_ROWS); r++) if (rows[r]!.some((c) => c.colspan > 1 && !isBlank(c))) last = r;
  if (last < 0) return;
  const head = rows.slice(0, last + 2);
  if (head.some((row) => row.some((c) => c.rowspan > 1) || row.reduce((n, c) => n + c.colspan, 0) !== width)) return;
  // Each header row as the cell starting in every column (undefined under a colspan).
  const grid = head.map((row) => {
    const at: (Cell | undefined)[] = new Array<Cell | undefined>(width).fill(undefined);
    let x = 0;
    for (const c of row) { at[x] = c; x += c.colspan; }
    return at;
  });
  const gone = new Set<Cell>();
  for (let r = 0; r <= last; r++) {
    const at = grid[r]!;
    for (let x = 0; x < width; x++) {
      const c = at[x];
      if (!c || c.colspan < 2 || isBlank(c)) continue;
      let end = x + c.colspan;
      while (end < width && at[end] && at[end]!.colspan === 1 && isBlank(at[end]!)) { gone.add(at[end]!); at[end] = undefined; end++; c.colspan++; }
    }
  }
  for (let r = 0; r <= last; r++) {
    for (let x = 0; x < width; x++) {
      const c = grid[r]![x];
      if (!c || c.colspan !== 1 || isBlank(c) || gone.has(c)) continue;
      const below = grid.slice(r + 1).map((at) => at[x]);
      if (below.length && below.every((b) => b && b.colspan === 1 && isBlank(b))) {
        for (const b of below) gone.add(b!);
        c.rowspan = below.length + 1;
      }
    }
  }
  if (!gone.size) return;
  for (let r = 0; r < head.length; r++) rows[r] = rows[r]!.filter((c) => !gone.has(c));
}

/**
 * A table row cut off from its table by a column break: the first row of a text column whose
 * pieces start where the pieces of the last row of the column before start, shifted by the
 * distance between the two columns (at least three of them: a line of prose has one piece).
 * That row (with the lines of its wrapped cells under it) is moved, shifted back, under the
 * last row of the column before, so that a header left at the foot of a column and its rows
 * at the top of the next (or a table of one row on each side) read as one table. Returns the
 * regions as they are when no row is cut so.
 */
export function joinRowsAcrossColumnBreaks(regions: Fragment[][], bodySize: number): Fragment[][] {
  const out = regions.slice();
  for (let k = 0; k + 1 < out.length; k++) {
    let a = rowsOf(out[k]!), b = rowsOf(out[k + 1]!);
    if (a.length < 2 || !b.length || holdsDrawnTable(a[a.length - 1]!) || holdsDrawnTable(b[0]!)) continue;
    const offset = leastOf(b, (r) => r.x0) - leastOf(a, (r) => r.x0);
    if (!isNextColumn(a, b, offset)) continue;
    if (b[0]!.fragments.length === 1) {
      if (moveLabelRows(out, k, a, b, offset, bodySize)) continue;
      if (!moveRestOfCutRow(out, k, a, b, offset)) continue;
      a = rowsOf(out[k]!); b = rowsOf(out[k + 1]!);
    }
    const m = lastTableRow(a), head = a[m], first = b[0];
    if (!head || !first || first.fragments.length < CUT_ROW_MIN_PIECES || !cellsStartAlike(head, first, offset)) continue;
    const n = 1 + linesGoingWith(b, first);
    const dy = a[a.length - 1]!.base + movedRowStep(a, m) - first.base;
    moveRows(out, k, b.slice(0, n), offset, dy);
  }
  return out;
}

/**
 * Label rows of a table carried into the next column: rows whose cells right of the first are
 * empty (a form's labels), the table at the foot of the column before (findTables, reaching its
 * last line) being a header alone or already holding such rows. The next column opens with
 * single lines in the table's type size, each starting where its first column does and ending
 * before its second (shifted back by the column pitch), stepping as rows may (rowStepLimit);
 * they are moved under the table a row step
 * below (its widest step, or theirs). A header alone takes LABEL_ROWS_UNDER_HEADER of them at
 * least: one short line after a table is more likely a note than a row.
 */
function moveLabelRows(out: Fragment[][], k: number, a: Row[], b: Row[], offset: number, bodySize: number): boolean {
  const table = findTables(a, bodySize).find((t) => t.end === a.length - 1);
  if (!table || table.columns.length < 2) return false;
  const [first, second] = [table.columns[0]!, table.columns[1]!];
  const inFirstColumn = (r: Row, dx: number) => r.fragments.every((f) => f.x1 - dx <= second.x0 + CELL_ALIGN_PT) && Math.abs(r.x0 - dx - first.x0) <= CELL_ALIGN_PT;
  const rows = a.slice(table.start, table.end + 1);
  const size = rows[0]!.size;
  let step = 0;
  for (let r = 1; r < rows.length; r++) step = Math.max(step, rows[r]!.base - rows[r - 1]!.base);
  let n = 0;
  while (n < b.length && b[n]!.fragments.length === 1 && inFirstColumn(b[n]!, offset) && Math.abs(b[n]!.size - size) <= SIZE_CHANGE_PT
    && (n === 0 || b[n]!.base - b[n - 1]!.base <= rowStepLimit(step, b[n]!.size))) n++;
  const hasLabels = rows.slice(1).some((r) => !isCellRow(r) && inFirstColumn(r, 0));
  if (!n || (!hasLabels && n < LABEL_ROWS_UNDER_HEADER)) return false;
  for (let r = 1; r < n; r++) step = Math.max(step, b[r]!.base - b[r - 1]!.base);
  moveRows(out, k, b.slice(0, n), offset, a[a.length - 1]!.base + step - b[0]!.base);
  return true;
}

/** A drawn table's stand-in among a row's pieces: a drawn table is never cut across a column break here (rules.ts joins its halves). */
function holdsDrawnTable(row: Row): boolean {
  return row.fragments.some((f) => f.table);
}

/**
 * The next column: to the right by NEXT_COLUMN_SHARE of this column's width at least (`offset`
 * apart), and starting above where this one ends.
 */
function isNextColumn(a: Row[], b: Row[], offset: number): boolean {
  return offset >= (greatestOf(a, (r) => r.x1) - leastOf(a, (r) => r.x0)) * NEXT_COLUMN_SHARE && b[0]!.y0 <= a[a.length - 1]!.y0;
}

/**
 * Whether the first row of the next column continues the table whose last row is `head`: every
 * piece of the row with fewer pieces starts, within CELL_ALIGN_PT, where a piece of the other
 * starts, the next column shifted back by `offset`.
 */
function cellsStartAlike(head: Row, first: Row, offset: number): boolean {
  const [fewer, more] = head.fragments.length <= first.fragments.length
    ? [head.fragments, first.fragments.map((f) => f.x0 - offset)]
    : [first.fragments.map((f) => ({ x0: f.x0 - offset })), head.fragments.map((f) => f.x0)];
  return fewer.every((f) => more.some((x) => Math.abs(x - f.x0) <= CELL_ALIGN_PT));
}

/**
 * How many lines under the moved row go with it: while each is packed under the one before
 * (WRAPPED_GAP_EM) and its pieces each start where one of the row's pieces does and end before
 * the next one starts (its wrapped cells, and the rows after it in the same columns); a line of
 * prose after the table runs across them.
 */
function linesGoingWith(b: Row[], first: Row): number {
  const starts = first.fragments.map((f) => f.x0);
  const inCell = (f: Fragment) => starts.some((x, c) => Math.abs(f.x0 - x) <= CELL_ALIGN_PT && (c + 1 >= starts.length || f.x1 <= starts[c + 1]! + CELL_ALIGN_PT));
  let n = 1;
  while (n < b.length && b[n]!.y0 - b[n - 1]!.y1 <= b[n]!.size * WRAPPED_GAP_EM && b[n]!.fragments.every(inCell)) n++;
  return n - 1;
}

/**
 * The step a moved row is placed at below the column's last line: the widest of the steps into
 * the table's last MOVED_ROW_STEPS_SEEN rows, and into each of its rows of CUT_ROW_MIN_PIECES
 * cells or more (from the line above, in the table too: each of its pieces within a cell), and
 * MOVED_ROW_STEP_LINES of its last row's height at least. The last row's cells may wrap over
 * many lines, all a line step apart; a step into a row of cells higher up shows the row pitch.
 */
function movedRowStep(a: Row[], m: number): number {
  const head = a[m]!;
  let step = (head.y1 - head.y0) * MOVED_ROW_STEP_LINES;
  for (let r = Math.max(1, m - MOVED_ROW_STEPS_SEEN + 1); r <= m; r++) step = Math.max(step, a[r]!.base - a[r - 1]!.base);
  const starts = [head.x0, ...cellStarts(a, m)].sort((p, q) => p - q);
  const inCells = (row: Row) => row.fragments.every((f) => starts.some((x, c) => Math.abs(f.x0 - x) <= CELL_ALIGN_PT && (c + 1 >= starts.length || f.x1 <= starts[c + 1]! + CELL_ALIGN_PT)));
  for (let r = m; r >= 1 && m - r < MAX_ROWS_UP && inCells(a[r - 1]!); r--) {
    if (a[r]!.fragments.length >= CUT_ROW_MIN_PIECES) step = Math.max(step, a[r]!.base - a[r - 1]!.base);
  }
  return step;
}

/**
 * Moves rows from the top of region k + 1 to region k, shifted back by the column pitch and down
 * by dy; each piece keeps where it was drawn (drawnAt), so the boxes given for cells and blocks (drawnBox) stay where the page shows them.
 */
function moveRows(out: Fragment[][], k: number, rows: Row[], offset: number, dy: number): void {
  const moved = new Set(rows.flatMap((r) => r.fragments));
  out[k] = out[k]!.concat([...moved].map((f) => ({ ...f, x0: f.x0 - offset, x1: f.x1 - offset, y0: f.y0 + dy, y1: f.y1 + dy, drawnAt: f.drawnAt ?? [f.x0, f.y0, f.x1, f.y1] })));
  out[k + 1] = out[k + 1]!.filter((f) => !moved.has(f));
}

/**
 * The index of the last table row of a column's rows: the last row of three or more pieces,
 * with nothing under it but the wrapped lines of its cells after the first; -1 if none.
 */
function lastTableRow(a: Row[]): number {
  let m = a.length - 1;
  while (m >= 0 && a[m]!.fragments.length < CUT_ROW_MIN_PIECES) m--;
  if (m < 0 || a.length - m > MAX_ROWS_UP) return -1;
  const starts = cellStarts(a, m);
  const under = a.slice(m + 1).every((r) => r.fragments.every((f) => starts.some((s) => Math.abs(s - f.x0) <= CELL_ALIGN_PT)));
  return under ? m : -1;
}

/**
 * Where the cells after the first start in the table whose last row is `a[m]`: the starts of
 * its rows of three or more pieces, up to that row (a cell left empty in the last row, its text
 * all carried on in the next column, still starts where the rows above have it).
 */
function cellStarts(a: Row[], m: number): number[] {
  const first = a[m]!.x0;
  const starts: number[] = [];
  for (let r = m; r >= 0 && m - r < MAX_ROWS_UP; r--) {
    if (a[r]!.fragments.length < CUT_ROW_MIN_PIECES) continue;
    if (Math.abs(a[r]!.x0 - first) > CELL_ALIGN_PT) break;
    for (const f of a[r]!.fragments.slice(1)) if (!starts.some((s) => Math.abs(s - f.x0) <= CELL_ALIGN_PT)) starts.push(f.x0);
  }
  return starts;
}

/**
 * The rest of a row cut by a column break: single lines at the top of the next column, each
 * starting (shifted back by the column pitch) where a cell other than the first of the
 * column's last table row starts, while that row's wrapped lines run on at the foot of the
 * column before. They are moved under those lines, a line step below, as the rest of their
 * cells; a cell the break left empty in its row has all its text over there, and its lines go
 * onto the row's own line. The first column is left out: prose at the top of the next column
 * starts there.
 */
function moveRestOfCutRow(out: Fragment[][], k: number, a: Row[], b: Row[], offset: number): boolean {
  const m = lastTableRow(a);
  if (m < 0) return false;
  const starts = cellStarts(a, m);
  const atStart = (x: number) => starts.some((s) => Math.abs(s - x) <= CELL_ALIGN_PT);
  let n = 0;
  while (n < b.length && b[n]!.fragments.length === 1 && atStart(b[n]!.x0 - offset)
    && (n === 0 || b[n]!.y0 - b[n - 1]!.y1 <= b[n]!.size * WRAPPED_GAP_EM)) n++;
  if (!n) return false;
  const last = a[a.length - 1]!;
  const lineStep = a.length - m > 1 ? last.base - a[a.length - 2]!.base : (last.y1 - last.y0) * WRAPPED_GAP_EM;
  const x = b[0]!.x0 - offset;
  const emptyCell = !a.slice(m).some((r) => r.fragments.some((f) => Math.abs(f.x0 - x) <= CELL_ALIGN_PT));
  const dy = (emptyCell ? a[m]!.base : last.base + lineStep) - b[0]!.base;
  moveRows(out, k, b.slice(0, n), offset, dy);
  return true;
}

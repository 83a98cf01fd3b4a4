// The columns and cells of a table, from its rows of fragments: shared by the tables found from
// their rules (underlined-tables.ts) and those found from alignment (aligned-tables/). Columns are
// x ranges split by empty gutters; a cell's fragments are placed in the column they start in or
// reach, with spans for header cells over several columns or rows.
import type { Cell, Fragment, Row, Span } from './types.js';
import { drawnBox, greatestOf, joinSpans } from './rows.js';
import {
  CELL_REACH_PT, CELL_START_PT, GUTTER_CROSSING_SHARE, MAX_HEADER_ROWS, MAX_SCAN_WIDTH_PT, MIN_TABLE_GUTTER_PT, UNDER_HEADER_PT,
} from './thresholds.js';

/**
 * Columns of a borderless table: x ranges that the fuller rows cover, separated by empty
 * gutters. Rows with fewer fragments than usual (headers spanning columns, wrapped lines)
 * would bridge gutters, so they do not vote; a fragment lying outside every column found
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
  // Added fragments that overlap one another are one column.
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

/** A fragment placed in a table: the column its text starts in and the last column it reaches into. */
interface Placed { f: Fragment; first: number; last: number }

/** A cell being gathered: the fragments starting in one column, and the last column any of them reaches into. */
interface CellParts { first: number; last: number; spans: Span[][]; fragments: Fragment[] }

/**
 * The column a fragment starting at x is in: the last column that starts left of x, or within
 * CELL_START_PT right of it (text set a little left of its column).
 */
function columnStartingAt(columns: { x0: number; x1: number }[], x: number): number {
  let best = 0;
  for (let c = 0; c < columns.length; c++) if (x >= columns[c]!.x0 - CELL_START_PT) best = c;
  return best;
}

/**
 * The last column a fragment ending at x reaches into: one whose start it passes by more than
 * CELL_REACH_PT (a fragment overhanging a gutter a little stays in its column).
 */
function columnReachedBy(columns: { x0: number; x1: number }[], x: number): number {
  let best = 0;
  for (let c = 0; c < columns.length; c++) if (x > columns[c]!.x0 + CELL_REACH_PT) best = c;
  return best;
}

/** A fragment placed in the columns: a fragment reaching past its column's end spans the columns it reaches. */
function placeFragment(f: Fragment, columns: { x0: number; x1: number }[]): Placed {
  const first = columnStartingAt(columns, f.x0);
  return { f, first, last: Math.max(first, columnReachedBy(columns, f.x1)) };
}

/** The fragments of a logical row gathered into one cell per starting column, left to right. */
function cellPartsOf(placed: Placed[]): CellParts[] {
  const parts: CellParts[] = [];
  const byColumn = new Map<number, CellParts>();
  for (const p of placed) {
    let cell = byColumn.get(p.first);
    if (!cell) { cell = { first: p.first, last: p.last, spans: [], fragments: [] }; byColumn.set(p.first, cell); parts.push(cell); }
    cell.last = Math.max(cell.last, p.last);
    cell.spans.push(p.f.spans);
    cell.fragments.push(p.f);
  }
  return parts.sort((a, b) => a.first - b.first);
}

/**
 * One row of cells from its placed fragments: each cell spans the columns its fragments reach, empty
 * columns get blank cells, and a cell starting under a spanning cell before it is folded into
 * that one. `only` keeps the blank cells to those columns (the lower row of a two-level header);
 * `rowspanFor` gives the single-column cells of those columns a rowspan of two (beside it).
 */
function rowCells(placed: Placed[], width: number, only?: Set<number>, rowspanFor?: Set<number>): Cell[] {
  const cells: Cell[] = [];
  const blank = (c: number) => { if (!only || only.has(c)) cells.push({ spans: [], colspan: 1, rowspan: rowspanFor?.has(c) ? 2 : 1 }); };
  let next = 0;
  let prevFragments: Fragment[] = [];
  for (const part of cellPartsOf(placed)) {
    if (part.first < next) { // overlaps a spanning cell before it: fold it in
      const prev = cells[cells.length - 1];
      if (prev) {
        prev.spans = joinSpans([prev.spans, joinSpans(part.spans)]);
        prevFragments = prevFragments.concat(part.fragments);
        prev.box = drawnBox(prevFragments);
      }
      continue;
    }
    while (next < part.first) blank(next++);
    const colspan = part.last - part.first + 1;
    prevFragments = part.fragments;
    const rowspan = colspan === 1 && rowspanFor?.has(part.first) ? 2 : 1;
    cells.push({ spans: joinSpans(part.spans), colspan, rowspan, box: drawnBox(part.fragments) });
    next += colspan;
  }
  while (next < width) blank(next++);
  return cells;
}

/**
 * A header cell spanning columns over cells of its own (a two-level header): the fragments of the
 * logical row that sit under the spanning cells (from UNDER_HEADER_PT above their foot down), one
 * column each, and the columns under them. Undefined when the row has no spanning cell, or the
 * fragments under it are none or all of the row.
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
    const placed = group.flatMap((row) => row.fragments.map((f) => placeFragment(f, columns)));
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
      while (end < width && at[end] && at[end]!.colspan === 1 && isBlank(at[end]!)) {
        gone.add(at[end]!);
        at[end] = undefined;
        end++;
        c.colspan++;
      }
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

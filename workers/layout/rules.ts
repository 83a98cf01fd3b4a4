// Ruled tables: drawn lines and thin rectangles become horizontal and vertical rules, rules
// that touch form grids, and a grid of two or more boxes is a table whose cells are
// the grid's boxes, merged wherever the rule between two boxes is missing (spanning cells).
import type { Cell, Fragment, Rect, Rule, Span, TableCells } from './types.js';
import { greatestOf, joinSpans, leastOf, rowsOf } from './rows.js';
import { COLLINEAR_PT, MAX_RULE_PAIRS, OPEN_GRID_PT, RULE_JOIN_PT, RULE_THICKNESS_PT } from './thresholds.js';

export interface Rules { horizontal: Rule[]; vertical: Rule[] }

function merge(rules: Rule[]): Rule[] {
  rules.sort((a, b) => a.at - b.at || a.from - b.from);
  const out: Rule[] = [];
  for (const r of rules) {
    // Collinear segments that touch or overlap are one rule (borders are drawn cell by cell).
    let same: Rule | undefined;
    for (let k = out.length - 1; k >= 0 && !same && out[k]!.at >= r.at - COLLINEAR_PT; k--) {
      const o = out[k]!;
      if (Math.abs(o.at - r.at) <= COLLINEAR_PT && r.from <= o.to + RULE_JOIN_PT && r.from >= o.from - RULE_JOIN_PT) same = o;
    }
    if (same) {
      // A segment starting where the rule so far ends: drawn cell by cell, the joint is a cell's edge.
      if (r.from >= same.to - RULE_JOIN_PT && r.to > same.to + RULE_JOIN_PT) (same.joints ??= []).push((same.to + r.from) / 2);
      same.to = Math.max(same.to, r.to);
      continue;
    }
    out.push({ ...r });
  }
  return out;
}

/** Rules from drawn boxes: thin ones are lines; the edges of filled rectangles are not used. */
export function rulesOf(boxes: Rect[]): Rules {
  const horizontal: Rule[] = [];
  const vertical: Rule[] = [];
  for (const [x0, y0, x1, y1] of boxes) {
    const w = x1 - x0, h = y1 - y0;
    if (h <= RULE_THICKNESS_PT && w > RULE_THICKNESS_PT) horizontal.push({ at: (y0 + y1) / 2, from: x0, to: x1 });
    else if (w <= RULE_THICKNESS_PT && h > RULE_THICKNESS_PT) vertical.push({ at: (x0 + x1) / 2, from: y0, to: y1 });
  }
  return { horizontal: merge(horizontal), vertical: merge(vertical) };
}

function clusters(values: number[]): number[] {
  const sorted = [...values].sort((a, b) => a - b);
  const out: number[][] = [];
  for (const v of sorted) {
    const last = out[out.length - 1];
    if (last && v - last[last.length - 1]! <= RULE_JOIN_PT) last.push(v);
    else out.push([v]);
  }
  return out.map((c) => c.reduce((a, b) => a + b, 0) / c.length);
}

const covers = (rules: Rule[], at: number, point: number) =>
  rules.some((r) => Math.abs(r.at - at) <= RULE_JOIN_PT && r.from <= point && r.to >= point);

export interface RuledTable extends TableCells { x0: number; x1: number; y0: number; y1: number }

interface Grid { xs: number[]; ys: number[]; h: Rule[]; v: Rule[]; openTop: boolean; openBottom: boolean }

function find(parent: number[], i: number): number {
  while (parent[i] !== i) { parent[i] = parent[parent[i]!]!; i = parent[i]!; }
  return i;
}

/** Grids of touching rules with two or more boxes. */
function grids(rules: Rules): Grid[] {
  const { horizontal: H, vertical: V } = rules;
  if (H.length < 1 || V.length < 2 || H.length * V.length > MAX_RULE_PAIRS) return [];
  const parent = Array.from({ length: H.length + V.length }, (_, i) => i);
  for (let i = 0; i < H.length; i++) for (let j = 0; j < V.length; j++) {
    const h = H[i]!, v = V[j]!;
    if (v.at >= h.from - RULE_JOIN_PT && v.at <= h.to + RULE_JOIN_PT && h.at >= v.from - RULE_JOIN_PT && h.at <= v.to + RULE_JOIN_PT) {
      parent[find(parent, i)] = find(parent, H.length + j);
    }
  }
  const groups = new Map<number, { h: Rule[]; v: Rule[] }>();
  for (let i = 0; i < H.length + V.length; i++) {
    const root = find(parent, i);
    let g = groups.get(root);
    if (!g) { g = { h: [], v: [] }; groups.set(root, g); }
    if (i < H.length) g.h.push(H[i]!); else g.v.push(V[i - H.length]!);
  }
  const out: Grid[] = [];
  for (const g of groups.values()) {
    if (g.h.length < 1 || g.v.length < 2) continue;
    const xs = clusters(g.v.map((r) => r.at));
    const ys = clusters(g.h.map((r) => r.at));
    // Column rules running past the first or last row rule: a row cut by a page or column
    // break, whose open side closes the grid.
    const top = leastOf(g.v, (r) => r.from), bottom = greatestOf(g.v, (r) => r.to);
    const openTop = top < ys[0]! - OPEN_GRID_PT, openBottom = bottom > ys[ys.length - 1]! + OPEN_GRID_PT;
    if (openTop) { ys.unshift(top); g.h.push({ at: top, from: xs[0]!, to: xs[xs.length - 1]! }); }
    if (openBottom) { ys.push(bottom); g.h.push({ at: bottom, from: xs[0]!, to: xs[xs.length - 1]! }); }
    // Two columns, or one column of two or more rows (a single framed box is no table).
    const columns = xs.length - 1, rows = ys.length - 1;
    if ((columns >= 2 && rows >= 1) || (columns === 1 && rows >= 2)) out.push({ xs, ys, openTop, openBottom, ...g });
  }
  return out;
}

function cellSpans(fragments: Fragment[]): Span[] {
  return joinSpans(rowsOf(fragments).map((row) => joinSpans(row.fragments.map((f) => f.spans))));
}

/**
 * Finds ruled tables among a page's fragments. Returns the tables with their cells filled
 * and the fragments that are not inside any of them.
 */
export function ruledTables(fragments: Fragment[], rules: Rules): { tables: RuledTable[]; rest: Fragment[] } {
  const tables: RuledTable[] = [];
  let rest = fragments;
  for (const { xs, ys, h, v, openTop, openBottom } of grids(rules)) {
    const nx = xs.length - 1, ny = ys.length - 1;
    const x0 = xs[0]!, x1 = xs[nx]!, y0 = ys[0]!, y1 = ys[ny]!;
    const parent = Array.from({ length: nx * ny }, (_, i) => i);
    const id = (r: number, c: number) => r * nx + c;
    for (let r = 0; r < ny; r++) for (let c = 0; c < nx; c++) {
      const midY = (ys[r]! + ys[r + 1]!) / 2, midX = (xs[c]! + xs[c + 1]!) / 2;
      if (c + 1 < nx && !covers(v, xs[c + 1]!, midY)) parent[find(parent, id(r, c + 1))] = find(parent, id(r, c));
      if (r + 1 < ny && !covers(h, ys[r + 1]!, midX)) parent[find(parent, id(r + 1, c))] = find(parent, id(r, c));
    }
    const inside: Fragment[] = [];
    const outside: Fragment[] = [];
    for (const f of rest) {
      const cx = (f.x0 + f.x1) / 2, cy = (f.y0 + f.y1) / 2;
      (cx > x0 && cx < x1 && cy > y0 && cy < y1 ? inside : outside).push(f);
    }
    // Each merged box: its top-left grid cell, extent, and the fragments whose centre it holds.
    const boxes = new Map<number, { r0: number; c0: number; r1: number; c1: number; fragments: Fragment[] }>();
    for (let r = 0; r < ny; r++) for (let c = 0; c < nx; c++) {
      const root = find(parent, id(r, c));
      const b = boxes.get(root);
      if (!b) boxes.set(root, { r0: r, c0: c, r1: r, c1: c, fragments: [] });
      else { b.r0 = Math.min(b.r0, r); b.c0 = Math.min(b.c0, c); b.r1 = Math.max(b.r1, r); b.c1 = Math.max(b.c1, c); }
    }
    const slot = (values: number[], x: number) => {
      let k = 0;
      while (k < values.length - 2 && x > values[k + 1]!) k++;
      return k;
    };
    for (const f of inside) {
      const root = find(parent, id(slot(ys, (f.y0 + f.y1) / 2), slot(xs, (f.x0 + f.x1) / 2)));
      boxes.get(root)!.fragments.push(f);
    }
    const filled = [...boxes.values()].filter((b) => b.fragments.length > 0).length;
    if (filled < 2) continue;
    // A grid row where no box starts (only lower parts of taller boxes) is no row of its own.
    const live = new Array<boolean>(ny).fill(false);
    for (const b of boxes.values()) live[b.r0] = true;
    const rows: Cell[][] = Array.from({ length: ny }, () => []);
    for (const b of [...boxes.values()].sort((a, c) => a.r0 - c.r0 || a.c0 - c.c0)) {
      let rowspan = 0;
      for (let r = b.r0; r <= b.r1; r++) if (live[r]) rowspan++;
      const box: Rect = [xs[b.c0]!, ys[b.r0]!, xs[b.c1 + 1]!, ys[b.r1 + 1]!];
      rows[b.r0]!.push({ spans: cellSpans(b.fragments), colspan: b.c1 - b.c0 + 1, rowspan, box });
    }
    tables.push({ x0, x1, y0, y1, rows: rows.filter((r) => r.length > 0), openTop, openBottom });
    rest = outside;
  }
  return { tables, rest };
}

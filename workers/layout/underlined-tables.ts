// Tables ruled only by a line under each row: no column rules and no frame, so rules.ts finds
// no grid in them. A stack of horizontal rules of one width, with text packed tightly between
// them, is such a table: each band between two rules is one row, however many lines its cells
// wrap onto, and the row above the first rule is the header. Columns come from alignment, as
// for borderless tables (aligned-tables.ts).
import type { Cell, Fragment, Row, Rule } from './types.js';
import type { RuledTable } from './rules.js';
import { greatestOf, rowsOf } from './rows.js';
import { cellsOfRows, columnsOf } from './table-cells.js';
import { MIN_TABLE_GUTTER_PT, RULED_GUTTER_EM, RULE_JOIN_PT } from './thresholds.js';
import {
  CROSSED_START_PT, CROSSED_STARTS, IN_COLUMN_PT, LINE_END_SLACK_PT, MIN_TABLE_RULE_PT, ON_RULE_PT, SAME_RULE_END_PT, TIGHT_GAP_EM,
  WORD_SPACE_EM,
} from './thresholds.js';
import {
  CARRIED_RULES_MIN, COLUMN_PITCH_MAX_SHARE, COLUMN_PITCH_MIN_SHARE, COLUMN_START_PT, MIN_RULES_WITHOUT_HEADER,
} from './thresholds.js';

/**
 * The text lines between two heights, or undefined when they do not look like table cells:
 * a line wider than the rules (prose running past the table's edges), or a gap from a rule to
 * the text or from line to line wider than cell padding and line spacing allow (a paragraph's
 * margin: the table has ended). Tight is measured in the lines' own type size.
 */
function band(fragments: Fragment[], from: number, to: number, top: number, bottom: number): Row[] | undefined {
  const inside = fragments.filter((f) => (f.y0 + f.y1) / 2 > top && (f.y0 + f.y1) / 2 < bottom && f.x1 > from && f.x0 < to);
  if (!inside.length || inside.some((f) => f.x0 < from - SAME_RULE_END_PT || f.x1 > to + SAME_RULE_END_PT)) return undefined;
  const lines = rowsOf(inside);
  let above = top;
  for (const line of lines) {
    if (line.y0 - above > tightGap(line)) return undefined;
    above = line.y1;
  }
  return bottom - above > tightGap(lines[lines.length - 1]!) ? undefined : lines;
}

/** The widest gap cell padding plus line spacing leaves inside a table: most of a line's height. */
const tightGap = (line: Row) => line.size * TIGHT_GAP_EM;

/**
 * The header: lines just above the first rule, each packed tightly on the one below it and
 * inside the rules' width. None when the first rule is a top border with nothing on it.
 */
function headerAbove(fragments: Fragment[], from: number, to: number, rule: number): Row[] {
  const candidates = rowsOf(fragments.filter((f) => f.y1 <= rule + ON_RULE_PT && f.x1 > from && f.x0 < to));
  const out: Row[] = [];
  let below = rule;
  for (let k = candidates.length - 1; k >= 0; k--) {
    const line = candidates[k]!;
    if (below - line.y1 > tightGap(line) || line.x0 < from - SAME_RULE_END_PT || line.x1 > to + SAME_RULE_END_PT) break;
    out.unshift(line);
    below = line.y0;
  }
  return out;
}

/**
 * A row cut by a column or page break: lines packed tightly under the last rule with no rule
 * under them, running to the foot of the table's column (nothing else below at its width). Its
 * underline is drawn where the row ends, at the top of the next column or page.
 */
function cutRow(fragments: Fragment[], from: number, to: number, rule: number): Row[] {
  const below = rowsOf(fragments.filter((f) => f.y0 >= rule && f.x1 > from && f.x0 < to));
  const out: Row[] = [];
  let above = rule;
  for (const line of below) {
    if (line.y0 - above > tightGap(line) || line.x0 < from - SAME_RULE_END_PT || line.x1 > to + SAME_RULE_END_PT) return [];
    out.push(line);
    above = line.y1;
  }
  return out;
}

/**
 * Whether a band's lines are one row's cells wrapped line by line: in every column, the first
 * word of each line would not have fitted at the end of the line above it, short of the
 * column's widest line, as a line breaker leaves them. Rows of their own (the body between a
 * head rule and a foot rule) leave room at the end of their lines.
 */
function wrappedLines(lines: Row[], columns: { x0: number; x1: number }[]): boolean {
  let pairs = 0;
  for (const c of columns) {
    const inColumn = lines.map((l) => l.fragments.filter((f) => f.x0 >= c.x0 - IN_COLUMN_PT && f.x0 < c.x1));
    const right = greatestOf(inColumn.flat(), (f) => f.x1);
    for (let k = 1; k < inColumn.length; k++) {
      const above = inColumn[k - 1]!, line = inColumn[k]!;
      if (!above.length || !line.length) continue;
      const end = greatestOf(above, (f) => f.x1);
      const first = line[0]!;
      const word = first.text.trimStart().split(/\s+/)[0]!;
      const wordWidth = (first.x1 - first.x0) * word.length / Math.max(1, first.text.trim().length);
      if (end + first.size * WORD_SPACE_EM + wordWidth <= right - LINE_END_SLACK_PT) return false;
      pairs++;
    }
  }
  return pairs > 0;
}

/**
 * One rule-bounded band as logical rows: one row, its wrapped lines joined, except where a
 * later line has text in every column. That is a row of its own (a band holding several full
 * rows is the body between the rules of a table ruled only at its head and foot), unless the
 * band's lines are wrapped cells throughout.
 */
function rowsOfBand(lines: Row[], columns: { x0: number; x1: number }[]): Row[][] {
  if (wrappedLines(lines, columns)) return [lines];
  const full = (line: Row) => columns.every((c) => line.fragments.some((f) => f.x0 < c.x1 && f.x1 > c.x0));
  const out: Row[][] = [];
  lines.forEach((line, k) => {
    if (k === 0 || full(line)) out.push([line]);
    else out[out.length - 1]!.push(line);
  });
  return out;
}

/** The type size most of the rows' fragments are set in. */
function typeSizeOf(lines: Row[]): number {
  const sizes = lines.flatMap((l) => l.fragments.map((f) => f.size)).sort((a, b) => a - b);
  return sizes[Math.floor(sizes.length / 2)] ?? 0;
}

/**
 * The columns of a table ruled under its rows: strips between its fragments that the rows leave
 * empty, from RULED_GUTTER_EM of the type size, never asking more than a borderless table does.
 * Small type sets its cells closer than a borderless table's gutter; the rules already say
 * these lines are a table.
 */
function ruledColumnsOf(lines: Row[]): { x0: number; x1: number }[] {
  return columnsOf(lines, Math.min(MIN_TABLE_GUTTER_PT, typeSizeOf(lines) * RULED_GUTTER_EM));
}

/**
 * The columns of a table ruled under its rows, from the text of its rows under the first rule
 * when two lines or more lie there (ruledColumnsOf; a header cell spans the columns of its own
 * cells below, and header lines as full as the rows would join those columns), and a column for
 * each stretch between two cell edges that every rule of the stack shows (each drawn cell by cell,
 * joints within RULE_JOIN_PT) where no text lies: a column left empty to fill in. Only where no
 * fragment crosses those edges: the text keeps to the cells the rules draw.
 */
function columnsWithEmpty(lines: Row[], body: Row[], stack: Rule[]): { x0: number; x1: number }[] {
  const columns = ruledColumnsOf(body.length >= 2 ? body : lines);
  const first = stack[0]!;
  const shared = (first.joints ?? []).filter((x) => stack.every((r) => (r.joints ?? []).some((y) => Math.abs(x - y) <= RULE_JOIN_PT)));
  // A fragment across a joint is a cell spanning those the rules draw (a header over several levels).
  const crossed = lines.some((l) => l.fragments.some((f) => shared.some((x) => f.x0 < x - RULE_JOIN_PT && f.x1 > x + RULE_JOIN_PT)));
  if (stack.length < 2 || !shared.length || crossed) return columns;
  const edges = [first.from, ...shared, first.to];
  for (let k = 0; k + 1 < edges.length; k++) {
    const x0 = edges[k]!, x1 = edges[k + 1]!;
    if (!columns.some((c) => c.x0 < x1 && c.x1 > x0)) columns.push({ x0, x1 });
  }
  return columns.sort((a, b) => a.x0 - b.x0);
}

/** Two rules of one width: both ends within SAME_RULE_END_PT of each other's. */
function sameWidth(a: Rule, b: Rule): boolean {
  return Math.abs(a.from - b.from) <= SAME_RULE_END_PT && Math.abs(a.to - b.to) <= SAME_RULE_END_PT;
}

/**
 * The rules of one width below `first`, as long as the bands between them read as rows (band):
 * the stack, from `first` down, and the lines of each band. Rules another table used, or on the
 * last rule of the stack, are passed over.
 */
function ruleStackFrom(first: Rule, long: Rule[], used: Set<Rule>, fragments: Fragment[]): { stack: Rule[]; bands: Row[][] } {
  const stack: Rule[] = [first];
  const bands: Row[][] = [];
  for (const next of long) {
    const lowest = stack[stack.length - 1]!.at;
    if (next.at <= lowest + ON_RULE_PT || used.has(next) || !sameWidth(next, first)) continue;
    const lines = band(fragments, first.from, first.to, lowest, next.at);
    if (!lines) break;
    stack.push(next);
    bands.push(lines);
  }
  return { stack, bands };
}

/**
 * Whether the stack marks enough rows to be a table: a header and one row at least, or
 * MIN_RULES_WITHOUT_HEADER rules (a top border, the rule under the header, the rule at the foot);
 * a single rule under a line is an underline or a separator.
 */
function marksRows(stack: Rule[], header: Row[], lines: Row[]): boolean {
  return stack.length >= 2 && lines.length >= 2 && (header.length > 0 || stack.length >= MIN_RULES_WITHOUT_HEADER);
}

/**
 * A fragment of the rows under the rules (`body`) running across the starts of CROSSED_STARTS other
 * fragments is no cell: the rules reach past the table's column into the next one (a table too wide
 * for it), under that column's lines. Such a table is left to the reading order and to alignment.
 * Header fragments may: a header cell spans the columns of its own cells below.
 */
function fragmentsCrossCellStarts(lines: Row[], body: Row[]): boolean {
  const starts = lines.flatMap((l) => l.fragments.map((f) => f.x0));
  const crossesStarts = (f: Fragment) =>
    starts.filter((x) => x > f.x0 + CROSSED_START_PT && x < f.x1 - CROSSED_START_PT).length >= CROSSED_STARTS;
  return body.some((l) => l.fragments.some(crossesStarts));
}

/**
 * A one-column stack is a table only when MIN_RULES_WITHOUT_HEADER rules or more mark its rows
 * off (a list boxed by lines); with fewer, two rules around a paragraph are more likely a frame.
 */
function isFrame(columns: { x0: number; x1: number }[], stack: Rule[]): boolean {
  return columns.length < 2 && stack.length < MIN_RULES_WITHOUT_HEADER;
}

/**
 * The table itself: the header, each band's logical rows and the cut row at the foot, in cells.
 * A row above the first rule may be the rest of a row cut at the foot of the column before
 * (appendBlocks joins the halves only when that table ended open).
 */
function underlinedTable(stack: Rule[], header: Row[], bands: Row[][], tail: Row[], columns: { x0: number; x1: number }[]): RuledTable {
  const first = stack[0]!, last = stack[stack.length - 1]!.at;
  const groups: Row[][] = [];
  if (header.length) groups.push(header);
  for (const lines of bands) groups.push(...rowsOfBand(lines, columns));
  if (tail.length) groups.push(tail);
  const rows: Cell[][] = cellsOfRows(groups, columns);
  const y0 = header.length ? header[0]!.y0 : first.at;
  const y1 = tail.length ? tail[tail.length - 1]!.y1 : last;
  return { x0: first.from, x1: first.to, y0, y1, rows, openTop: header.length > 0, openBottom: tail.length > 0 };
}

/**
 * Finds tables ruled by row underlines among a page's fragments, given its horizontal rules
 * that no ruled grid used. Returns them with their cells filled and the fragments left over.
 */
export function underlinedTables(fragments: Fragment[], horizontal: Rule[]): { tables: RuledTable[]; rest: Fragment[] } {
  const long = horizontal.filter((r) => r.to - r.from >= MIN_TABLE_RULE_PT).sort((a, b) => a.at - b.at);
  const tables: RuledTable[] = [];
  let rest = fragments;
  const used = new Set<Rule>();
  for (const first of long) {
    if (used.has(first)) continue;
    const { from, to } = first;
    const { stack, bands } = ruleStackFrom(first, long, used, rest);
    const header = headerAbove(rest, from, to, first.at);
    const tail = cutRow(rest, from, to, stack[stack.length - 1]!.at);
    const allLines = [...header, ...bands.flat(), ...tail];
    if (!marksRows(stack, header, allLines)) continue;
    if (fragmentsCrossCellStarts(allLines, [...bands.flat(), ...tail])) {
      for (const r of stack) used.add(r); // nor is any lower part of the stack a table of its own
      continue;
    }
    const columns = columnsWithEmpty(allLines, [...bands.flat(), ...tail], stack);
    if (isFrame(columns, stack)) continue;
    for (const r of stack) used.add(r);
    tables.push(underlinedTable(stack, header, bands, tail, columns));
    const inTable = new Set(allLines.flatMap((l) => l.fragments));
    rest = rest.filter((f) => !inTable.has(f));
  }
  return { tables, rest };
}

/** One part of a table carried on into the next column: its rules and the fragments read with them. */
interface TablePart { fragments: Fragment[]; horizontal: Rule[] }

/**
 * A table too wide for its column, ruled under its rows and carried on into the next: the next
 * column's rules are the column's own moved by one column pitch (between COLUMN_PITCH_MIN_SHARE
 * and COLUMN_PITCH_MAX_SHARE of the page), and they overlap the overrunning part's. Undefined
 * unless CARRIED_RULES_MIN rules are so moved. The fragments where the parts overlap go to the part
 * whose cell starts they fall on: a fragment one pitch right of another start is the next column's,
 * one a pitch left of another start stays (the overrun's last cells), whichever is nearer.
 */
export function carriedOnRuleParts(fragments: Fragment[], horizontal: Rule[], pageWidth: number): [TablePart, TablePart] | undefined {
  const long = horizontal.filter((r) => r.to - r.from >= MIN_TABLE_RULE_PT);
  const pitchOf = (a: Rule, b: Rule) => {
    const pitch = b.from - a.from;
    const moved = pitch >= pageWidth * COLUMN_PITCH_MIN_SHARE && pitch <= pageWidth * COLUMN_PITCH_MAX_SHARE;
    return moved && b.from < a.to && Math.abs(b.to - a.to - pitch) <= SAME_RULE_END_PT ? pitch : undefined;
  };
  const pairs = long.flatMap((a) => long.flatMap((b) => {
    const pitch = pitchOf(a, b);
    return pitch === undefined ? [] : [{ a, b, pitch }];
  }));
  if (!pairs.length) return undefined;
  const movedAlike = (pitch: number) => new Set(pairs.filter((p) => Math.abs(p.pitch - pitch) <= SAME_RULE_END_PT).map((p) => p.b));
  const most = greatestOf(pairs, (p) => movedAlike(p.pitch).size);
  const pitch = pairs.find((p) => movedAlike(p.pitch).size === most)!.pitch;
  const next = movedAlike(pitch);
  if (next.size < CARRIED_RULES_MIN) return undefined;
  const edge = Math.min(...[...next].map((r) => r.from));
  const starts = fragments.map((f) => f.x0);
  const nearest = (x: number) => Math.min(...starts.map((s) => Math.abs(s - x)));
  const isNext = (f: Fragment) => {
    if (f.x0 < edge - COLUMN_START_PT) return false;
    const back = nearest(f.x0 - pitch), ahead = nearest(f.x0 + pitch);
    return back <= COLUMN_START_PT ? back < ahead : ahead > COLUMN_START_PT;
  };
  const right = fragments.filter(isNext);
  const inRight = new Set(right);
  return [
    { fragments: fragments.filter((f) => !inRight.has(f)), horizontal: horizontal.filter((r) => !next.has(r)) },
    { fragments: right, horizontal: [...next] },
  ];
}

/**
 * underlinedTables on a page: a table carried on into the next column over its own overrun
 * (carriedOnRuleParts) is found part by part, so neither part's rows take the other's cells.
 */
export function underlinedTablesOfPage(
  fragments: Fragment[], horizontal: Rule[], pageWidth: number,
): { tables: RuledTable[]; rest: Fragment[] } {
  const parts = carriedOnRuleParts(fragments, horizontal, pageWidth);
  if (!parts) return underlinedTables(fragments, horizontal);
  const found = parts.map((p) => underlinedTables(p.fragments, p.horizontal));
  return { tables: found.flatMap((f) => f.tables), rest: found.flatMap((f) => f.rest) };
}

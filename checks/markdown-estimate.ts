// The layout estimate for /v1/pdf/from-markdown: WeasyPrint's CPU time, from above, read off the
// Markdown's source lines without parsing it (checks/markdown.ts refuses, before payment, what passes
// its budget). The page it lays out on is markdown-page.ts's, the stylesheet's own figures.
import { ADVANCE_PT, BOX_LIMIT, CELL_INSET_PT, CHARS_PER_LINE, CODE_CHARS_PER_LINE, RUN_LIMIT, TEXT_WIDTH_PT } from './markdown-page.js';

// WeasyPrint's CPU time grows with the lines of text and the elements it lays out: 1 MB of
// one-letter list items, paragraphs, headings or table cells ran for minutes and past the 1.5 GiB
// cap, while 1 MB of plain prose takes 8 s and 1 MB of README and CHANGELOG files about 30 s.
// Counting elements exactly means parsing the Markdown, which takes up to 2 s for 1 MB of tiny
// blocks: too long on the server's main thread for a request nobody has paid for. This scan of the
// source lines estimates from above, in milliseconds, what WeasyPrint will spend, and
// checks/markdown.ts refuses, before payment, more than layoutBudgetMs allows. It counts:
// - every line outside a fenced code block: its lines of text at CHARS_PER_LINE columns (a wide
//   East Asian character counts two, a tab eight; at least one, even blank), plus a text node per
//   BOX_LIMIT characters (the renderer starts new ones), plus every character of a run longer than
//   RUN_LIMIT without a space;
// - every `>` and list marker opening a line; every heading, with its lines at half the width;
// - every `[` and `<` (a link, image or autolink needs one), every run of `*`, `_` and `~` (an
//   emphasis or strikethrough needs two), every `` ` `` (a code span needs two), every line ending
//   in `\` or two spaces (a line break);
// - every table, and every cell with its lines in the narrowest width its column can get: columns
//   are sized from their longest cell (4 to 40 characters), so a long cell has at least 1/columns
//   of the width, and in a table of 22 columns or more, a character per line;
// - in a fenced code block opened at the left margin after a blank line (FENCE), every line at
//   CODE_CHARS_PER_LINE columns, its characters and text nodes, and nothing else: marks in code are
//   not elements. Lines of any other fence, and indented lines, are counted as code and as text,
//   and weigh the more of the two;
// - the height of all those lines, squared (PAGE_LINE_COST_MS).
// Each is weighed by LAYOUT_COST_MS, WeasyPrint's CPU per item on the benchmark machine, fitted as
// an upper bound (bench/from-markdown.ts, "Hostile Markdown"): 128 documents (100 hostile shapes, 27
// README and CHANGELOG files from node_modules, the benchmark document) were each typeset, and the
// weights are the least total estimate that is at least every measured time (tables and heading
// lines weigh more, bench/notes/markdown-layout-cost.md). The estimate is within
// a few percent of the time for the slowest shapes, and 1.0 to 1.7 times it for real documents
// (1.3 for the benchmark document).
export const LAYOUT_COST_MS = {
  textLine: 0.48,
  blankLine: 0.5,
  textNode: 1.06,
  runCharacter: 0.0012,
  listItem: 1.84,
  quote: 0.45,
  heading: 0.33,
  headingLine: 0.33,
  link: 1.01,
  emphasis: 0.41,
  codeMark: 0.51,
  lineBreak: 0.57,
  table: 1.1,
  cell: 0.91,
  cellLine: 0.26,
  fence: 0.45,
  codeLine: 0.33,
  codeCharacter: 0.0086,
} as const;

// Past a few hundred pages WeasyPrint spends more on each page the more pages there are: 3-character
// code lines took 5.6 s for 323 pages and 12.8 s for 646, 1 MB of long headings (1,128 pages) 21.6 s
// against a linear estimate of 17.7 s. So the estimate adds, for the height of the lines (every line
// of text or code, blank line, heading and table row, each as the lines of text it is about as high
// as), this many milliseconds times that height squared: 3 s for 40,000 lines (about 650 pages).
const PAGE_LINE_COST_MS = 1.9e-6;
// A single line of hundreds of kilobytes costs more per byte the longer it is: one 1 MB word took
// 10.7 ms per KB against 8.0 at 285 KB; 524 KB of `ab**cd**…` 114 ms per KB against 82 at 40 KB
// (60.3 s against a linear estimate of 59.6). So a line adds its long-run characters squared, and
// its marks squared: 2 s for a 1 MB word, 10 s for the 131,000 emphasis runs of that 524 KB line.
const RUN_CHARACTER_COST_MS = 2e-9;
const LINE_MARK_COST_MS = 6e-7;
const HEADING_PAGE_LINES = 3; // a heading's line at half the width, with its margins (measured: 2.6 for h2, 2.4 for h1)
const ROW_PAGE_LINES = 2; // a one-line table row with its padding and rule
const MAX_COLUMN_WEIGHT = 40;
const TAB_COLUMNS = 8;

const linesOf = (characters: number, perLine: number) => Math.max(1, Math.ceil(characters / Math.max(1, Math.floor(perLine))));
const cost = LAYOUT_COST_MS;

/**
 * Link marks (`[`, `<`), code marks and runs of emphasis marks (`*`, `_`, `~`), weighed, and their
 * number squared (LINE_MARK_COST_MS); one pass over the text.
 */
function marksIn(text: string): number {
  let units = 0;
  let marks = 0;
  let inEmphasisRun = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charAt(i);
    const emphasis = char === '*' || char === '_' || char === '~';
    if (emphasis && !inEmphasisRun) { units += cost.emphasis; marks += 1; }
    inEmphasisRun = emphasis;
    if (char === '[' || char === '<') { units += cost.link; marks += 1; } else if (char === '`') { units += cost.codeMark; marks += 1; }
  }
  return units + LINE_MARK_COST_MS * marks * marks;
}

function cellCost(cell: string, columns: number): number {
  const length = cell.trim().length;
  const share = Math.min(Math.max(length, 4), MAX_COLUMN_WEIGHT) / (MAX_COLUMN_WEIGHT * columns);
  return cost.cell + linesOf(length, (TEXT_WIDTH_PT * share - CELL_INSET_PT) / ADVANCE_PT) * cost.cellLine + marksIn(cell);
}

const CONTAINER_PREFIX = /^(?:[ \t]*(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)))+/;
const CONTAINER_MARK = />|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)/g;
// East Asian wide characters (Hangul, CJK, Kana, full-width forms) take two columns.
const WIDE_RANGES = [
  [0x1100, 0x115f], [0x2e80, 0xa4cf], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe30, 0xfe4f], [0xff00, 0xff60], [0xffe0, 0xffe6],
] as const;
const isWide = (code: number) => code >= 0x1100 && WIDE_RANGES.some(([first, last]) => code >= first && code <= last);
const TAB = 0x09;
const SPACE = 0x20;
// Any line of pipes, dashes, colons and spaces with a pipe and a dash: every delimiter row of a
// table is one.
const DELIMITER_ROW = /^[ \t|:-]*\|[ \t|:-]*$/;
const HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;
// A fence at the left margin after a blank line (or first) is outside every list, quote, table,
// paragraph and link definition, so only its closing fence or the end of the document ends it.
// Any other fence may end with its container, or not be a fence, which a line alone does not
// tell: its lines, like indented code, are counted both ways and weigh the more. A backtick
// fence's info string holds no backtick (or the line is a code span).
const FENCE = /^[ \t]*(`{3,}|~{3,})([^]*)$/;
const FENCE_CLOSE = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;
const INDENTED = /^(?: {4}|[ ]{0,3}\t)/;

const withoutContainers = (line: string) => line.slice(CONTAINER_PREFIX.exec(line)?.[0].length ?? 0);
const cellsOf = (row: string) => row.trim().replace(/^\|/, '').replace(/\|$/, '').split('|');
const rowCost = (row: string, columns: number) => cellsOf(row).reduce((sum, cell) => sum + cellCost(cell, columns), 0);

/**
 * A line's width in columns (a tab eight, a wide character two) and how many of its characters
 * are in runs longer than RUN_LIMIT without a space or tab: one pass, since regular expressions
 * over a 1 MB line of short words took 35 ms.
 */
function measureLine(line: string): { width: number; runCharacters: number } {
  let width = 0;
  let runCharacters = 0;
  let run = 0;
  for (let i = 0; i < line.length; i += 1) {
    const code = line.charCodeAt(i);
    width += code === TAB ? TAB_COLUMNS : isWide(code) ? 2 : 1;
    if (code === SPACE || code === TAB) run = 0;
    else if ((run += 1) > RUN_LIMIT) runCharacters += run === RUN_LIMIT + 1 ? run : 1;
  }
  return { width, runCharacters };
}
const codeCost = (width: number) => linesOf(width, CODE_CHARS_PER_LINE) * cost.codeLine + width * cost.codeCharacter;

interface Fence { marker: string; atMargin: boolean }

/** The fence the line opens, if it opens one. */
function fenceOpenedBy(line: string, afterBlank: boolean): Fence | undefined {
  const rest = withoutContainers(line);
  const match = FENCE.exec(rest);
  if (!match || (match[1]![0] === '`' && match[2]!.includes('`'))) return undefined;
  return { marker: match[1]!, atMargin: afterBlank && rest === line && !/^[ \t]/.test(line) };
}

function closes(line: string, fence: Fence): boolean {
  const match = FENCE_CLOSE.exec(fence.atMargin ? line : withoutContainers(line));
  return !!match && match[1]![0] === fence.marker[0] && match[1]!.length >= fence.marker.length
    && (!fence.atMargin || /^ {0,3}[`~]/.test(line));
}

/** The lines of the Markdown, at markdown-it's line ends, one at a time. */
function* sourceLines(markdown: string): Generator<string> {
  const lineEnd = /\r\n?|\n/g;
  let start = 0;
  for (let match = lineEnd.exec(markdown); match; match = lineEnd.exec(markdown)) {
    yield markdown.slice(start, match.index);
    start = lineEnd.lastIndex;
  }
  yield markdown.slice(start);
}

/**
 * WeasyPrint's estimated CPU milliseconds for the Markdown, from above: see LAYOUT_COST_MS.
 * Counting stops once past `stopAbove`.
 */
export function estimatedLayoutMs(markdown: string, stopAbove = Infinity): number {
  let units = 0;
  let pageLines = 0; // the height of the pages the lines fill, in lines of text (PAGE_LINE_COST_MS)
  const total = () => units + PAGE_LINE_COST_MS * pageLines * pageLines;
  let columns = 0; // of the table the line is in
  let fence: Fence | undefined; // of the code block the line is in
  let previous = { line: '', units: 0, blank: true };
  for (const line of sourceLines(markdown)) {
    if (total() > stopAbove) break;
    const { width, runCharacters } = measureLine(line);
    const text = Math.floor(width / BOX_LIMIT) * cost.textNode
      + runCharacters * cost.runCharacter + RUN_CHARACTER_COST_MS * runCharacters ** 2;
    if (fence?.atMargin) {
      const closing = closes(line, fence);
      units += closing ? cost.fence : codeCost(width) + text;
      pageLines += linesOf(width, CODE_CHARS_PER_LINE);
      if (closing) fence = undefined;
      previous = { line: '', units: 0, blank: false };
      continue;
    }
    const inFence = fence !== undefined;
    if (fence && closes(line, fence)) fence = undefined;
    else if (!fence) fence = fenceOpenedBy(line, previous.blank);
    let lineUnits = text;
    if (fence?.atMargin) {
      lineUnits += cost.fence;
      columns = 0;
    } else if (line.trim() === '') {
      columns = 0;
      lineUnits += cost.blankLine;
      pageLines += 1;
    } else {
      lineUnits += linesOf(width, CHARS_PER_LINE) * cost.textLine;
      pageLines += linesOf(width, CHARS_PER_LINE);
      const rest = withoutContainers(line);
      const marks = line.slice(0, line.length - rest.length).match(CONTAINER_MARK) ?? [];
      for (const mark of marks) lineUnits += mark === '>' ? cost.quote : cost.listItem;
      if (columns === 0 && rest.includes('-') && DELIMITER_ROW.test(rest)) {
        // A table: the line before was its header row; count that again as one.
        columns = cellsOf(rest).length;
        pageLines += ROW_PAGE_LINES;
        units += cost.table + rowCost(withoutContainers(previous.line), columns) - previous.units;
      } else if (columns > 0) {
        lineUnits += rowCost(rest, columns);
        pageLines += ROW_PAGE_LINES;
      } else {
        if (HEADING.test(rest)) {
          const headingLines = linesOf(measureLine(rest).width, CHARS_PER_LINE / 2);
          lineUnits += cost.heading + headingLines * cost.headingLine;
          pageLines += HEADING_PAGE_LINES * headingLines;
        }
        lineUnits += marksIn(rest) + (rest.endsWith('  ') || rest.endsWith('\\') ? cost.lineBreak : 0);
      }
      if (inFence || INDENTED.test(rest)) lineUnits = Math.max(lineUnits, codeCost(width) + text);
    }
    units += lineUnits;
    previous = { line, units: lineUnits, blank: line.trim() === '' };
  }
  return total();
}

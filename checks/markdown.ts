// Pre-payment checks for /v1/pdf/from-markdown: the upload must be UTF-8, hold something to
// typeset, and not more than one job can typeset in its time and memory. All are cheap, so nobody
// pays for a file the worker would refuse.
import { fail } from '../core/errors.js';

/** A run of more characters than this without a space gets break opportunities (workers/pdf/markdown-html.ts). */
export const RUN_LIMIT = 32;
/** Within such a run, a break opportunity every this many characters after the first. */
export const RUN_STEP = 16;
/** A text node the renderer lays out is cut at its next space or break opportunity past this many characters (workers/pdf/markdown-html.ts). */
export const BOX_LIMIT = 256;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Offset of the first byte that does not start a well-formed UTF-8 sequence (Unicode table 3-7:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or -1 when every byte is fine.
 */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) { i += 1; continue; }
    let continuation: number;
    let secondMin = 0x80;
    let secondMax = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) continuation = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      continuation = 2;
      if (lead === 0xe0) secondMin = 0xa0;
      if (lead === 0xed) secondMax = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      continuation = 3;
      if (lead === 0xf0) secondMin = 0x90;
      if (lead === 0xf4) secondMax = 0x8f;
    } else return i;
    for (let k = 1; k <= continuation; k += 1) {
      const byte = bytes[i + k];
      const min = k === 1 ? secondMin : 0x80;
      const max = k === 1 ? secondMax : 0xbf;
      if (byte === undefined || byte < min || byte > max) return i;
    }
    i += continuation + 1;
  }
  return -1;
}

function lineOf(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i += 1) if (bytes[i] === 0x0a) line += 1;
  return line;
}

/**
 * The Markdown as text (a leading byte order mark removed). Throws CORRUPT_INPUT naming the
 * byte offset when the bytes are not UTF-8, and NO_CONTENT when there is nothing but whitespace.
 */
export function decodeMarkdown(bytes: Uint8Array): string {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    const offset = firstInvalidUtf8Offset(bytes);
    if (offset < 0) fail('CORRUPT_INPUT', 'the Markdown is not valid UTF-8', { field: 'file' });
    const byte = bytes[offset]!;
    fail('CORRUPT_INPUT',
      `the Markdown is not valid UTF-8: the byte 0x${byte.toString(16).padStart(2, '0')} at offset ${offset} (line ${lineOf(bytes, offset)}) does not start a valid character`,
      { field: 'file' });
  }
  if (text.trim() === '') {
    fail('NO_CONTENT', 'the Markdown is empty: it holds no characters other than whitespace', { field: 'file' });
  }
  return text;
}

// The layout budget. WeasyPrint's time and memory grow with the elements and the lines of text
// it lays out, about 0.3-0.8 ms and 10-30 KB each (bench/from-markdown.ts), so 1 MB of one-letter
// list items, paragraphs, headings or table cells ran for minutes and past the 1.5 GiB cap.
// Counting elements exactly means parsing the Markdown, which takes up to 2 s for 1 MB of tiny
// blocks: too long on the server's main thread for a request nobody has paid for. This scan of the
// source lines counts at least about as much as a parse would find, in milliseconds:
// - every line: its lines of text at CHARS_PER_LINE characters (half as many in a heading; at
//   least 1, even blank, as in a code block; a tab counts 8, as in a code block), plus one per
//   BOX_LIMIT characters (the renderer's new text nodes), plus 1 when it starts a block (a
//   paragraph or heading: after a blank line or a heading, or a heading itself), and a heading
//   HEADING_UNITS - 1 more;
// - every `>` and list marker opening a line: CONTAINER_UNITS (a list and its item, or a quote and
//   its paragraph);
// - every `[` and `<` (a link, image or autolink needs one): LINK_UNITS; every `\`: 1; every two
//   of `*`, `_` and `~` (an emphasis or strikethrough needs two): EMPHASIS_UNITS; every two
//   `` ` ``: CODE_SPAN_UNITS; a line ending in `\` or two spaces: LINE_BREAK_UNITS more;
// - every table cell: CELL_UNITS (cell and line), plus its lines of text in the narrowest width its column
//   can get: columns are sized from their longest cell (4 to 40 characters), so a long cell has at
//   least 1/columns of the width, and in a table of 22 columns or more, a character per line.
// Code blocks are not told apart: their lines count like any other, marks included. On 400 README
// and CHANGELOG files the scan counts 1.2-3.3 times what a parse finds (median 1.6).
// Elements are weighed by what they cost to lay out (bench/from-markdown.ts, hostile shapes), so
// that none costs much more per unit than the 100-page benchmark document (0.25 ms a unit): a
// list item takes about 1.4 ms, a link or image 0.5-0.7 ms, a code span 0.65 ms, an emphasis
// 0.5 ms, a line break 0.8 ms, a paragraph 0.2 ms. The budget is that document's count and
// about a tenth more, so the slowest shape it accepts takes about 1.5 times as long as that document.
export const LAYOUT_LIMIT = 35_000;
const TEXT_WIDTH_PT = 493; // A4 less the 18 mm side margins
const ADVANCE_PT = 6; // DejaVu Sans at 10 pt: 5.5 pt a character on average in running text
const CHARS_PER_LINE = Math.floor(TEXT_WIDTH_PT / ADVANCE_PT);
const CELL_INSET_PT = 10.5;
const MAX_COLUMN_WEIGHT = 40;
const CONTAINER_UNITS = 5;
const CELL_UNITS = 2;
const LINK_UNITS = 3;
const EMPHASIS_UNITS = 2.4;
const CODE_SPAN_UNITS = 2.5;
const LINE_BREAK_UNITS = 3;
const HEADING_UNITS = 2;

const linesOf = (characters: number, perLine: number) => Math.max(1, Math.ceil(characters / Math.max(1, Math.floor(perLine))));
const count = (text: string, marks: RegExp) => text.match(marks)?.length ?? 0;
const marksIn = (text: string) => count(text, LINK_MARKS) * LINK_UNITS + count(text, ESCAPE_MARKS)
  + count(text, EMPHASIS_MARKS) * EMPHASIS_UNITS / 2 + count(text, CODE_MARKS) * CODE_SPAN_UNITS / 2;

function cellUnits(cell: string, columns: number): number {
  const length = cell.trim().length;
  const share = Math.min(Math.max(length, 4), MAX_COLUMN_WEIGHT) / (MAX_COLUMN_WEIGHT * columns);
  return CELL_UNITS + linesOf(length, (TEXT_WIDTH_PT * share - CELL_INSET_PT) / ADVANCE_PT) + marksIn(cell);
}

const CONTAINER_PREFIX = /^(?:[ \t]*(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)))+/;
const CONTAINER_MARK = />|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)/g;
const LINK_MARKS = /[[<]/g;
const ESCAPE_MARKS = /\\/g;
const EMPHASIS_MARKS = /[*_~]/g;
const CODE_MARKS = /`/g;
// Any line of pipes, dashes, colons and spaces with a pipe and a dash: every delimiter row of a
// table is one.
const DELIMITER_ROW = /^[ \t|:-]*\|[ \t|:-]*$/;
const HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;

const withoutContainers = (line: string) => line.slice(CONTAINER_PREFIX.exec(line)?.[0].length ?? 0);
const cellsOf = (row: string) => row.trim().replace(/^\|/, '').replace(/\|$/, '').split('|');
const rowUnits = (row: string, columns: number) => cellsOf(row).reduce((sum, cell) => sum + cellUnits(cell, columns), 1);

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
 * The elements and lines of text the Markdown will typeset, counted from above: see
 * LAYOUT_LIMIT. Counting stops once past `stopAbove`.
 */
export function layoutUnits(markdown: string, stopAbove = Infinity): number {
  let units = 0;
  let columns = 0; // of the table the line is in
  let previous = { line: '', units: 0, endsBlock: true };
  for (const line of sourceLines(markdown)) {
    if (units > stopAbove) break;
    // A tab in a code block is typeset as up to 8 spaces.
    const width = line.length + 7 * (line.match(/\t/g)?.length ?? 0);
    let lineUnits = linesOf(width, CHARS_PER_LINE) + Math.floor(width / BOX_LIMIT);
    let endsBlock = line.trim() === '';
    if (endsBlock) columns = 0;
    else {
      const rest = withoutContainers(line);
      lineUnits += CONTAINER_UNITS * (line.slice(0, line.length - rest.length).match(CONTAINER_MARK)?.length ?? 0);
      if (columns === 0 && rest.includes('-') && DELIMITER_ROW.test(rest)) {
        // A table: the line before was its header row; count that again as one.
        columns = cellsOf(rest).length;
        units += rowUnits(withoutContainers(previous.line), columns) - previous.units;
      } else if (columns > 0) {
        lineUnits += rowUnits(rest, columns);
      } else {
        endsBlock = HEADING.test(rest);
        if (endsBlock) lineUnits += HEADING_UNITS - 1 + linesOf(rest.length, CHARS_PER_LINE / 2);
        lineUnits += (previous.endsBlock || endsBlock ? 1 : 0) + marksIn(rest) + (rest.endsWith('  ') || rest.endsWith('\\') ? LINE_BREAK_UNITS : 0);
      }
    }
    units += lineUnits;
    previous = { line, units: lineUnits, endsBlock };
  }
  return units;
}

/**
 * The pre-payment check: throws CORRUPT_INPUT (not UTF-8), NO_CONTENT (empty or whitespace only)
 * or LIMIT_EXCEEDED (more to typeset than one job can: LAYOUT_LIMIT).
 */
export function inspectMarkdown(bytes: Uint8Array): void {
  if (layoutUnits(decodeMarkdown(bytes), LAYOUT_LIMIT) > LAYOUT_LIMIT) {
    fail('LIMIT_EXCEEDED',
      `the Markdown would typeset as more than ${LAYOUT_LIMIT} elements and lines of text, what one job typesets (about 100 pages mixing paragraphs, lists, code and tables; fewer of one-line paragraphs, list items or table cells); split it into smaller documents`,
      { field: 'file' });
  }
}

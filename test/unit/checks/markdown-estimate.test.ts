// The layout estimate (checks/markdown-estimate.ts), one document shape at a time: what each shape
// is counted as, in LAYOUT_COST_MS's weights, so a change to the scan shows here as the shape it
// changes. (What the weights are worth against WeasyPrint's real time is measured in
// service/operations/pdf-from-markdown and bench/from-markdown.ts.)
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { estimatedLayoutMs, LAYOUT_COST_MS as cost } from '../../../checks/markdown-estimate.js';
import { layoutBudgetMs } from '../../../checks/markdown.js';
import { BOX_LIMIT, CHARS_PER_LINE, CODE_CHARS_PER_LINE, RUN_LIMIT } from '../../../checks/markdown-page.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const DEADLINE_MS = 120_000;
const repeat = (unit: string, bytes: number) => unit.repeat(Math.max(1, Math.floor(bytes / Buffer.byteLength(unit))));
const words = (characters: number) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(characters / 27))
  .slice(0, characters).trimEnd().padEnd(characters, 'x');
const refused = (markdown: string) => estimatedLayoutMs(markdown) > layoutBudgetMs(Buffer.byteLength(markdown), DEADLINE_MS);
// The page term (lines of height squared) is a few microseconds on the small documents below.
const TOLERANCE = 0.01;

describe('the Markdown layout estimate', () => {
  it('prose: a line of text per CHARS_PER_LINE characters, a text node per BOX_LIMIT, and the blank line after it', () => {
    expect(estimatedLayoutMs('Hello.')).to.be.about(cost.textLine, TOLERANCE);
    expect(estimatedLayoutMs('Hello.\n')).to.be.about(cost.textLine + cost.blankLine, TOLERANCE);
    const paragraph = words(1000);
    const lines = Math.ceil(1000 / CHARS_PER_LINE);
    expect(estimatedLayoutMs(paragraph)).to.be.about(lines * cost.textLine + Math.floor(1000 / BOX_LIMIT) * cost.textNode, TOLERANCE);
    // The same words a line each cost more: every source line is at least one line of text.
    const brokenUp = paragraph.split(' ').join('\n');
    expect(estimatedLayoutMs(brokenUp)).to.be.above(3 * estimatedLayoutMs(paragraph));
  });

  it('prose: wide characters count two columns and tabs eight', () => {
    const half = CHARS_PER_LINE / 2;
    expect(estimatedLayoutMs('漢'.repeat(half))).to.equal(estimatedLayoutMs('x'.repeat(half)));
    expect(estimatedLayoutMs('漢'.repeat(half + 1)) - estimatedLayoutMs('x'.repeat(half + 1))).to.be.about(cost.textLine, TOLERANCE);
    expect(estimatedLayoutMs('a'.repeat(10))).to.be.about(cost.textLine, TOLERANCE);
    expect(estimatedLayoutMs('a\t'.repeat(10))).to.be.about(2 * cost.textLine, TOLERANCE);
  });

  it('headings: the heading and its lines at half the width, besides the line of text', () => {
    const text = words(100);
    const headingLines = Math.ceil(Buffer.byteLength(`# ${text}`) / (CHARS_PER_LINE / 2));
    expect(estimatedLayoutMs(`# ${text}`) - estimatedLayoutMs(`  ${text}`))
      .to.be.about(cost.heading + headingLines * cost.headingLine, TOLERANCE);
    // Seven hashes, or none followed by a space, make no heading.
    expect(estimatedLayoutMs('####### a')).to.be.about(cost.textLine, TOLERANCE);
    expect(estimatedLayoutMs('#a')).to.be.about(cost.textLine, TOLERANCE);
  });

  it('lists and quotes: every marker opening a line, however deep', () => {
    const items = 20;
    expect(estimatedLayoutMs(repeat('- a\n', 4 * items).trimEnd())).to.be.about(items * (cost.textLine + cost.listItem), TOLERANCE);
    expect(estimatedLayoutMs(repeat('1. a\n', 5 * items).trimEnd())).to.be.about(items * (cost.textLine + cost.listItem), TOLERANCE);
    expect(estimatedLayoutMs(repeat('- - - a\n', 8 * items).trimEnd())).to.be.about(items * (cost.textLine + 3 * cost.listItem), TOLERANCE);
    expect(estimatedLayoutMs(repeat('> - a\n', 6 * items).trimEnd()))
      .to.be.about(items * (cost.textLine + cost.quote + cost.listItem), TOLERANCE);
    // A dash inside a line, or a number not followed by a space, is text.
    expect(estimatedLayoutMs('a - b')).to.be.about(cost.textLine, TOLERANCE);
    expect(estimatedLayoutMs('3.14')).to.be.about(cost.textLine, TOLERANCE);
  });

  it('code blocks: a fence at the margin counts its lines as code only, CODE_CHARS_PER_LINE columns a line', () => {
    const code = (line: string) => `\`\`\`\n${line}\n\`\`\``;
    const fits = `${'abcdefghi '.repeat(9)}abc`;
    expect(fits.length).to.equal(CODE_CHARS_PER_LINE);
    expect(estimatedLayoutMs(code(fits))).to.be.about(2 * cost.fence + cost.codeLine + CODE_CHARS_PER_LINE * cost.codeCharacter, TOLERANCE);
    expect(estimatedLayoutMs(code(`${fits}x`)) - estimatedLayoutMs(code(fits))).to.be.about(cost.codeLine + cost.codeCharacter, TOLERANCE);
    // A run of more than RUN_LIMIT characters without a space: every one of its characters too.
    const [run, shorter] = [`x${'x'.repeat(RUN_LIMIT)}`, ` ${'x'.repeat(RUN_LIMIT)}`];
    expect(estimatedLayoutMs(code(run)) - estimatedLayoutMs(code(shorter))).to.be.about((RUN_LIMIT + 1) * cost.runCharacter, TOLERANCE);
    // Marks in code are not elements: a line of links and emphasis is cheaper fenced than not.
    const marked = repeat('[a](b) *c* `d` ', 300);
    expect(estimatedLayoutMs(code(marked))).to.be.below(estimatedLayoutMs(marked) / 4);
    // A fence inside a list item (not at the margin) may end with the item: counted as text too.
    expect(estimatedLayoutMs(`- item\n\n  \`\`\`\n  ${marked}\n  \`\`\``)).to.be.at.least(estimatedLayoutMs(marked));
    // Indented code is counted both ways, and weighs the more.
    expect(estimatedLayoutMs(`    ${marked}`)).to.be.at.least(estimatedLayoutMs(marked));
  });

  it('tables: the table, and every cell (the header row too) with its lines in the width its column can get', () => {
    const table = (columns: number, cell: string, rows: number) => {
      const row = `|${` ${cell} |`.repeat(columns)}`;
      return [row, `|${'---|'.repeat(columns)}`, ...Array.from({ length: rows }, () => row)].join('\n');
    };
    // The delimiter row makes the table: without it the rows are three lines of text.
    const withoutDelimiter = table(2, 'a', 2).split('\n').filter((line) => !line.includes('---')).join('\n');
    const cells = 2 * 3;
    expect(estimatedLayoutMs(table(2, 'a', 2)) - estimatedLayoutMs(withoutDelimiter))
      .to.be.about(cost.table + cells * (cost.cell + cost.cellLine), TOLERANCE);
    // A long cell gets more lines in a narrower column.
    const long = words(120);
    expect(estimatedLayoutMs(table(10, long, 1)) / 10).to.be.above(estimatedLayoutMs(table(2, long, 1)) / 2);
    // A blank line ends the table: what follows is text again.
    expect(estimatedLayoutMs(`${table(2, 'a', 1)}\n\n| a | b |`) - estimatedLayoutMs(`${table(2, 'a', 1)}\n`))
      .to.be.about(cost.textLine, TOLERANCE);
  });

  it('images and links: every `[` and `<`; emphasis a mark per run, code spans a mark per backtick, line breaks', () => {
    const base = estimatedLayoutMs('a a a');
    expect(estimatedLayoutMs('a [a](https://e.com/) a') - estimatedLayoutMs('a a(https://e.com/) a')).to.be.about(cost.link, TOLERANCE);
    expect(estimatedLayoutMs('![a](x.png)') - estimatedLayoutMs('!a](x.png)')).to.be.about(cost.link, TOLERANCE);
    expect(estimatedLayoutMs('<https://e.com/>') - estimatedLayoutMs('https://e.com/>')).to.be.about(cost.link, TOLERANCE);
    expect(estimatedLayoutMs('a **a** a') - base).to.be.about(2 * cost.emphasis, TOLERANCE);
    expect(estimatedLayoutMs('a `a` a') - base).to.be.about(2 * cost.codeMark, TOLERANCE);
    expect(estimatedLayoutMs('a a a\\') - estimatedLayoutMs('a a a')).to.be.about(cost.lineBreak, TOLERANCE);
    expect(estimatedLayoutMs('a a a  ') - estimatedLayoutMs('a a a')).to.be.about(cost.lineBreak, TOLERANCE);
  });

  it('hostile shapes: a short element every few bytes is refused; the same bytes of prose or code are not', () => {
    const size = 100 * 1024;
    for (const [shape, markdown] of [
      ['one-letter paragraphs', repeat('a\n\n', size)],
      ['one-letter list items', repeat('- a\n', size)],
      ['one-letter headings', repeat('# a\n', size)],
      ['one-letter code spans', repeat('`a` ', size)],
      ['one-letter emphasis', repeat('*a* ', size)],
      ['a table row of one-letter columns', `${repeat('|a', size / 3)}|\n${repeat('|-', size / 3)}|\n${repeat('|a', size / 3)}|`],
      ['one-cell tables', repeat('|a|\n|-|\n\n', size)],
    ] as const) expect(refused(markdown), shape).to.be.true();
    for (const [shape, markdown] of [
      ['running text', repeat(`${words(600)}\n\n`, size)],
      ['a code block of 80-character lines', `\`\`\`\n${repeat(`${'x'.repeat(79)}\n`, size)}\`\`\``],
      ['one long word', `${repeat('abcdefghij', size)}`],
    ] as const) expect(refused(markdown), shape).to.be.false();
  });

  it('hostile shapes: long lines and many pages cost more than in proportion', () => {
    // One word: its long-run characters squared.
    const word = (bytes: number) => estimatedLayoutMs(repeat('abcdefghij', bytes));
    expect(word(1024 * 1024) / word(128 * 1024)).to.be.above(8.5);
    // One line of emphasis: its marks squared.
    const emphasis = (bytes: number) => estimatedLayoutMs(repeat('ab**cd**', bytes));
    expect(emphasis(512 * 1024) / emphasis(64 * 1024)).to.be.above(8.5);
    // Short code lines: the height of the pages squared.
    const codeLines = (bytes: number) => estimatedLayoutMs(`\`\`\`\n${repeat('ab\n', bytes)}\`\`\``);
    expect(codeLines(512 * 1024) / codeLines(64 * 1024)).to.be.above(8.5);
    // Prose stays in proportion.
    const prose = (bytes: number) => estimatedLayoutMs(repeat(`${words(600)}\n\n`, bytes));
    expect(prose(512 * 1024) / prose(64 * 1024)).to.be.below(8.5);
  });

  it('stops counting once past stopAbove, so a dense upload is not scanned whole', () => {
    const dense = repeat('- a\n', 1024 * 1024);
    const whole = estimatedLayoutMs(dense);
    const stopped = estimatedLayoutMs(dense, 1000);
    expect(stopped).to.be.above(1000);
    expect(stopped).to.be.below(1000 + cost.textLine + cost.listItem + 1);
    expect(whole).to.be.above(100 * stopped);
  });
});

// Block rules (workers/layout/structure.ts): paragraphs, headings, lists and code, on rows built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import {
  blocksOf, bodySizeOf, breaksParagraph, changesSize, chartTextRuns, continuesCode, gapSizeOf, isHeading, lineStepOf, nestMarker,
  opensIndentedParagraph, rowsOf,
} from '../../../../workers/layout/testing.js';
import { DEFAULT_LINE_STEP_EM } from '../../../../workers/layout/thresholds.js';
import { line, fragment, prose, rowOf } from './fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const row = (text: string, x0: number, x1: number, top: number, style = {}) => rowOf([fragment(text, x0, x1, top, style)]);

describe('layout: blocks', () => {
  it('the body size is the size of the longest text, not of the most fragments (bodySizeOf)', () => {
    const cells = Array.from({ length: 30 }, (_, k) => fragment(`c${k}`, 0, 20, k * 10, { size: 8 }));
    const text = prose(3, 0, 400, 400, 14, { size: 11 });
    expect(bodySizeOf([...cells, ...text])).to.equal(11);
  });

  it('the usual line step is that of body lines; without two in a row, DEFAULT_LINE_STEP_EM of the body size (lineStepOf)', () => {
    expect(lineStepOf(rowsOf(prose(6, 0, 400, 100, 13)), 10)).to.equal(13);
    expect(lineStepOf(rowsOf([fragment('one line', 0, 400, 100)]), 10)).to.equal(10 * DEFAULT_LINE_STEP_EM);
  });

  it('a paragraph breaks at a step well past the usual one or at a wide white gap, not at the next line (breaksParagraph)', () => {
    const a = row('line one', 0, 400, 100);
    expect(breaksParagraph(a, row('line two', 0, 400, 113), 13, 10)).to.be.false();
    expect(breaksParagraph(a, row('new paragraph', 0, 400, 130), 13, 10)).to.be.true();
  });

  it('a title set on several lines of large type is one heading; two headings stacked apart stay two (gapSizeOf)', () => {
    // 24 pt lines (boxes 24 pt high here) whose baselines are 34 pt apart leave white gaps of 10 pt, over 0.9 em of the 10 pt body.
    const title = [fragment('ARE CIGARETTE SMOKERS', 0, 300, 100, { size: 24 }), fragment('HYPERBOLIC TIME', 0, 200, 134, { size: 24 }), fragment('DISCOUNTERS?', 0, 160, 168, { size: 24 })];
    const body = prose(6, 0, 400, 220);
    const blocks = blocksOf([...title, ...body], { bodySize: 10 });
    expect(blocks.map((b) => b.kind)).to.equal(['heading', 'paragraph']);
    expect(blocks[0]!.kind === 'heading' && blocks[0]!.spans.map((s) => s.text).join('')).to.equal('ARE CIGARETTE SMOKERS HYPERBOLIC TIME DISCOUNTERS?');
    expect(gapSizeOf(rowOf([title[0]!]), rowOf([title[1]!]), 10)).to.equal(24);
    expect(gapSizeOf(rowOf([title[2]!]), rowOf([body[0]!]), 10)).to.equal(10);
    // A chapter label and its title, set apart by a heading's margin as well (30 pt of white).
    const stacked = [fragment('Chapter 3', 0, 120, 100, { size: 24 }), fragment('Numerical differentiation', 0, 300, 154, { size: 24 })];
    expect(blocksOf([...stacked, ...body], { bodySize: 10 }).map((b) => b.kind)).to.equal(['heading', 'heading', 'paragraph']);
  });

  it('a chart\'s labels and values are one paragraph, the figure\'s text: no headings, no table (isChartText, chartTextRuns)', () => {
    // Ticks down the left axis (13 pt, larger than the body), values over two bars, years along the bottom.
    const chart = [
      fragment('100', 30, 50, 100, { size: 13 }),
      ...line(140, [['75', 36, 50], ['68', 120, 134]], { size: 13 }),
      fragment('50', 36, 50, 180, { size: 13 }),
      ...line(220, [['25', 36, 50], ['31', 200, 214]], { size: 13 }),
      fragment('0', 43, 50, 260, { size: 13 }),
      ...line(280, [['2019', 110, 140], ['2020', 190, 220]], { size: 13 }),
    ];
    const body = prose(4, 0, 400, 320);
    const blocks = blocksOf([...chart, ...body], { bodySize: 10 });
    expect(blocks.map((b) => b.kind)).to.equal(['paragraph', 'paragraph']);
    expect(blocks[0]!.kind === 'paragraph' && blocks[0]!.spans.map((s) => s.text).join('')).to.equal('100 75 68 50 25 31 0 2019 2020');
    // Its box is the chart's text, as /v1/pdf/blocks reports it.
    expect(blocks[0]!.box).to.equal([30, 100, 220, 293]);
    // A table of numbers has a number in each column on every row: no chart.
    const numbers = [0, 1, 2, 3].flatMap((k) => line(100 + k * 14, [[`${2019 + k}`, 0, 30], [`${10 + k}`, 100, 115], [`${40 + k}`, 200, 215]]));
    expect(chartTextRuns(rowsOf(numbers))).to.equal([]);
    expect(blocksOf(numbers, { bodySize: 10 }).map((b) => b.kind)).to.equal(['table']);
  });

  it('a change of type size breaks a paragraph (changesSize)', () => {
    expect(changesSize(row('a', 0, 10, 0, { size: 10 }), row('b', 0, 10, 20, { size: 10.5 }))).to.be.false();
    expect(changesSize(row('a', 0, 10, 0, { size: 10 }), row('b', 0, 10, 20, { size: 12 }))).to.be.true();
  });

  it('an indented line under a line that ended short opens a paragraph (opensIndentedParagraph)', () => {
    const indented = row('Indented first line', 20, 400, 113);
    expect(opensIndentedParagraph(indented, row('end of a paragraph.', 0, 300, 100), 0, 10)).to.be.true();
    expect(opensIndentedParagraph(indented, row('a full line of the same paragraph', 0, 398, 100), 0, 10)).to.be.false();
  });

  it('a heading is short and large, or bold at body size without closing punctuation or an exclamation mark (isHeading)', () => {
    expect(isHeading([row('Results', 0, 80, 0, { size: 14 })], 'Results', 10)).to.be.true();
    expect(isHeading([row('Methods', 0, 80, 0, { bold: true })], 'Methods', 10)).to.be.true();
    expect(isHeading([row('A bold sentence.', 0, 80, 0, { bold: true })], 'A bold sentence.', 10)).to.be.false();
    // An exclamation is a sentence too; a question may be a heading.
    expect(isHeading([row('Congratulations, you are done!!!', 0, 80, 0, { bold: true })], 'Congratulations, you are done!!!', 10)).to.be.false();
    expect(isHeading([row('What tools do you use?', 0, 80, 0, { bold: true })], 'What tools do you use?', 10)).to.be.true();
    expect(isHeading([row('Plain words', 0, 80, 0)], 'Plain words', 10)).to.be.false();
  });

  it('monospaced lines stay one code block unless a wide gap parts them (continuesCode)', () => {
    const a = row('x = 1', 0, 40, 100, { mono: true });
    expect(continuesCode(a, row('y = 2', 0, 40, 112, { mono: true }), 10)).to.be.true();
    expect(continuesCode(a, row('z = 3', 0, 40, 140, { mono: true }), 10)).to.be.false();
  });

  it('list markers further right nest deeper, back at an earlier x they close the levels in between (nestMarker)', () => {
    const stack: number[] = [];
    expect([72, 90, 108, 91, 72].map((x) => nestMarker(stack, x))).to.equal([0, 1, 2, 1, 0]);
  });

  it('rows become a heading, a paragraph and a nested list (blocksOf)', () => {
    const fragments = [
      fragment('Introduction', 0, 120, 100, { size: 16 }),
      ...prose(3, 0, 400, 130, 13),
      fragment('• first item', 0, 200, 180),
      fragment('• inner item', 18, 200, 193),
    ];
    const blocks = blocksOf(fragments, { bodySize: 10 });
    expect(blocks.map((b) => b.kind)).to.equal(['heading', 'paragraph', 'item', 'item']);
    expect(blocks.filter((b) => b.kind === 'item').map((b) => b.depth)).to.equal([0, 1]);
  });
});

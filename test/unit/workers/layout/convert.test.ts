// Blocks joined across column and page breaks (workers/layout/convert.ts), on blocks built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { appendBlocks } from '../../../../workers/layout/convert.js';
import type { Block, Cell } from '../../../../workers/layout/types.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const cell = (text: string): Cell => ({ spans: text ? [{ text, bold: false, italic: false, mono: false }] : [], colspan: 1, rowspan: 1 });
const table = (rows: string[][]): Block => ({ kind: 'table', rows: rows.map((r) => r.map(cell)) });
const texts = (b: Block) => (b.kind === 'table' ? b.rows.map((r) => r.map((c) => c.spans.map((s) => s.text).join(''))) : []);

describe('layout: blocks joined across breaks', () => {
  it('rows at the top of a table\'s continuation whose cells go on with small letters are the rest of the row cut at the break (appendBlocks: carriesOnCutRow)', () => {
    const into = [table([['Reagents', 'Equipment'], ['Resuspended DNA, Buffer and', 'Tube rack, tips, a']])];
    appendBlocks(into, [table([['restriction enzyme', 'marker and a water bath at'], ['mixture', '37 °C'], ['water', '']])]);
    expect(into).to.have.length(1);
    expect(texts(into[0]!).map((r) => r.map((t) => t.replace(/\s+/g, ' ')))).to.equal([
      ['Reagents', 'Equipment'],
      ['Resuspended DNA, Buffer and restriction enzyme mixture water', 'Tube rack, tips, a marker and a water bath at 37 °C'],
    ]);
  });

  it('a row opened by a capital, or after a cut row ended with a full stop, is a row of its own (appendBlocks: carriesOnCutRow)', () => {
    const into = [table([['Name', 'Use'], ['oak', 'beams.'], ['Ash', 'handles']])];
    appendBlocks(into, [table([['Elm', 'boxes'], ['yew', 'bows']])]);
    expect(texts(into[0]!)).to.equal([['Name', 'Use'], ['oak', 'beams.'], ['Ash', 'handles'], ['Elm', 'boxes'], ['yew', 'bows']]);
    const ended = [table([['Name', 'Use'], ['Oak', 'beams.']])];
    appendBlocks(ended, [table([['yew', 'bows']])]);
    expect(texts(ended[0]!)).to.equal([['Name', 'Use'], ['Oak', 'beams.'], ['yew', 'bows']]);
  });
});

// Blocks joined across column and page breaks (workers/layout/convert.ts), on blocks built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { appendBlocks } from '../../../../workers/layout/testing.js';
import type { Block, Cell } from '../../../../workers/layout/types.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const spans = (text: string) => (text ? [{ text, bold: false, italic: false, mono: false }] : []);
const cell = (text: string): Cell => ({ spans: spans(text), colspan: 1, rowspan: 1 });
/** A form: a header, then labels 12 points high in boxes from x 50, each `width` wide, the cells beside them empty. */
function form(labels: string[], width: number): Block {
  const rows = [['', 'Mitosis', 'Meiosis'].map(cell)];
  labels.forEach((text, k) => rows.push([{ ...cell(text), box: [50, 120 + 20 * k, 50 + width, 132 + 20 * k] }, cell(''), cell('')]));
  return { kind: 'table', rows };
}
const paragraph = (text: string, box: [number, number, number, number]): Block => ({ kind: 'paragraph', spans: spans(text), box });
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

  it('a line first after a break, as narrow and low as the labels of the form table before it, is its last label; a wider line or a sentence is not (appendBlocks: isCutLabel)', () => {
    const into = [form(['# DNA replications', '# nuclear divisions'], 70)];
    appendBlocks(into, [paragraph('purpose', [330, 60, 365, 71]), paragraph('Using your beads, recreate the process.', [330, 90, 550, 101])]);
    expect(into.map((b) => b.kind)).to.equal(['table', 'paragraph']);
    expect(texts(into[0]!).slice(-2)).to.equal([['# nuclear divisions', '', ''], ['purpose', '', '']]);
    const wide = [form(['# DNA replications', '# nuclear divisions'], 70)];
    appendBlocks(wide, [paragraph('A line of running text', [330, 60, 550, 71])]);
    const sentence = [form(['# DNA replications', '# nuclear divisions'], 70)];
    appendBlocks(sentence, [paragraph('It ends.', [330, 60, 365, 71])]);
    expect([wide.length, sentence.length]).to.equal([2, 2]);
  });
});

// The rules that part a line's glyphs into fragments (workers/layout/fragments.ts), on glyphs built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { fragmentsOf, type Glyph, isWideSpace, type StextLine } from '../../../../workers/layout/testing.js';
import { texts } from './fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const FACE = { bold: false, italic: false, mono: false, size: 10 };

/** Glyphs of `text` from x, 5 pt each; a space glyph is `space` wide (0: no space glyph, the gap stays). */
function glyphs(text: string, x: number, space = 2.5): Glyph[] {
  const out: Glyph[] = [];
  for (const c of text) {
    if (c === ' ') { if (space) out.push({ c, x0: x, x1: x + space, y0: 100, y1: 110 }); x += space || 2.5; continue; }
    out.push({ c, x0: x, x1: x + 5, y0: 100, y1: 110 });
    x += 5;
  }
  return out;
}
const lineOf = (...parts: Glyph[][]): StextLine => ({ runs: [{ font: FACE, glyphs: parts.flat() }] });

describe('layout: fragments (fragmentsOf)', () => {
  it('a word space keeps one fragment; a gap of about an em parts two cells (fragmentsOf: WORD_GAP_EM, CELL_GAP_EM)', () => {
    expect(texts(fragmentsOf([lineOf(glyphs('two words', 0))], []))).to.equal(['two words']);
    expect(texts(fragmentsOf([lineOf(glyphs('Name', 0), glyphs('Count', 32))], []))).to.equal(['Name', 'Count']);
  });

  it('half an em with no typed space in it parts two cells; with one, it is a word space (fragmentsOf: UNSPACED_GAP_EM)', () => {
    expect(texts(fragmentsOf([lineOf(glyphs('Name', 0), glyphs('Count', 26))], []))).to.equal(['Name', 'Count']);
    expect(texts(fragmentsOf([lineOf(glyphs('Name', 0), [{ c: ' ', x0: 20, x1: 23, y0: 100, y1: 110 }], glyphs('Count', 26))], []))).to.equal(['Name Count']);
  });

  it('a synthetic space is wide past WIDE_SPACE_EM when wider than the letters before it, or past WIDE_SPACE_ALWAYS_EM between capitals (isWideSpace)', () => {
    expect(isWideSpace(3, 10, 5)).to.equal(false); // a typed space: a third of an em
    expect(isWideSpace(5, 10, 4)).to.equal(true); // wider than narrow letters
    expect(isWideSpace(5, 10, 7)).to.equal(false); // between capitals, half an em may still be a word space
    expect(isWideSpace(6.5, 10, 7)).to.equal(true); // wider than any typed space
    const header = fragmentsOf([lineOf(glyphs('NAME', 0), [{ c: ' ', x0: 20, x1: 27, y0: 100, y1: 110 }], glyphs('COUNT', 27))], []);
    expect(texts(header)).to.equal(['NAME', 'COUNT']);
  });

  it('a vertical rule between two glyphs parts them, however narrow the gap (fragmentsOf: a column border)', () => {
    const cut = [{ at: 21.5, from: 90, to: 120 }];
    expect(texts(fragmentsOf([lineOf(glyphs('ab', 10), glyphs('cd', 23))], [], cut))).to.equal(['ab', 'cd']);
  });
});

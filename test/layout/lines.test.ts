// The rules that make pieces and lines (workers/layout/fragments.ts, rows.ts, list-markers.ts,
// running-text.ts), on glyphs and pieces built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { fragmentsOf, isWideSpace } from '../../workers/layout/fragments.js';
import { rowsOf } from '../../workers/layout/rows.js';
import { attachMarkers } from '../../workers/layout/list-markers.js';
import { dropRunningText } from '../../workers/layout/running-text.js';
import type { Glyph, StextLine } from '../../workers/layout/stext.js';
import { piece, prose, texts } from './fixtures.js';

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

describe('layout: pieces and lines', () => {
  it('a word space keeps one piece; a gap of about an em parts two cells (fragmentsOf: WORD_GAP_EM, CELL_GAP_EM)', () => {
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

  it('pieces whose centres line up are one row, left to right; an index set low stays, the next line does not (rowsOf: ROW_CENTRE_MARGIN_SHARE)', () => {
    const rows = rowsOf([piece('right', 200, 240, 100), piece('left', 50, 90, 100), piece('2', 91, 94, 104, { size: 4 }), piece('next line', 50, 120, 114)]);
    expect(rows.map((r) => texts(r.fragments))).to.equal([['left', '2', 'right'], ['next line']]);
  });

  it('a bullet alone before a narrow gap joins its text, before a wide gap it stays a cell (attachMarkers: MARKER_GAP_EM)', () => {
    const near = rowsOf([piece('•', 50, 54, 100), piece('first item', 62, 140, 100)]);
    const far = rowsOf([piece('•', 50, 54, 100), piece('far cell', 140, 200, 100)]);
    attachMarkers(near); attachMarkers(far);
    expect(near.map((r) => texts(r.fragments))).to.equal([['• first item']]);
    expect(far.map((r) => texts(r.fragments))).to.equal([['•', 'far cell']]);
  });

  it('a row repeated at the top of every page, set apart from the body, is a running head and goes (dropRunningText)', () => {
    const page = (n: number) => ({ height: 800, fragments: [piece('Journal of Worked Examples', 200, 400, 20, { size: 8 }), ...prose(5, 50, 550, 100), piece(String(n), 295, 305, 770, { size: 8 })] });
    const pages = [page(1), page(2)];
    dropRunningText(pages, 10);
    expect(pages.map((p) => p.fragments.length)).to.equal([5, 5]);
  });

  it('a bare page number set apart in the outer fifth goes though above the running-text zone; a capital letter alone there stays (dropRunningText: PAGE_NUMBER_ZONE_SHARE)', () => {
    const page = (text: string) => ({ height: 800, fragments: [...prose(5, 50, 550, 100), piece(text, 295, 305, 680)] });
    const [arabic, roman, letter] = [page('12'), page('iv'), page('A')];
    for (const p of [arabic, roman, letter]) dropRunningText([p], 10);
    expect([arabic, roman, letter].map((p) => p.fragments.length)).to.equal([5, 5, 6]);
  });

  it('on a one-page document a body-size title stays, a smaller running head goes (dropRunningText: SMALLER_THAN_BODY_SHARE)', () => {
    const title = { height: 800, fragments: [piece('Dear Ms Smith,', 50, 150, 20), ...prose(5, 50, 550, 100)] };
    const head = { height: 800, fragments: [piece('Internal memo', 50, 150, 20, { size: 8 }), ...prose(5, 50, 550, 100)] };
    dropRunningText([title], 10);
    dropRunningText([head], 10);
    expect(texts(title.fragments)).to.include(['Dear Ms Smith,']);
    expect(texts(head.fragments)).to.not.include(['Internal memo']);
  });
});

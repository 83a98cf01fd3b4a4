// What the stamp writes without MuPDF: the characters its font has, the page's text, the
// placement matrix on the displayed page, and the EXIF orientation matrices.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import {
  concat, firstUnsupportedCharacter, invert, orientationMatrix, pageText, pdfNumber, placement, rgbOf, STAMP_MARGIN_PT,
  winAnsiCode, winAnsiHex, type Matrix,
} from '../../../../tools/engines/stamp-text.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const apply = (m: Matrix, [x, y]: [number, number]): [number, number] => [
  Number((x * m[0] + y * m[2] + m[4]).toFixed(6)), Number((x * m[1] + y * m[3] + m[5]).toFixed(6)),
];

describe('stamp text', () => {
  it('WinAnsiEncoding: ASCII and Latin-1 keep their codes, € and the quotes have theirs, other characters have none', () => {
    expect([0x41, 0xe9, 0x20ac, 0x201c, 0x2014].map((c) => winAnsiCode(c))).to.equal([0x41, 0xe9, 0x80, 0x93, 0x97]);
    expect([0x0a, 0xad, 0x416, 0x1f600].map((c) => winAnsiCode(c))).to.equal([undefined, undefined, undefined, undefined]);
    expect(winAnsiHex('Café €5')).to.equal('<436166E9208035>');
  });

  it('names the first character the font cannot show, counting characters (not UTF-16 units)', () => {
    expect(firstUnsupportedCharacter('Draft – “ok” Ÿ')).to.be.undefined();
    expect(firstUnsupportedCharacter('😀 Ж')).to.equal('U+1F600 (😀) at character 1');
    expect(firstUnsupportedCharacter('ab\tc')).to.equal('U+0009 at character 3');
  });

  it('{n} counts from start and pads to digits; {total} is the page count', () => {
    expect(pageText('Page {n} of {total}', 0, 12, { start: 1 })).to.equal('Page 1 of 12');
    expect(pageText('ACME-{n}', 4, 12, { start: 41, digits: 6 })).to.equal('ACME-000045');
    expect(pageText('{n}{n}', 0, 1, { start: 1234567, digits: 3 })).to.equal('12345671234567');
  });

  it('places a box at each position STAMP_MARGIN_PT from the edges of the displayed page (y down), turned about its centre', () => {
    const box = { x0: 0, y0: 0, x1: 100, y1: 20 };
    const page = { width: 600, height: 800 };
    const m = STAMP_MARGIN_PT;
    // The box's top-left corner in its own y-up space is (0, 20).
    expect(apply(placement(box, page, 'top-left', 0), [0, 20])).to.equal([m, m]);
    expect(apply(placement(box, page, 'bottom-right', 0), [100, 0])).to.equal([600 - m, 800 - m]);
    expect(apply(placement(box, page, 'center', 0), [50, 10])).to.equal([300, 400]);
    // Turned a quarter counter-clockwise, the box stands 20 wide and 100 high against the right edge.
    const turned = placement(box, page, 'right', 90);
    expect(apply(turned, [0, 0])).to.equal([600 - m, 450]);
    expect(apply(turned, [100, 20])).to.equal([600 - m - 20, 350]);
  });

  it('orientation matrices map the unit square onto itself as EXIF 1 to 8 say', () => {
    // Where the stored image's top-left pixel (0, 1 in image space) is shown.
    const shownAt = [1, 2, 3, 4, 5, 6, 7, 8].map((o) => apply(orientationMatrix(o), [0, 1]));
    expect(shownAt).to.equal([[0, 1], [1, 1], [1, 0], [0, 0], [0, 1], [1, 1], [1, 0], [0, 0]]);
  });

  it('matrix helpers: an inverse undoes, numbers are written without exponents', () => {
    const m: Matrix = [0, 1, -1, 0, 50, 20];
    expect(concat(m, invert(m)).map((v) => Number(v.toFixed(9)) + 0)).to.equal([1, 0, 0, 1, 0, 0]);
    expect([pdfNumber(1e-7), pdfNumber(-0.00001), pdfNumber(12.5), pdfNumber(3)]).to.equal(['0', '0', '12.5', '3']);
    expect(rgbOf('#FF8000')).to.equal([1, 0.502, 0]);
  });
});

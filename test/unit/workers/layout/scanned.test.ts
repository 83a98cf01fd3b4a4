// The rules that read scanned pages (workers/layout/convert.ts: when a page is a scan; scanned.ts:
// OCR lines as fragments), on structured text and hOCR written in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { hocrFragments, layoutStext, snapSizes } from '../../../../workers/layout/testing.js';
import { THIN_TEXT_CHARS } from '../../../../workers/layout/thresholds.js';
import { fragment, texts } from './fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

/** One page of mupdf structured text holding `text` on one line (nothing at all for ''). */
function stext(text: string): string {
  const chars = [...text].map((c, i) => `<char quad="${i * 6} 100 ${i * 6 + 6} 100 ${i * 6} 112 ${i * 6 + 6} 112" x="${i * 6}" y="110" color="#000000" c="${c}"/>`).join('');
  return `<document><page id="page1" width="612" height="792"><block><line bbox="0 100 600 112"><font name="DejaVuSerif" size="10">${chars}</font></line></block></page></document>`;
}

describe('layout: scanned pages', () => {
  it('a page with no text is a scan; a thin text layer is one only over an image covering most of the page (layoutStext: THIN_TEXT_CHARS, IMAGE_COVER_SCANNED)', () => {
    const thin = 'p. 12';
    expect(thin.replace(/\s/g, '').length).to.be.below(THIN_TEXT_CHARS);
    expect(layoutStext(stext('')).pages[0]!.scan).to.equal('no-text');
    expect(layoutStext(stext(thin), [{ links: [], boxes: [], imageCover: 0.9 }]).pages[0]!.scan).to.equal('image');
    expect(layoutStext(stext(thin), [{ links: [], boxes: [], imageCover: 0.2 }]).pages[0]!.scan).to.equal('none');
    expect(layoutStext(stext('A full line of running text on the page.'), [{ links: [], boxes: [], imageCover: 0.9 }]).pages[0]!.scan).to.equal('none');
  });

  it('a text layer of unmapped glyphs is unreadable: the page needs OCR (layoutStext: UNMAPPED_SHARE)', () => {
    expect(layoutStext(stext('\uFFFD\uFFFD\uFFFD\uFFFDab')).pages[0]!.scan).to.equal('no-text');
  });

  it('an OCR line parts at a gap wider than OCR_WIDE_GAP_EM, and doubtful specks are dropped (hocrFragments)', () => {
    const word = (text: string, x0: number, x1: number, conf = 95) => `<span class='ocrx_word' title='bbox ${x0} 100 ${x1} 130; x_wconf ${conf}'>${text}</span>`;
    const hocr = `<span class='ocr_line' title="bbox 0 100 900 130; baseline 0 -6; x_size 30">${word('Region', 0, 120)} ${word('North', 140, 230)} ${word('~', 260, 270, 20)} ${word('1,204', 500, 600)}</span>`;
    const fragments = hocrFragments(hocr, 0.24);
    expect(texts(fragments)).to.equal(['Region North', '1,204']);
    expect(fragments[1]!.x0).to.equal(120);
  });

  it('OCR type sizes within OCR_SAME_SIZE_RATIO of one another become one size, the one carrying the most text (snapSizes)', () => {
    const fragments = [fragment('a long line of body text', 0, 300, 0, { size: 10 }), fragment('short', 0, 50, 20, { size: 10.4 }), fragment('Heading', 0, 90, 40, { size: 14 })];
    snapSizes(fragments);
    expect(fragments.map((f) => f.size)).to.equal([10, 10, 14]);
  });
});

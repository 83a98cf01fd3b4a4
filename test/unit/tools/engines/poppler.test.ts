// The Poppler engine: pdftotext's text layer and pdfimages' list, on generated PDFs.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { pdfImageList, pdfText } from '../../../../tools/engines/poppler.js';
import { makePdf, photographedPage, textPages } from '../../../support/pdf-fixtures.js';
import { inScratch } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the Poppler engine', () => {
  it('reads the text layer, every page ended by a form feed, and nothing from a file it cannot open', async () => {
    await inScratch(async (dir, file) => {
      const text = await pdfText(await file('in.pdf', makePdf(textPages(2))), { cwd: dir, timeoutMs: 30_000 });
      const pages = text!.split('\f');
      expect(pages).to.have.length(3);
      expect(pages[0]).to.contain('markerpage1');
      expect(pages[1]).to.contain('markerpage2');
      expect(await pdfText(await file('junk.pdf', 'not a pdf'), { cwd: dir, timeoutMs: 30_000 })).to.be.undefined();
    });
  });

  it('lists the images each page draws', async () => {
    await inScratch(async (dir, file) => {
      const scan = await photographedPage(100, 130);
      const list = await pdfImageList(await file('in.pdf', makePdf([{ text: 'a' }, { jpeg: scan }])), { cwd: dir, timeoutMs: 30_000 });
      const rows = list.split('\n').filter((line) => /^\s*\d+\s+\d+\s+image\s/.test(line));
      expect(rows).to.have.length(1);
      expect(rows[0].trim().split(/\s+/).slice(0, 5)).to.equal(['2', '0', 'image', '100', '130']);
    });
  });
});

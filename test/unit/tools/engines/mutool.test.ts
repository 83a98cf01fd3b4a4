// The mutool engine's commands: pages listed, drawn and their images extracted, read back with
// sharp and qpdf; a page mupdf cannot draw is CORRUPT_INPUT.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { ServiceError } from '../../../../core/errors.js';
import { drawAllPages, drawPagePng, extractImages, listImages, listPages } from '../../../../tools/engines/mutool.js';
import { makePdf, photographedPage, textPages } from '../../../support/pdf-fixtures.js';
import { inScratch } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const run = (cwd: string) => ({ cwd, timeoutMs: 30_000 });

describe('the mutool engine', () => {
  it('lists each page\'s box', async () => {
    await inScratch(async (dir, file) => {
      const plain = await file('plain.pdf', makePdf([{ text: 'a', size: [300, 400] }, { text: 'b' }]));
      const listed = await listPages(plain, run(dir));
      expect([...listed.matchAll(/<MediaBox l="0" b="0" r="(\d+)" t="(\d+)"/g)].map((m) => [Number(m[1]), Number(m[2])])).to.equal([[300, 400], [595, 842]]);
    });
  });

  it('draws one page as a PNG within the longest side asked for, grey when asked', async () => {
    await inScratch(async (dir, file) => {
      const pdf = await file('in.pdf', makePdf(textPages(2)));
      const png = await drawPagePng(pdf, 2, { dpi: 72, maxSide: 400, gray: true }, run(dir));
      const meta = await sharp(png).metadata();
      expect(meta.format).to.equal('png');
      expect(Math.max(meta.width!, meta.height!)).to.be.at.most(400);
      expect(meta.channels).to.equal(1);
      const junk = await file('junk.pdf', 'not a pdf');
      const err = await expect(drawPagePng(junk, 1, { dpi: 72, maxSide: 400 }, run(dir))).to.reject(ServiceError);
      expect(err.code).to.equal('CORRUPT_INPUT');
    });
  });

  it('draws every page in one run, bounded in size', async () => {
    await inScratch(async (dir, file) => {
      const pdf = await file('in.pdf', makePdf(textPages(3)));
      expect(await drawAllPages(pdf, { dpi: 50, maxWidth: 1000, maxHeight: 1000, outPattern: path.join(dir, 'page-%d.png') }, run(dir))).to.be.true();
      const pages = (await readdir(dir)).filter((name) => /^page-\d\.png$/.test(name)).sort();
      expect(pages).to.equal(['page-1.png', 'page-2.png', 'page-3.png']);
      const meta = await sharp(path.join(dir, 'page-1.png')).metadata();
      // A4 (595 x 842 pt) at 50 dpi: 413 x 585, give or take mupdf's rounding.
      expect(meta.width).to.be.within(413, 414);
      expect(meta.height).to.be.within(584, 585);
    });
  });

  it('lists the embedded images and extracts them by object number', async () => {
    await inScratch(async (dir, file) => {
      const scan = await photographedPage(200, 260);
      const pdf = await file('in.pdf', makePdf([{ jpeg: scan }, { text: 'no image' }]));
      const listed = await listImages(pdf, run(dir));
      // One line per image: its number, the page's object, its filter, size and depth, and last its own object.
      const objects = [...listed.matchAll(/^\s+\d+\s+\(\d+ 0 R\):.*\((\d+) 0 R\)\s*$/gm)].map((m) => Number(m[1]));
      expect(objects).to.have.length(1);
      expect(listed).to.contain('200x260');
      await extractImages(pdf, objects, run(dir));
      const written = (await readdir(dir)).filter((name) => name.startsWith('image-'));
      expect(written).to.have.length(1);
      const meta = await sharp(path.join(dir, written[0])).metadata();
      expect([meta.width, meta.height]).to.equal([200, 260]);
    });
  });
});

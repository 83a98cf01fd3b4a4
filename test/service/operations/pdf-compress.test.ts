// /v1/pdf/compress: smaller or the same, never larger, with pages, text, outline and links kept;
// target_kb: at or under the target with every page kept, or 422 TARGET_UNREACHABLE naming the
// smallest size reached (paid over HTTP, with the image's, in image-compress.test.ts).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { makePdf, photographedPage, mixedPagesPdf, sampleFile, textPages } from '../../support/pdf-fixtures.js';
import sharp from 'sharp';
import { detailedPhoto } from '../../support/image-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { pdfFacts, tool, withFile } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

describe('pdf.compress on generated fixtures', () => {
  let photo: { bytes: Uint8Array; width: number; height: number };
  let mixedPdf: Uint8Array;
  before(async () => {
    photo = await photographedPage();
    mixedPdf = mixedPagesPdf(photo);
  });

  it('compress never grows the file and keeps pages, text, outline and links at every level', async () => {
    const before = await pdfFacts(mixedPdf);
    expect(before.links).to.be.above(0);
    expect(before.outlineItems).to.be.above(0);
    for (const level of ['lossless', 'balanced', 'max']) {
      const { output, leftovers } = await runOperation('pdf.compress', [mixedPdf], { level });
      expect(leftovers).to.equal([]);
      expect(output!.mediaType).to.equal('application/pdf');
      expect(output!.body.byteLength).to.be.most(mixedPdf.byteLength);
      const facts = await pdfFacts(output!.body);
      expect(facts.check).to.equal(0);
      expect(facts.pages).to.equal(3);
      expect(facts.text).to.contain('markermixed2');
      expect(facts.outlineItems).to.equal(before.outlineItems);
      expect(facts.links).to.equal(before.links);
    }
    // Without navigation to lose, Ghostscript's re-encoding wins: the photo is downsampled.
    const photoPdf = makePdf([{ jpeg: photo }, { jpeg: photo, text: 'second' }]);
    const balanced = (await runOperation('pdf.compress', [photoPdf], { level: 'balanced' })).output!;
    const max = (await runOperation('pdf.compress', [photoPdf], { level: 'max' })).output!;
    expect(balanced.body.byteLength).to.be.below(photoPdf.byteLength * 0.9);
    expect(max.body.byteLength).to.be.at.most(balanced.body.byteLength);
    expect((await pdfFacts(max.body)).pages).to.equal(2);
  });

  it('balanced is no larger than ghostscript /ebook on a scan whose JPEGs are already tight', async () => {
    // Re-encoding a tight scan JPEG makes it bigger; /ebook copies it through. balanced tries both.
    const page = await photographedPage(1700, 2200);
    const scan = makePdf([{ jpeg: page }, { jpeg: page }]);
    const balanced = (await runOperation('pdf.compress', [scan], { level: 'balanced' })).output!;
    const ebook = await withFile(scan, 'pdf', async (file, dir) => {
      const out = path.join(dir, 'ebook.pdf');
      expect((await tool('gs', ['-q', '-dNOPAUSE', '-dBATCH', '-dSAFER', '-sDEVICE=pdfwrite', '-dPDFSETTINGS=/ebook', `-sOutputFile=${out}`, file])).code).to.equal(0);
      return readFile(out);
    });
    expect(balanced.body.byteLength).to.be.at.most(ebook.byteLength);
    const facts = await pdfFacts(balanced.body);
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(2);
  });
});

describe('pdf.compress on the sample corpus', () => {
  it('keeps the outline and links of a pdfLaTeX document through balanced compression', async () => {
    const input = await sampleFile('006-pdflatex-outline/pdflatex-outline.pdf');
    const before = await pdfFacts(input);
    const { output } = await runOperation('pdf.compress', [input], { level: 'balanced' });
    const after = await pdfFacts(output!.body);
    expect(before.outlineItems).to.be.above(0);
    expect(before.links).to.be.above(0);
    expect(after.outlineItems).to.equal(before.outlineItems);
    expect(after.links).to.equal(before.links);
    expect(after.text.replace(/\s+/g, ' ')).to.equal(before.text.replace(/\s+/g, ' '));
  });
});

const KB = 1024;

describe('target_kb on /v1/pdf/compress', () => {
  let pdf: Buffer;
  before(async () => {
    // About 190 dpi on an A4 page: every level below lossless has something to downsample.
    const picture = await sharp(await detailedPhoto(1600, 2240)).jpeg({ quality: 92 }).toBuffer();
    pdf = makePdf([
      { text: 'Cover page', jpeg: { bytes: picture, width: 1600, height: 2240, color: true } },
      { jpeg: { bytes: picture, width: 1600, height: 2240, color: true } },
      ...textPages(1),
    ]);
  });

  it('reaches a target below what lossless and balanced make: at or under it, every page kept, qpdf --check clean', async () => {
    const balanced = (await runOperation('pdf.compress', [pdf], { level: 'balanced' })).output!.body.byteLength;
    const max = (await runOperation('pdf.compress', [pdf], { level: 'max' })).output!.body.byteLength;
    expect(max).to.be.below(balanced);
    const targetKb = Math.floor((balanced - 1) / KB);
    const { output, error } = await runOperation('pdf.compress', [pdf], { target_kb: targetKb });
    expect(error).to.not.exist();
    expect(output!.body.byteLength).to.be.at.most(targetKb * KB);
    const facts = await pdfFacts(output!.body);
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(3);
    expect(facts.text).to.contain('Cover page');
  });

  it('a target the input already meets returns the lossless rewrite or the input, no smaller than needed', async () => {
    const { output } = await runOperation('pdf.compress', [pdf], { target_kb: Math.ceil(pdf.length / KB) });
    const lossless = (await runOperation('pdf.compress', [pdf], { level: 'lossless' })).output!.body;
    expect(output!.body.byteLength).to.equal(lossless.byteLength);
  });

  it('an unreachable target is 422 TARGET_UNREACHABLE naming the smallest size reached', async () => {
    const { error } = await runOperation('pdf.compress', [pdf], { target_kb: 1 });
    expect(error).to.include({ code: 'TARGET_UNREACHABLE', status: 422, field: 'target_kb' });
    const reached = Number(/the smallest PDF reached is (\d+) bytes/.exec(error!.message)?.[1]);
    expect(reached).to.be.above(KB);
    const max = (await runOperation('pdf.compress', [pdf], { level: 'max' })).output!.body.byteLength;
    expect(reached).to.be.at.most(max);
  });

  it('level and target_kb together are refused before payment', async () => {
    const { error } = await runOperation('pdf.compress', [pdf], { level: 'max', target_kb: 100 });
    expect(error).to.include({ code: 'FIELD_INVALID', status: 422, field: 'target_kb' });
  });
});

// /v1/pdf/compress: smaller or the same, never larger, with pages, text, outline and links kept.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { makePdf, photographedPage, mixedPagesPdf, sampleFile } from '../../support/pdf-fixtures.js';
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

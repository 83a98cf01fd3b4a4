// /v1/pdf/split: one PDF per range.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { outlinedTextPdf } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { pdfFacts, zipEntries } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

describe('pdf.split on generated fixtures', () => {
  let textPdf: Uint8Array;
  before(async () => {
    textPdf = outlinedTextPdf();
  });

  it('split returns one PDF per range, named in range order', async () => {
    const { output } = await runOperation('pdf.split', [textPdf], { ranges: '1-2,3-z,2' });
    expect(output!.mediaType).to.equal('application/zip');
    const entries = await zipEntries(output!.body);
    expect(entries.map((e) => e.name)).to.equal(['part-01-p1-2.pdf', 'part-02-p3-5.pdf', 'part-03-p2-2.pdf']);
    const facts = await Promise.all(entries.map((e) => pdfFacts(e.bytes)));
    expect(facts.map((f) => f.pages)).to.equal([2, 3, 1]);
    expect(facts.every((f) => f.check === 0)).to.be.true();
    expect(facts[1].text).to.contain('markerpage5');
    expect(facts[2].text).to.contain('markerpage2');
  });
});

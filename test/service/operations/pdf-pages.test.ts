// /v1/pdf/pages: select, reorder and rotate.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { makePdf, outlinedTextPdf } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { pdfFacts } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

describe('pdf.pages on generated fixtures', () => {
  let textPdf: Uint8Array;
  before(async () => {
    textPdf = outlinedTextPdf();
  });

  it('pages selects, reorders and rotates clockwise', async () => {
    const { output } = await runOperation('pdf.pages', [textPdf], { pages: '4,1-2', rotate: 90 });
    const facts = await pdfFacts(output!.body);
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(3);
    expect(facts.rotations).to.equal([90, 90, 90]);
    const idx = ['markerpage4', 'markerpage1', 'markerpage2'].map((m) => facts.text.indexOf(m));
    expect(idx[0]).to.be.at.least(0);
    expect(idx).to.equal([...idx].sort((a, b) => a - b));
    expect(facts.text).to.not.contain('markerpage3');
    const turned = await runOperation('pdf.pages', [makePdf([{ text: 'a', rotate: 90 }])], { rotate: 270 });
    expect((await pdfFacts(turned.output!.body)).rotations).to.equal([0]);
    const bad = await runOperation('pdf.pages', [textPdf], { pages: '2,9' });
    expect(bad.error!.code).to.equal('FIELD_INVALID');
    expect(bad.error!.message).to.contain('page 9 does not exist: the PDF has 5 pages');
  });
});

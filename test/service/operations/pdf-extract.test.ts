// /v1/pdf/extract: the text layer and page count, and a hint for scanned pages.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { makePdf, photographedPage, outlinedTextPdf, mixedPagesPdf } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

describe('pdf.extract on generated fixtures', () => {
  let photo: { bytes: Uint8Array; width: number; height: number };
  let textPdf: Uint8Array;
  let mixedPdf: Uint8Array;
  before(async () => {
    photo = await photographedPage();
    textPdf = outlinedTextPdf();
    mixedPdf = mixedPagesPdf(photo);
  });

  it('extract returns text and page count, and flags the photographed page as likely scanned', async () => {
    const text = await runOperation('pdf.extract', [textPdf], {});
    const body = JSON.parse(new TextDecoder().decode(text.output!.body));
    expect(body.pageCount).to.equal(5);
    expect(body.likelyScanned).to.be.false();
    expect(body.text.split('\f')).to.have.length(5);
    expect(body.text).to.contain('markerpage5');
    const scanned = JSON.parse(new TextDecoder().decode((await runOperation('pdf.extract', [makePdf([{ jpeg: photo }, { jpeg: photo }])], {})).output!.body));
    expect(scanned).to.equal({ text: '\f', pageCount: 2, likelyScanned: true });
    // A page with a photo and a real text layer is not a scan.
    const mixed = JSON.parse(new TextDecoder().decode((await runOperation('pdf.extract', [mixedPdf], {})).output!.body));
    expect(mixed.likelyScanned).to.be.false();
  });
});

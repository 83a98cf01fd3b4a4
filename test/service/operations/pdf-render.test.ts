// /v1/pdf/render: one PNG per page at the requested dpi, within the page and pixel bounds.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { makePdf, textPages } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { zipEntries } from '../../support/independent-tools.js';
import { realFile } from '../../support/real-files.js';
import { form, startTestService, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('pdf.render on generated fixtures', () => {
  it('render returns page-NNNN.png in order at the requested dpi, and bounds pages and pixels', async () => {
    const pdf = makePdf([{ text: 'one' }, { text: 'two', size: [300, 200] }]);
    const { output } = await runOperation('pdf.render', [pdf], { dpi: 72 });
    const entries = await zipEntries(output!.body);
    expect(entries.map((e) => e.name)).to.equal(['page-0001.png', 'page-0002.png']);
    const sizes = await Promise.all(entries.map(async (e) => {
      const m = await sharp(e.bytes).metadata();
      return [m.format, m.width, m.height];
    }));
    expect(sizes).to.equal([['png', 595, 842], ['png', 300, 200]]);
    // A page without a MediaBox (blanked out, offsets kept) is drawn at mupdf's default, US Letter.
    const box = '/MediaBox [0 0 595 842]';
    const boxless = Buffer.from(makePdf([{ text: 'no box' }]).toString('latin1').replace(box, ' '.repeat(box.length)), 'latin1');
    const letter = await zipEntries((await runOperation('pdf.render', [boxless], { dpi: 72 })).output!.body);
    expect(await sharp(letter[0].bytes).metadata()).to.include({ width: 612, height: 792 });
    const many = await runOperation('pdf.render', [makePdf(textPages(51))], { dpi: 36 });
    expect(many.error!.code).to.equal('LIMIT_EXCEEDED');
    const huge = await runOperation('pdf.render', [makePdf([{ text: 'a' }, { text: 'b', size: [14400, 14400] }])], { dpi: 300 });
    expect(huge.error!.code).to.equal('LIMIT_EXCEEDED');
    expect(huge.error!.message).to.contain('page 2');
    // UserUnit scales the page and Rotate turns it, as mupdf draws them: 200 x 100 units of 2 pt, turned.
    const scaled = await zipEntries((await runOperation('pdf.render', [makePdf([{ text: 'big units', size: [200, 100], userUnit: 2, rotate: 90 }])], { dpi: 72 })).output!.body);
    expect(await sharp(scaled[0].bytes).metadata()).to.include({ width: 200, height: 400 });
    // 200 x 200 units of 100 pt are 10000 x 10000 pixels at 36 dpi: refused, not drawn.
    const userUnit = await runOperation('pdf.render', [makePdf([{ text: 'a', size: [200, 200], userUnit: 100 }])], { dpi: 36 });
    expect(userUnit.error!.code).to.equal('LIMIT_EXCEEDED');
    expect(userUnit.error!.message).to.contain('10000 x 10000 pixels');
    // An unknown operator (mutool reports it and exits 1, having drawn every page as viewers show it) renders.
    const unknownOperator = Buffer.from(pdf.toString('latin1').replace(' Tj', ' Tx'), 'latin1');
    const drawn = await runOperation('pdf.render', [unknownOperator], { dpi: 36 });
    expect(drawn.error).to.not.exist();
    expect((await zipEntries(drawn.output!.body)).map((e) => e.name)).to.equal(['page-0001.png', 'page-0002.png']);
    const tooBig = await runOperation('pdf.render', [pdf], { dpi: 300 }, { maxZipBytes: 10_000 });
    expect(tooBig.error!.code).to.equal('LIMIT_EXCEEDED');
    expect(tooBig.leftovers).to.equal([]);
  });
});

describe('pdf.render of a page MuPDF cannot read', () => {
  let t: TestService;
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('qpdf\'s issue-1688b.pdf (Flate predictor parameters MuPDF refuses) is refused before any payment, naming the page and MuPDF; a paid attempt is not charged', async () => {
    const pdf = await realFile('issue-1688b.pdf');
    const before = await balancesOf(t.evm);
    const payFetch = await t.payFetch('base');
    const send = () => ({ method: 'POST', body: form([pdf], { dpi: 72 }) });
    for (const res of [await fetch(`${t.url}/v1/pdf/render`, send()), await payFetch(`${t.url}/v1/pdf/render`, send())]) {
      expect(res.status).to.equal(422);
      expect(res.headers.get('payment-required')).to.be.null();
      expect(await res.json()).to.equal({ error: {
        code: 'CORRUPT_INPUT', status: 422, field: 'file',
        message: 'page 1 of the PDF cannot be read by MuPDF, which /v1/pdf/render reads pages with: its content is damaged or uses parameters MuPDF does not support',
      } });
    }
    expect((await balancesOf(t.evm)).payer).to.equal(before.payer);
  });
});

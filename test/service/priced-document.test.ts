// The work runs on exactly the document that was priced: a PDF whose readers disagree (two
// documents in one file without a usable cross-reference table; a PostScript program before the
// header) is rewritten by the tool that counted it, and every later tool reads that rewrite.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { startTestService, form, type TestService } from '../support/service.js';
import { balancesOf, quoteAt } from '../support/paying.js';
import { runOperation } from '../support/jobs.js';
import { pdfFacts, zipEntries, withFile, tool } from '../support/independent-tools.js';
import { labelledDocument, postscriptBeforePdf, twoDocuments } from '../support/hostile-pdf-structure.js';
import { realFile } from '../support/real-files.js';
import { operations } from '../../operations/index.js';
import type { OperationId } from '../../operations/index.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** How many pages poppler finds in the bytes (pdfinfo), the reader the attack relied on. */
async function popplerPages(bytes: Uint8Array): Promise<number> {
  return withFile(bytes, 'pdf', async (file) => Number(/^Pages:\s+(\d+)/m.exec((await tool('pdfinfo', [file])).out)?.[1] ?? -1));
}

describe('the document that was priced is the document processed', () => {
  let t: TestService;
  const oneThenForty = twoDocuments(1, 40);
  const fortyThenOne = twoDocuments(40, 1);

  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('the fixtures are what the attack used: qpdf counts one document, poppler another', async () => {
    expect(await popplerPages(oneThenForty)).to.equal(40);
    expect(await popplerPages(fortyThenOne)).to.equal(1);
  });

  it('a paid extract of two documents priced as one page returns that one page, and is charged for one', async () => {
    const quote = await quoteAt(`${t.url}/v1/pdf/extract`, form([oneThenForty]));
    expect(quote.accepts[0].amount).to.equal('10000');
    const before = await balancesOf(t.evm);
    const res = await (await t.payFetch())(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form([oneThenForty]) });
    expect(res.status).to.equal(200);
    const { text } = await res.json() as { text: string };
    expect(text).to.include('FIRST page 1');
    expect(text).to.not.include('LAST');
    const after = await balancesOf(t.evm);
    expect(before.payer - after.payer).to.equal(10000n);
  });

  it('the same file with the documents swapped is priced and processed as forty pages', async () => {
    const quote = await quoteAt(`${t.url}/v1/pdf/render`, form([fortyThenOne], { dpi: 36 }));
    expect(quote.accepts[0].amount).to.equal(String(40 * 10000));
    const before = await balancesOf(t.evm);
    const res = await (await t.payFetch())(`${t.url}/v1/pdf/render`, { method: 'POST', body: form([fortyThenOne], { dpi: 36 }) });
    expect(res.status).to.equal(200);
    const entries = await zipEntries(new Uint8Array(await res.arrayBuffer()));
    expect(entries.length).to.equal(40);
    const after = await balancesOf(t.evm);
    expect(before.payer - after.payer).to.equal(400000n);
  });

  it('a paid render of two documents priced as one page draws one page', async () => {
    const quote = await quoteAt(`${t.url}/v1/pdf/render`, form([oneThenForty], { dpi: 36 }));
    expect(quote.accepts[0].amount).to.equal('10000');
    const res = await (await t.payFetch())(`${t.url}/v1/pdf/render`, { method: 'POST', body: form([oneThenForty], { dpi: 36 }) });
    expect(res.status).to.equal(200);
    expect((await zipEntries(new Uint8Array(await res.arrayBuffer()))).map((e) => e.name)).to.equal(['page-0001.png']);
  });

  it('every PDF operation that takes one file works on the priced pages', async () => {
    const fields: Partial<Record<OperationId, Record<string, string>>> = {
      'pdf.pages': { pages: '1' }, 'pdf.split': { ranges: '1' }, 'pdf.protect': { password: 'secret' }, 'pdf.render': { dpi: '36' },
      'pdf.redact': { text: '["not in the document"]' }, 'pdf.stamp': { text: 'Page {n} of {total}' },
      'pdf.set-metadata': { title: 'A title' },
    };
    // form-fill takes only documents with a form, which this one is not (pdf-forms fills one priced by its pages).
    const local = operations.filter((op) => op.input.kind === 'pdf' && op.input.count.max === 1 && 'local' in op.content
      && !op.input.acceptsEncrypted && op.id !== 'pdf.form-fill');
    expect(local.length).to.be.at.least(8);
    for (const op of local) {
      const outcome = await runOperation(op.id as OperationId, [oneThenForty], fields[op.id as OperationId] ?? {});
      if (op.id === 'pdf.images') {
        // The priced page draws no image: the one document has none to return.
        expect(outcome.error?.code, op.id).to.equal('NO_CONTENT');
        continue;
      }
      expect(outcome.error, op.id).to.not.exist();
      const { body, mediaType } = outcome.output!;
      const text = Buffer.from(body).toString('utf8');
      if (mediaType === 'application/pdf') {
        const facts = await pdfFacts(body, op.id === 'pdf.protect' ? 'secret' : undefined);
        expect(facts.pages, op.id).to.equal(1);
        expect(facts.text, op.id).to.not.include('LAST');
      } else if (mediaType === 'application/zip') {
        expect((await zipEntries(body)).length, op.id).to.equal(1);
      } else if (op.id === 'pdf.metadata') {
        expect((JSON.parse(text) as { pageCount: number }).pageCount, op.id).to.equal(1);
      } else if (op.id === 'pdf.form-fields') {
        // The document has no form on either page: its reading says so, and nothing else.
        expect(JSON.parse(text), op.id).to.equal({ fields: [] });
      } else {
        expect(text, op.id).to.include('FIRST page 1');
        expect(text, op.id).to.not.include('LAST');
      }
    }
  });

  it('a merge works on each file as priced', async () => {
    const outcome = await runOperation('pdf.merge', [oneThenForty, labelledDocument(2, 'OTHER')], {});
    expect(outcome.error).to.not.exist();
    const facts = await pdfFacts(outcome.output!.body);
    expect(facts.pages).to.equal(3);
    expect(facts.text).to.not.include('LAST');
  });

  it('PostScript before the header never reaches Ghostscript: the paid compress returns the PDF alone', async () => {
    const polyglot = postscriptBeforePdf();
    const quote = await quoteAt(`${t.url}/v1/pdf/compress`, form([polyglot], { level: 'max' }));
    expect(quote.accepts[0].amount).to.equal('5000');
    const res = await (await t.payFetch())(`${t.url}/v1/pdf/compress`, { method: 'POST', body: form([polyglot], { level: 'max' }) });
    expect(res.status).to.equal(200);
    const body = new Uint8Array(await res.arrayBuffer());
    expect(Buffer.from(body.subarray(0, 5)).toString('latin1')).to.equal('%PDF-');
    const facts = await pdfFacts(body);
    expect(facts.pages).to.equal(1);
    expect(facts.text).to.include('REAL page 1');
    expect(facts.text).to.not.include('INJECTED');
    expect(Buffer.from(body).includes('INJECTED')).to.equal(false);
  });

  it('a file whose only flaw is a stray # in a trailer name (qpdf\'s bad21.pdf, which every reader reads alike) is quoted and processed by six operations, each charged its price', async () => {
    const bad21 = await realFile('bad21.pdf');
    const calls: Array<[string, Record<string, string>, (res: Response) => Promise<void>]> = [
      ['/v1/pdf/markdown', {}, async (res) => { expect(await res.text()).to.contain('Potato'); }],
      ['/v1/pdf/extract', {}, async (res) => { expect(((await res.json()) as { text: string }).text).to.contain('Potato'); }],
      ['/v1/pdf/compress', {}, async (res) => { expect((await pdfFacts(new Uint8Array(await res.arrayBuffer()))).text).to.contain('Potato'); }],
      ['/v1/pdf/pages', { pages: '1' }, async (res) => { expect((await pdfFacts(new Uint8Array(await res.arrayBuffer()))).text).to.contain('Potato'); }],
      ['/v1/pdf/sanitize', {}, async (res) => { expect((await pdfFacts(new Uint8Array(await res.arrayBuffer()))).text).to.contain('Potato'); }],
      ['/v1/pdf/render', { dpi: '36' }, async (res) => { expect((await zipEntries(new Uint8Array(await res.arrayBuffer()))).map((e) => e.name)).to.equal(['page-0001.png']); }],
    ];
    const payFetch = await t.payFetch();
    const before = await balancesOf(t.evm);
    let quoted = 0n;
    for (const [route, fields, check] of calls) {
      quoted += BigInt((await quoteAt(`${t.url}${route}`, form([bad21], fields))).accepts[0].amount);
      const res = await payFetch(`${t.url}${route}`, { method: 'POST', body: form([bad21], fields) });
      expect(res.status, route).to.equal(200);
      await check(res);
    }
    const after = await balancesOf(t.evm);
    expect(before.payer - after.payer).to.equal(quoted);
  });

  it('merge-compress of a polyglot runs Ghostscript on the PDF alone', async () => {
    const outcome = await runOperation('pdf.merge-compress', [postscriptBeforePdf(), labelledDocument(1, 'SECOND')], { level: 'max' });
    expect(outcome.error).to.not.exist();
    const facts = await pdfFacts(outcome.output!.body);
    expect(facts.pages).to.equal(2);
    expect(facts.text).to.not.include('INJECTED');
  });
});

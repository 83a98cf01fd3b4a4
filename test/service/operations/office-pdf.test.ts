// /v1/office/pdf: Office documents of ten formats become PDFs whose pages and words another
// reader finds (qpdf, pdftotext), each format recognised from the bytes; a PDF over the page bound
// is refused after the work; the deadline kills LibreOffice with everything it started; paid calls
// over HTTP (a mislabelled file refused before the quote) and MCP on the local Base chain with the
// balances read.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import {
  cryptoApiFilePass, docx, odt, odtOfPages, officeSamples, PAGE_WORDS, withFilePass, xlsx, xorFilePass,
} from '../../support/office-fixtures.js';
import { DEFAULT_XLS_PASSWORD, xorVerifier } from '../../../checks/xls-encryption.js';
import { runOperation } from '../../support/jobs.js';
import { pdfFacts } from '../../support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';
import { realFile } from '../../support/real-files.js';
import { inspectOffice } from '../../../checks/office.js';
import { OFFICE_MAX_PAGES, officePdf } from '../../../operations/office/pdf.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const words = (text: string) => text.replace(/\s+/g, ' ');

/** The soffice processes still running whose command line names the given directory. */
async function sofficeUnder(dir: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (/soffice|oosplash/.test(cmdline) && cmdline.includes(dir)) found.push(Number(pid));
    } catch { /* gone */ }
  }
  return found;
}

describe('Office documents converted to PDF', () => {
  let samples: Awaited<ReturnType<typeof officeSamples>>;
  before({ timeout: 120_000 }, async () => { samples = await officeSamples(); });

  it('DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, DOC, XLS and PPT: two pages each, with their words, read by qpdf and pdftotext', { timeout: 240_000 }, async () => {
    for (const [format, bytes] of Object.entries(samples)) {
      const outcome = await runOperation('office.pdf', [bytes], {});
      expect(outcome.error, format).to.not.exist();
      expect(outcome.output!.mediaType).to.equal('application/pdf');
      const facts = await pdfFacts(outcome.output!.body);
      expect(facts.check, format).to.equal(0);
      expect(facts.pages, format).to.equal(2);
      for (const phrase of PAGE_WORDS) expect(words(facts.text), format).to.include(phrase);
      expect(outcome.leftovers, format).to.equal([]);
    }
  });

  it('the format comes from the bytes: each sample is recognised whatever it is called', async () => {
    const expected = { docx: 'docx', xlsx: 'xlsx', pptx: 'pptx', odt: 'odt', ods: 'ods', odp: 'odp', rtf: 'rtf', doc: 'doc', xls: 'xls', ppt: 'ppt' };
    for (const [name, bytes] of Object.entries(samples)) {
      expect(await inspectOffice(bytes, undefined) as string, name).to.equal(expected[name as keyof typeof expected]);
    }
  });
});

describe('the bounds of a conversion', () => {
  it('killed at its deadline with everything it started: JOB_TIMEOUT, no soffice left', { timeout: 30_000 }, async () => {
    const outcome = await runOperation('office.pdf', [await odt()], {}, { timeoutMs: 1_200 });
    expect(outcome.error).to.include({ code: 'JOB_TIMEOUT', status: 504 });
    // runOperation's job directories are made under jobRoot(); the profile's URL names the job's.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await sofficeUnder('paydoc')).to.equal([]);
    expect(await sofficeUnder('/dev/shm/')).to.equal([]);
  });

  it(`a document of more than ${OFFICE_MAX_PAGES} pages is refused after the conversion (413), nothing returned`, { timeout: 120_000 }, async () => {
    const long = await odtOfPages(OFFICE_MAX_PAGES + 1);
    const outcome = await runOperation('office.pdf', [long], {});
    expect(outcome.error).to.include({ code: 'LIMIT_EXCEEDED', status: 413 });
    expect(outcome.error!.message).to.equal(`the document converts to ${OFFICE_MAX_PAGES + 1} pages of PDF; /v1/office/pdf returns at most ${OFFICE_MAX_PAGES}; nothing was charged: split it into smaller documents`);
  });
});

describe('converting paid over HTTP on the local Base chain, and over MCP', () => {
  let t: TestService;
  let document: Buffer;
  before(async () => { t = await startTestService(); document = await docx(); });
  after(async () => { await t?.stop(); });

  it('HTTP: a mislabelled file is refused before the quote; the right one is charged 0.02 USD and comes back as a two-page PDF', { timeout: 60_000 }, async () => {
    const mislabelled = await fetch(`${t.url}/v1/office/pdf`, { method: 'POST', body: form([{ bytes: await xlsx(), name: 'report.docx' }]) });
    expect(mislabelled.status).to.equal(422);
    expect(mislabelled.headers.get('payment-required')).to.be.null();
    expect(((await mislabelled.json()) as { error: { message: string } }).error.message).to.match(/^the file is not what it claims: its name \(\.docx\) says a Word document/);

    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const res = await payFetch(`${t.url}/v1/office/pdf`, {
      method: 'POST', body: form([{ bytes: document, name: 'report.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' }]),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    const facts = await pdfFacts(new Uint8Array(await res.arrayBuffer()));
    expect(facts.pages).to.equal(2);
    expect(words(facts.text)).to.include(PAGE_WORDS[1]);
    const charged = await balancesOf(t.evm);
    expect(before.payer - charged.payer).to.equal(20000n);
    expect(charged.payTo - before.payTo).to.equal(20000n);
  });

  it('an encrypted PowerPoint 97-2003 file (Apache POI\'s RC4 CryptoAPI test file) is refused before any payment, naming the password; a paid attempt is not charged', async () => {
    const presentation = await realFile('Password_Protected-hello.ppt');
    const send = () => form([{ bytes: presentation, name: 'Password_Protected-hello.ppt', type: 'application/vnd.ms-powerpoint' }]);
    const before = await balancesOf(t.evm);
    const payFetch = await t.payFetch('base');
    for (const res of [await fetch(`${t.url}/v1/office/pdf`, { method: 'POST', body: send() }), await payFetch(`${t.url}/v1/office/pdf`, { method: 'POST', body: send() })]) {
      expect(res.status).to.equal(422);
      expect(res.headers.get('payment-required')).to.be.null();
      expect(((await res.json()) as { error: Record<string, unknown> }).error).to.equal({
        code: 'UNSUPPORTED_TYPE', status: 422, field: 'file',
        message: 'the PowerPoint 97-2003 presentation (PPT) is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again',
      });
    }
    expect((await balancesOf(t.evm)).payer).to.equal(before.payer);
  });

  it('an encrypted XLS (RC4 CryptoAPI, XOR obfuscation) is refused in the quote, naming the password; a paid attempt is not charged; Excel\'s built-in password is quoted', {
    timeout: 120_000,
  }, async () => {
    const { xls } = await officeSamples();
    const send = (bytes: Buffer) => form([{ bytes, name: 'accounts.xls', type: 'application/vnd.ms-excel' }]);
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    for (const filePass of [cryptoApiFilePass('s3cret'), xorFilePass(xorVerifier('s3cret'))]) {
      const locked = withFilePass(xls, filePass);
      for (const res of [await fetch(`${t.url}/v1/office/pdf`, { method: 'POST', body: send(locked) }),
        await payFetch(`${t.url}/v1/office/pdf`, { method: 'POST', body: send(locked) })]) {
        expect(res.status).to.equal(422);
        expect(res.headers.get('payment-required')).to.be.null();
        expect(((await res.json()) as { error: Record<string, unknown> }).error).to.equal({
          code: 'UNSUPPORTED_TYPE', status: 422, field: 'file',
          message: 'the Excel 97-2003 workbook (XLS) is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again',
        });
      }
    }
    expect((await balancesOf(t.evm)).payer).to.equal(before.payer);
    const writeProtected = withFilePass(xls, cryptoApiFilePass(DEFAULT_XLS_PASSWORD));
    expect((await fetch(`${t.url}/v1/office/pdf`, { method: 'POST', body: send(writeProtected) })).status).to.equal(402);
  });

  it('Apache POI\'s real files once refused are converted and charged: a PPTX with a stray byte after its ZIP end record, a Word 6.0 DOC', { timeout: 120_000 }, async () => {
    const files = [
      { name: 'au.asn.aes.www_conferences_2011_presentations_Fri_20Room4Level4_20930_20Maloney.pptx', type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' },
      { name: 'cn.orthodox.www_divenbog_APRIL_30-APRIL.DOC', type: 'application/msword' },
    ] as const;
    const payFetch = await t.payFetch('base');
    for (const { name, type } of files) {
      const before = await balancesOf(t.evm);
      const res = await payFetch(`${t.url}/v1/office/pdf`, { method: 'POST', body: form([{ bytes: await realFile(name), name, type }]) });
      expect(res.status, name).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/pdf');
      const facts = await pdfFacts(new Uint8Array(await res.arrayBuffer()));
      expect(facts.check, name).to.equal(0);
      expect(facts.pages, name).to.be.above(0);
      const charged = await balancesOf(t.evm);
      expect(before.payer - charged.payer, name).to.equal(BigInt(officePdf.price.rate));
      expect(charged.payTo - before.payTo, name).to.equal(BigInt(officePdf.price.rate));
    }
  });

  it('MCP: svc_office_pdf quotes 0.02 USD, and the paid call returns the PDF as a resource', { timeout: 60_000 }, async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const workbook = await xlsx();
      const args = { file: { data: workbook.toString('base64'), mediaType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' } };
      const unpaid = await client.callTool({ name: 'svc_office_pdf', arguments: args }) as { structuredContent?: Record<string, unknown> };
      const quote = unpaid.structuredContent as unknown as PaymentRequired;
      expect(quote.accepts[0].amount).to.equal('20000');
      const before = await balancesOf(t.evm);
      const paid = await client.callTool({ name: 'svc_office_pdf', arguments: args, _meta: { 'x402/payment': await signOnBase(quote, t.evm.payerKey) } }) as {
        isError?: boolean; content: Array<{ type: string; resource?: { blob?: string; mimeType?: string } }>;
      };
      expect(paid.isError).to.not.equal(true);
      const resource = paid.content.find((c) => c.type === 'resource')!.resource!;
      expect(resource.mimeType).to.equal('application/pdf');
      const facts = await pdfFacts(Buffer.from(resource.blob!, 'base64'));
      expect(facts.pages).to.equal(2);
      expect(words(facts.text)).to.include(PAGE_WORDS[0]);
      const charged = await balancesOf(t.evm);
      expect(before.payer - charged.payer).to.equal(20000n);
    } finally {
      await client.close();
    }
  });
});

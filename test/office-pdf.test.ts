// /v1/office/pdf: Office documents of ten formats become PDFs whose pages and words another
// reader finds (qpdf, pdftotext); the format is read from the bytes before payment, a file that is
// not what it claims is refused then; a macro bound to the document's opening does not run and a
// linked image is not fetched (each shown to be real by a run that lets it happen); LibreOffice is
// killed with everything it started at the deadline; paid calls over HTTP and MCP on the local
// Base chain with the balances read.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { compoundFile, declaringUnpackedSize, docx, hostileOdt, officeSamples, odt, odtOfPages, PAGE_WORDS, xlsx, zipOf } from './office-fixtures.js';
import { runOperation } from './support/jobs.js';
import { pdfFacts } from './support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from './support/service.js';
import { balancesOf } from './support/paying.js';
import { inspectOffice, OFFICE_ZIP_LIMITS } from '../checks/office.js';
import { ServiceError } from '../core/errors.js';
import { OFFICE_MAX_PAGES } from '../operations/office/pdf.js';
import { runTool, RunFailure } from '../tools/process/run-tool.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const words = (text: string) => text.replace(/\s+/g, ' ');

/** The code and message a pre-payment check refuses the bytes with. */
function refusal(bytes: Uint8Array, declared?: { extension?: string; mediaType?: string }): { code: string; message: string } {
  try {
    inspectOffice(bytes, declared);
  } catch (err) {
    if (err instanceof ServiceError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the bytes were accepted');
}

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

  it('the format comes from the bytes: each sample is recognised whatever it is called', () => {
    const expected = { docx: 'docx', xlsx: 'xlsx', pptx: 'pptx', odt: 'odt', ods: 'ods', odp: 'odp', rtf: 'rtf', doc: 'doc', xls: 'xls', ppt: 'ppt' };
    for (const [name, bytes] of Object.entries(samples)) expect(inspectOffice(bytes, undefined) as string, name).to.equal(expected[name as keyof typeof expected]);
  });
});

describe('the checks before payment', () => {
  it('a file whose name or declared type names another Office format is refused, naming both', async () => {
    const workbook = await xlsx();
    expect(refusal(workbook, { extension: 'docx' })).to.equal({ code: 'UNSUPPORTED_TYPE', message: 'the file is not what it claims: its name (.docx) says a Word document (DOCX), but its bytes are an Excel workbook (XLSX); send it under its right name or type' });
    expect(refusal(workbook, { mediaType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' }).message).to.match(/its declared type .* says a PowerPoint presentation \(PPTX\), but its bytes are an Excel workbook/);
    expect(refusal(compoundFile(['WordDocument']), { extension: 'xls' }).message).to.match(/its name \(\.xls\) says an Excel 97-2003 workbook \(XLS\), but its bytes are a Word 97-2003 document \(DOC\)/);
    // Generic names and types claim nothing; a macro-enabled name for the plain format is the same family.
    expect(inspectOffice(workbook, { extension: 'bin', mediaType: 'application/octet-stream' })).to.equal('xlsx');
    expect(inspectOffice(workbook, { extension: 'xlsm' })).to.equal('xlsx');
  });

  it('what is not an Office document is named: a PDF, a plain ZIP, another OpenDocument kind, a package without its main part, an empty file', async () => {
    expect(refusal(Buffer.from('%PDF-1.7\n'))).to.equal({ code: 'UNSUPPORTED_TYPE', message: 'the file is a PDF, not an Office document; send a DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, DOC, XLS or PPT file' });
    expect(refusal(await zipOf([{ name: 'notes.txt', text: 'hello' }])).message).to.match(/^the file is a ZIP archive \(neither an OOXML package/);
    expect(refusal(await zipOf([{ name: 'mimetype', text: 'application/vnd.oasis.opendocument.graphics', store: true }, { name: 'content.xml', text: '<x/>' }])).message)
      .to.match(/an OpenDocument file of a kind this service does not convert \(graphics\)/);
    const hollow = await zipOf([
      { name: '[Content_Types].xml', text: '<Types><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>' },
    ]);
    expect(refusal(hollow)).to.equal({ code: 'CORRUPT_INPUT', message: 'the file says it is a Word document (DOCX) but does not hold its main part /word/document.xml: it is damaged' });
    expect(refusal(Buffer.alloc(0)).message).to.match(/^the file is empty, not an Office document/);
    expect(refusal(compoundFile(['Contents'])).message).to.match(/an OLE2 compound file holding no Word, Excel or PowerPoint stream/);
  });

  it('encrypted documents are refused: an OOXML package encrypted into a compound file', () => {
    expect(refusal(compoundFile(['EncryptionInfo', 'EncryptedPackage']))).to.equal({
      code: 'UNSUPPORTED_TYPE',
      message: 'the document (an encrypted OOXML package) is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again',
    });
  });

  it('ZIP bombs are bounded from the directory: declared unpacked size and number of parts', async () => {
    const bomb = declaringUnpackedSize(await docx(), 200 * 1024 * 1024);
    expect(refusal(bomb)).to.equal({ code: 'LIMIT_EXCEEDED', message: 'the package\'s parts unpack to more than 512 MB, more than one conversion unpacks' });
    const crowded = await zipOf([
      { name: 'mimetype', text: 'application/vnd.oasis.opendocument.text', store: true },
      ...Array.from({ length: OFFICE_ZIP_LIMITS.entries }, (_, i) => ({ name: `Pictures/${i}.xml`, text: '' })),
    ]);
    expect(refusal(crowded)).to.equal({ code: 'LIMIT_EXCEEDED', message: `the package holds ${OFFICE_ZIP_LIMITS.entries + 1} parts; at most ${OFFICE_ZIP_LIMITS.entries} are converted` });
  });
});

describe('what a document may not do while it is converted', () => {
  let server: http.Server;
  const requests: string[] = [];
  let imageUrl: string;
  let scratch: string;

  before(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'paydoc-office-hostile-'));
    server = http.createServer((req, res) => { requests.push(`${req.method} ${req.url}`); res.writeHead(404).end(); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    imageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/linked.png`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(scratch, { recursive: true, force: true });
  });

  it('the macro bound to opening does not run and the linked image is not fetched; the text is converted', { timeout: 60_000 }, async () => {
    const marker = path.join(scratch, 'macro-ran');
    requests.length = 0;
    const outcome = await runOperation('office.pdf', [await hostileOdt(marker, imageUrl)], {});
    expect(outcome.error).to.not.exist();
    expect(words((await pdfFacts(outcome.output!.body)).text)).to.include(PAGE_WORDS[0]);
    expect(existsSync(marker)).to.be.false();
    expect(requests).to.equal([]);
  });

  it('both are real: LibreOffice with a bare profile fetches the image, and runs the macro when it opens the document with macros allowed', { timeout: 60_000 }, async () => {
    const marker = path.join(scratch, 'macro-ran-control');
    const document = path.join(scratch, 'hostile.odt');
    await writeFile(document, await hostileOdt(marker, imageUrl));
    requests.length = 0;
    const bare = await runTool('soffice', ['--headless', '--norestore', `-env:UserInstallation=file://${scratch}/bare`, '--convert-to', 'pdf', '--outdir', scratch, document], { cwd: scratch, timeoutMs: 30_000 });
    expect(bare.exitCode).to.equal(0);
    expect(requests).to.include('GET /linked.png');
    // Opened (not converted) with the lowest macro security, the macro runs; the office stays open, so it is stopped.
    await mkdir(path.join(scratch, 'low', 'user'), { recursive: true });
    await writeFile(path.join(scratch, 'low', 'user', 'registrymodifications.xcu'), '<?xml version="1.0" encoding="UTF-8"?><oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"><item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>0</value></prop></item></oor:items>');
    const stop = new AbortController();
    const poll = setInterval(() => { if (existsSync(marker)) stop.abort(); }, 200);
    try {
      await runTool('soffice', ['--headless', '--norestore', `-env:UserInstallation=file://${scratch}/low`, document], { cwd: scratch, timeoutMs: 30_000, signal: stop.signal }).catch((err: unknown) => {
        if (!(err instanceof RunFailure)) throw err;
      });
    } finally {
      clearInterval(poll);
    }
    expect(existsSync(marker)).to.be.true();
  });

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

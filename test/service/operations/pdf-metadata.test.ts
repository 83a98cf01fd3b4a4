// /v1/pdf/metadata and /v1/pdf/set-metadata: written and read back, and read by qpdf (its JSON of
// the Info dictionary, the raw strings, the XMP packet's text) rather than by this service alone.
// Paid over HTTP on the local Base chain with balances read, and over MCP; the pdf.js robustness
// corpus through both, never a 5xx.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { makePdf, textPages } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { tool, withFile } from '../../support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf, errorCode } from '../../support/paying.js';
import { METADATA_SCHEMA } from '../../../operations/pdf/metadata.js';
import type { PdfMetadata } from '../../../tools/engines/mupdf-js.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../../shared/corpus/robustness');

/**
 * A packet as Acrobat-era tools write it: an old title as an element, keywords and the tool as
 * attributes (xap: prefix), a PDF/A-2B claim.
 */
const OLD_PACKET = `<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdfaid:part="2" pdfaid:conformance="B"/>
<rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/" xmlns:xap="http://ns.adobe.com/xap/1.0/" pdf:Keywords="old keywords" xap:CreatorTool="Old Tool"/>
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title><rdf:Alt><rdf:li xml:lang="x-default">Old title</rdf:li></rdf:Alt></dc:title>
<dc:format>application/pdf</dc:format></rdf:Description>
</rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>`;

/**
 * A one-page PDF with an Info dictionary (dates with and without a time zone) and, when given, an
 * XMP packet; qpdf writes the cross-reference table.
 */
async function describedPdf(xmp?: string): Promise<Uint8Array> {
  const content = 'BT /F1 14 Tf 56 770 Td (Described) Tj ET';
  const packet = xmp === undefined ? undefined : Buffer.from(xmp, 'utf8');
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R${packet ? ' /Metadata 6 0 R' : ''} >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    `<< /Type /Metadata /Subtype /XML /Length ${packet?.byteLength ?? 0} >>\nstream\n${packet?.toString('latin1') ?? ''}\nendstream`,
    "<< /Title (Old title) /Author (Old Author) /Keywords (old keywords) /Creator (Old Tool) /Producer (Old Producer) /CreationDate (D:20230102030405+05'30') /ModDate (D:20240607080910) >>",
  ];
  const body = objects.map((o, i) => `${i + 1} 0 obj\n${o}\nendobj\n`).join('');
  const raw = Buffer.from(`%PDF-1.6\n${body}trailer\n<< /Root 1 0 R /Info 7 0 R /Size 8 >>\n%%EOF\n`, 'latin1');
  return withFile(raw, 'pdf', async (file, dir) => {
    const out = path.join(dir, 'fixed.pdf');
    await tool('qpdf', ['--object-streams=generate', file, out], dir);
    return new Uint8Array(await readFile(out));
  });
}

/** What qpdf reads: the Info dictionary (its JSON), the raw Title string as the file holds it, and the XMP packet's text. */
async function qpdfReads(pdf: Uint8Array): Promise<{ info: Record<string, string>; rawTitle: string; xmp: string }> {
  return withFile(pdf, 'pdf', async (file, dir) => {
    const json = JSON.parse((await tool('qpdf', ['--json=2', '--json-key=qpdf', file], dir)).out) as {
      qpdf: [unknown, Record<string, { value?: Record<string, unknown> }>];
    };
    const objects = json.qpdf[1];
    const ref = (value: unknown) => `obj:${String(value)}`;
    const trailer = objects.trailer.value!;
    const info = objects[ref(trailer['/Info'])]?.value ?? {};
    const root = objects[ref(trailer['/Root'])].value!;
    const infoNumber = String(trailer['/Info'] ?? '').split(' ')[0];
    const shown = infoNumber ? (await tool('qpdf', [`--show-object=${infoNumber}`, file], dir)).out : '';
    const rawTitle = /\/Title (<[0-9a-fA-F]+>|\((?:[^()\\]|\\.)*\))/.exec(shown)?.[1] ?? '';
    const xmpNumber = String(root['/Metadata'] ?? '').split(' ')[0];
    const xmp = xmpNumber ? (await tool('qpdf', [`--show-object=${xmpNumber}`, '--filtered-stream-data', file], dir)).out : '';
    return { info: Object.fromEntries(Object.entries(info).map(([k, v]) => [k, String(v)])), rawTitle, xmp };
  });
}

async function metadataOf(pdf: Uint8Array): Promise<PdfMetadata> {
  const { output, error } = await runOperation('pdf.metadata', [pdf], {});
  expect(error, error?.message).to.not.exist();
  expect(output!.mediaType).to.equal('application/json');
  return JSON.parse(Buffer.from(output!.body).toString('utf8')) as PdfMetadata;
}

async function setMetadata(pdf: Uint8Array, fields: Record<string, string>): Promise<Uint8Array> {
  const { output, error } = await runOperation('pdf.set-metadata', [pdf], fields);
  expect(error, error?.message).to.not.exist();
  return output!.body;
}

const validAnswer = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(METADATA_SCHEMA);

describe('reading metadata', () => {
  it('reads Info, dates with their time zones, the version, the PDF/A claim and the packet', async () => {
    const meta = await metadataOf(await describedPdf(OLD_PACKET));
    expect(validAnswer(meta), JSON.stringify(validAnswer.errors)).to.be.true();
    expect(meta).to.include({
      title: 'Old title', author: 'Old Author', subject: null, keywords: 'old keywords', creator: 'Old Tool', producer: 'Old Producer',
      created: '2023-01-02T03:04:05+05:30', modified: '2024-06-07T08:09:10', pageCount: 1, version: '1.6', encrypted: false, pdfa: '2B',
    });
    expect(meta.xmp).to.equal(OLD_PACKET);
  });

  it('a file without metadata: nulls, no packet, no PDF/A claim', async () => {
    const meta = await metadataOf(makePdf(textPages(3)));
    expect(meta).to.equal({
      title: null, author: null, subject: null, keywords: null, creator: null, producer: null, created: null, modified: null,
      pageCount: 3, version: '1.5', encrypted: false, pdfa: null, xmp: null,
    });
  });

  it('a file that opens without a password but is encrypted is read (encrypted: true); one that needs a password is refused before payment', async () => {
    const plain = await describedPdf(OLD_PACKET);
    const [ownerOnly, userPassword] = await withFile(plain, 'pdf', async (file, dir) => {
      await tool('qpdf', ['--encrypt', '', 'owner', '256', '--', file, path.join(dir, 'owner.pdf')], dir);
      await tool('qpdf', ['--encrypt', 'user', 'owner', '256', '--', file, path.join(dir, 'user.pdf')], dir);
      return [new Uint8Array(await readFile(path.join(dir, 'owner.pdf'))), new Uint8Array(await readFile(path.join(dir, 'user.pdf')))];
    });
    const meta = await metadataOf(ownerOnly);
    expect(meta).to.include({ title: 'Old title', encrypted: true, pdfa: '2B' });
    expect(meta.xmp).to.contain('Old title');
    const refused = await runOperation('pdf.metadata', [userPassword], {});
    expect(refused.error).to.include({ code: 'ENCRYPTED_PDF', status: 422 });
  });
});

describe('writing metadata', () => {
  it('Info and the existing XMP packet get the same values; non-ASCII as UTF-16BE with a BOM; the PDF/A claim and the rest of the packet stay', async () => {
    const before = Date.now() - 1000;
    const out = await setMetadata(await describedPdf(OLD_PACKET), {
      title: 'Zoë’s report — 日本', author: 'Ada <Lovelace> & co', subject: 'Quarterly', keywords: 'a, b', creator: 'Paydoc test',
    });
    const read = await qpdfReads(out);
    expect(read.info).to.include({
      '/Title': 'u:Zoë’s report — 日本', '/Author': 'u:Ada <Lovelace> & co', '/Subject': 'u:Quarterly', '/Keywords': 'u:a, b',
      '/Creator': 'u:Paydoc test', '/Producer': 'u:Old Producer', '/CreationDate': "u:D:20230102030405+05'30'",
    });
    expect(read.rawTitle.toLowerCase()).to.equal(`<${Buffer.from('\ufeffZoë’s report — 日本', 'utf16le').swap16().toString('hex')}>`);
    const modified = /^u:D:(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/.exec(read.info['/ModDate'])!;
    const modifiedAt = Date.UTC(+modified[1], +modified[2] - 1, +modified[3], +modified[4], +modified[5], +modified[6]);
    expect(modifiedAt).to.be.within(before - 1000, Date.now());
    // The packet, as text: each value once, old values gone, the claim kept, the dates those of Info.
    expect(read.xmp).to.contain('<rdf:li xml:lang="x-default">Zoë’s report — 日本</rdf:li>');
    expect(read.xmp).to.contain('<dc:creator><rdf:Seq><rdf:li>Ada &lt;Lovelace&gt; &amp; co</rdf:li></rdf:Seq></dc:creator>');
    expect(read.xmp).to.contain('<dc:description><rdf:Alt><rdf:li xml:lang="x-default">Quarterly</rdf:li></rdf:Alt></dc:description>');
    expect(read.xmp).to.contain('<pdf:Keywords>a, b</pdf:Keywords>');
    expect(read.xmp).to.contain('<xmp:CreatorTool>Paydoc test</xmp:CreatorTool>');
    const iso = new Date(modifiedAt).toISOString().replace('.000Z', 'Z');
    expect(read.xmp).to.contain(`<xmp:ModifyDate>${iso}</xmp:ModifyDate>`);
    expect(read.xmp).to.contain(`<xmp:MetadataDate>${iso}</xmp:MetadataDate>`);
    for (const gone of ['Old title', 'old keywords', 'Old Tool']) expect(read.xmp).to.not.contain(gone);
    expect(read.xmp).to.contain('pdfaid:part="2"');
    expect(read.xmp).to.contain('<dc:format>application/pdf</dc:format>');
    const meta = await metadataOf(out);
    expect(meta).to.include({ title: 'Zoë’s report — 日本', author: 'Ada <Lovelace> & co', pdfa: '2B', created: '2023-01-02T03:04:05+05:30' });
    expect(meta.modified).to.equal(iso);
    // The text and the page are as they were.
    expect(await withFile(out, 'pdf', async (file, dir) => (await tool('pdftotext', [file, '-'], dir)).out)).to.contain('Described');
  });

  it('an empty string removes the value from Info and the packet; absent fields stay', async () => {
    const out = await setMetadata(await describedPdf(OLD_PACKET), { title: '', keywords: '' });
    const read = await qpdfReads(out);
    expect(read.info['/Title']).to.not.exist();
    expect(read.info['/Keywords']).to.not.exist();
    expect(read.info).to.include({ '/Author': 'u:Old Author', '/Creator': 'u:Old Tool' });
    expect(read.xmp).to.not.contain('dc:title');
    expect(read.xmp).to.not.contain('Keywords');
    expect(read.xmp).to.contain('<xmp:CreatorTool>Old Tool</xmp:CreatorTool>');
    expect(read.xmp).to.contain('<dc:creator><rdf:Seq><rdf:li>Old Author</rdf:li></rdf:Seq></dc:creator>');
  });

  it('a file without Info or a packet gets both', async () => {
    const out = await setMetadata(makePdf(textPages(2)), { title: 'Fresh' });
    const read = await qpdfReads(out);
    expect(read.info['/Title']).to.equal('u:Fresh');
    expect(read.xmp).to.contain('<?xpacket begin=');
    expect(read.xmp).to.contain('<rdf:li xml:lang="x-default">Fresh</rdf:li>');
    expect((await metadataOf(out)).title).to.equal('Fresh');
  });

  it('no field at all is refused before payment', async () => {
    const { error } = await runOperation('pdf.set-metadata', [makePdf(textPages(1))], {});
    expect(error).to.include({ code: 'FIELD_INVALID', status: 422, field: 'title' });
  });

  it('the robustness corpus: metadata answers its schema or a 4xx, set-metadata writes a Title qpdf reads; never a 5xx', { timeout: 600_000 }, async () => {
    const names = (await readdir(corpus)).filter((n) => n.toLowerCase().endsWith('.pdf')).sort();
    // Every eighth file, and one whose repair once lost the edits; the whole corpus runs in the robustness suite (FULL_CORPUS=1).
    const chosen = names.filter((name, i) => i % 8 === 0 || name === 'issue20453.pdf');
    const problems: string[] = [];
    let read = 0;
    let written = 0;
    for (const name of chosen) {
      const bytes = new Uint8Array(await readFile(path.join(corpus, name)));
      const meta = await runOperation('pdf.metadata', [bytes], {}, { timeoutMs: 60_000 });
      if (meta.error) {
        if (meta.error.status >= 500) problems.push(`${name} metadata: ${meta.error.code}`);
        continue;
      }
      const answer: unknown = JSON.parse(Buffer.from(meta.output!.body).toString('utf8'));
      if (!validAnswer(answer)) problems.push(`${name} metadata: ${JSON.stringify(validAnswer.errors).slice(0, 200)}`);
      read += 1;
      const set = await runOperation('pdf.set-metadata', [bytes], { title: 'Corpus ✓' }, { timeoutMs: 60_000 });
      if (set.error) {
        if (set.error.status >= 500) problems.push(`${name} set-metadata: ${set.error.code}`);
        continue;
      }
      const title = (await qpdfReads(set.output!.body).catch(() => undefined))?.info['/Title'];
      if (title !== 'u:Corpus ✓') problems.push(`${name} set-metadata: qpdf reads the title as ${title}`);
      written += 1;
    }
    console.log(`\n  metadata on ${chosen.length} corpus files: ${read} read, ${written} written`);
    expect(problems).to.equal([]);
    expect(read).to.be.at.least(chosen.length / 2);
  });
});

describe('metadata paid over HTTP on the local Base chain, and over MCP', () => {
  let t: TestService;
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('HTTP: set-metadata then metadata, 0.005 USD flat each whatever the page count', async () => {
    const payFetch = await t.payFetch('base');
    const start = await balancesOf(t.evm);
    const set = await payFetch(`${t.url}/v1/pdf/set-metadata`, { method: 'POST', body: form([makePdf(textPages(7))], { title: 'Paid title', author: 'Ada' }) });
    expect(set.status).to.equal(200);
    expect(set.headers.get('content-type')).to.equal('application/pdf');
    const written = new Uint8Array(await set.arrayBuffer());
    expect((await qpdfReads(written)).info).to.include({ '/Title': 'u:Paid title', '/Author': 'u:Ada' });
    const middle = await balancesOf(t.evm);
    expect(start.payer - middle.payer).to.equal(5000n);
    expect(middle.payTo - start.payTo).to.equal(5000n);
    const read = await payFetch(`${t.url}/v1/pdf/metadata`, { method: 'POST', body: form([written]) });
    expect(read.status).to.equal(200);
    expect(read.headers.get('content-type')).to.contain('application/json');
    expect(await read.json()).to.include({ title: 'Paid title', author: 'Ada', pageCount: 7 });
    const end = await balancesOf(t.evm);
    expect(middle.payer - end.payer).to.equal(5000n);
    expect(end.payTo - middle.payTo).to.equal(5000n);
  });

  it('HTTP: a file that needs a password gets a 422 before payment, nothing charged', async () => {
    const locked = await withFile(makePdf(textPages(1)), 'pdf', async (file, dir) => {
      await tool('qpdf', ['--encrypt', 'user', 'owner', '256', '--', file, path.join(dir, 'user.pdf')], dir);
      return new Uint8Array(await readFile(path.join(dir, 'user.pdf')));
    });
    const start = await balancesOf(t.evm);
    const res = await (await t.payFetch('base'))(`${t.url}/v1/pdf/metadata`, { method: 'POST', body: form([locked]) });
    expect(res.status).to.equal(422);
    expect(await errorCode(res)).to.equal('ENCRYPTED_PDF');
    expect((await balancesOf(t.evm)).payer).to.equal(start.payer);
  });

  it('MCP: svc_pdf_set_metadata returns the file, svc_pdf_metadata the JSON as structured content', async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const start = await balancesOf(t.evm);
      const pay = async (name: string, args: Record<string, unknown>) => {
        const unpaid = await client.callTool({ name, arguments: args }) as { structuredContent?: Record<string, unknown> };
        const quote = unpaid.structuredContent as unknown as PaymentRequired;
        expect(quote.accepts[0].amount).to.equal('5000');
        return await client.callTool({ name, arguments: args, _meta: { 'x402/payment': await signOnBase(quote, t.evm.payerKey) } }) as {
          isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ type: string; resource?: { blob?: string } }>;
        };
      };
      const set = await pay('svc_pdf_set_metadata', { file: { data: Buffer.from(makePdf(textPages(2))).toString('base64') }, title: 'Über MCP', keywords: '' });
      expect(set.isError).to.not.equal(true);
      const blob = set.content.find((c) => c.type === 'resource')!.resource!.blob!;
      const written = Buffer.from(blob, 'base64');
      expect((await qpdfReads(written)).info['/Title']).to.equal('u:Über MCP');
      const read = await pay('svc_pdf_metadata', { file: { data: written.toString('base64') } });
      expect(read.isError).to.not.equal(true);
      expect(read.structuredContent).to.include({ title: 'Über MCP', keywords: null, pageCount: 2 });
      expect(start.payer - (await balancesOf(t.evm)).payer).to.equal(10000n);
    } finally {
      await client.close();
    }
  });
});

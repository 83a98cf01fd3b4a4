// /v1/pdf/from-html: a page (one HTML document, or a ZIP with its stylesheet, font and image)
// printed by Chromium, read back with poppler and qpdf; the page's attempts to reach the network
// reach nothing (a trap server on loopback sees no connection, the refusing proxy counts none);
// a page that never finishes loading answers RENDER_TIMEOUT and a page printing past the limit
// answers 413, both uncharged, with no browser process left behind.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import sharp from 'sharp';
import { buildZip } from '../../../tools/zip.js';
import { TEMPLATE_MAX_BYTES, WEB_PAGE_LIMIT, WEB_TIMEOUT_MS } from '../../../operations/pdf/from-html.js';
import { operationById } from '../../../operations/index.js';
import { PAGE_ZIP_LIMITS } from '../../../checks/web-page.js';
import { PAGE_HEAP_MB } from '../../../tools/engines/chromium.js';
import { runOperation } from '../../support/jobs.js';
import { poppler, tool, withFile } from '../../support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';
import { browsersLeftUnder } from '../../support/processes.js';
import { serveSite, TRAPPED } from '../../support/loopback-site.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf';

async function text(pdf: Uint8Array, ...args: string[]): Promise<string> {
  return withFile(pdf, 'pdf', async (file) => (await tool('pdftotext', [...args, file, '-'])).out);
}

/** A ZIP of a page: index.html using its stylesheet (which uses the font) and its image. */
async function pageZip(): Promise<Uint8Array> {
  const image = await sharp({ create: { width: 37, height: 23, channels: 3, background: '#cc3300' } }).png().toBuffer();
  const html = '<!doctype html><html><head><link rel="stylesheet" href="css/site.css"></head>'
    + '<body><h1 class="mono">Zipped page</h1><p class="styled">body text</p><img src="images/dot.png" width="74" height="46"></body></html>';
  const css = '@font-face { font-family: "Paydoc Mono"; src: url("../fonts/mono.ttf"); }\n'
    + '.mono { font-family: "Paydoc Mono"; }\n.styled::before { content: "FromTheStylesheet "; }\n';
  return buildZip([
    { name: 'index.html', bytes: Buffer.from(html) },
    { name: 'css/site.css', bytes: Buffer.from(css) },
    { name: 'fonts/mono.ttf', bytes: await readFile(FONT) },
    { name: 'images/dot.png', bytes: image },
  ], 50 * 1024 * 1024);
}

/** A page that tries every way out to the trap: image, script fetch, stylesheet import, frame, preconnect, prefetch, beacon, web socket. */
function networkPage(port: number): Uint8Array {
  const at = `http://127.0.0.1:${port}`;
  return Buffer.from(`<!doctype html><html><head>
<link rel="preconnect" href="${at}"><link rel="dns-prefetch" href="//trap.example"><link rel="prefetch" href="${at}/prefetch">
<style>@import url("${at}/import.css"); body { background: url("${at}/bg.png"); }</style></head>
<body><p>Offline page</p><img src="${at}/img.png"><iframe src="${at}/frame"></iframe>
<script>
fetch('${at}/fetch').catch(() => {});
navigator.sendBeacon('${at}/beacon', 'x');
try { new WebSocket('ws://127.0.0.1:${port}/ws'); } catch (e) {}
document.body.append('script ran');
</script></body></html>`);
}

describe('from-html: what the page prints', () => {
  it('a ZIP: its stylesheet, font and image are used; A4 portrait by default', async () => {
    const { output, error } = await runOperation('pdf.from-html', [await pageZip()], {});
    expect(error).to.equal(undefined);
    expect(output!.mediaType).to.equal('application/pdf');
    const pdf = output!.body;
    expect(await text(pdf)).to.contain('FromTheStylesheet body text');
    expect(await poppler('pdffonts', pdf)).to.contain('DejaVuSansMono-Bold');
    expect(await poppler('pdfimages', pdf, '-list')).to.match(/\n\s+1\s+\d+\s+image\s+37\s+23\s/);
    expect(await poppler('pdfinfo', pdf)).to.match(/Page size:\s+59[56]\.\d+ x 84[12]\.\d+ pts \(A4\)/);
  });

  it('a single HTML document: letter landscape, a footer with page numbers, scripts off unless asked', async () => {
    const html = Buffer.from('<!doctype html><p>First</p><p style="break-before: page">Second</p><script>document.body.append("ScriptRan")</script>');
    const footer = '<div style="font-size: 10px; width: 100%; text-align: center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>';
    const off = await runOperation('pdf.from-html', [html], { paper: 'letter', landscape: 'true', footer_html: footer });
    expect(off.error).to.equal(undefined);
    const printed = await text(off.output!.body);
    expect(printed).to.contain('Page 1 of 2');
    expect(printed).to.contain('Page 2 of 2');
    expect(printed).to.not.contain('ScriptRan');
    expect(await poppler('pdfinfo', off.output!.body)).to.match(/Page size:\s+792 x 612 pts \(letter\)/);
    const on = await runOperation('pdf.from-html', [html], { javascript: 'true' });
    expect(await text(on.output!.body)).to.contain('ScriptRan');
  });

  it('nothing reaches the network: the trap sees no connection, with scripts on or off', async () => {
    const trap = await serveSite();
    try {
      for (const javascript of ['true', 'false']) {
        const { output, error } = await runOperation('pdf.from-html', [networkPage(trap.port)], { javascript });
        expect(error).to.equal(undefined);
        const printed = await text(output!.body);
        expect(printed).to.contain('Offline page');
        expect(printed).to.not.contain(TRAPPED);
        if (javascript === 'true') expect(printed).to.contain('script ran');
      }
      // A moment for anything the browser might still have sent on its way out.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(trap.connections).to.equal(0);
    } finally {
      await trap.close();
    }
  });

  it('a header and a footer that ask for remote resources reach nothing, and the PDF still prints them', async () => {
    const trap = await serveSite();
    try {
      const at = `http://127.0.0.1:${trap.port}`;
      const header = `<div style="font-size: 10px; background: url('${at}/bg.png')"><img src="${at}/logo.png" width="20" height="10">`
        + `HeaderText <span class="pageNumber"></span><svg width="8" height="8"><use href="${at}/icons.svg#a"/></svg></div>`;
      const footer = `<div style="font-size: 10px"><img src="${at}/seal.png" srcset="${at}/seal2.png 2x">FooterText`
        + `<iframe src="${at}/frame"></iframe><object data="${at}/object.svg"></object><video poster="${at}/poster.png"></video></div>`;
      for (const javascript of ['true', 'false']) {
        const { output, error } = await runOperation('pdf.from-html', [Buffer.from('<!doctype html><p>Body</p>')],
          { header_html: header, footer_html: footer, javascript });
        expect(error).to.equal(undefined);
        const printed = await text(output!.body);
        expect(printed).to.contain('HeaderText 1');
        expect(printed).to.contain('FooterText');
        expect(printed).to.contain('Body');
        expect(printed).to.not.contain(TRAPPED);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(trap.connections).to.equal(0);
    } finally {
      await trap.close();
    }
  });
});

describe('from-html paid over HTTP on the local Base chain, and over MCP', () => {
  let t: TestService;
  let zip: Uint8Array;
  before(async () => {
    t = await startTestService({ config: { jobTimeoutMs: 12_000 } });
    zip = await pageZip();
  });
  after(async () => { await t?.stop(); });

  it('HTTP: charged 0.02 USD, the PDF as the body', async () => {
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const res = await payFetch(`${t.url}/v1/pdf/from-html`, { method: 'POST', body: form([{ bytes: zip, name: 'page.zip' }], { margin_mm: 0 }) });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    expect(await text(new Uint8Array(await res.arrayBuffer()))).to.contain('Zipped page');
    const after = await balancesOf(t.evm);
    expect(before.payer - after.payer).to.equal(20000n);
    expect(after.payTo - before.payTo).to.equal(20000n);
  });

  it('a header or footer that would load a stylesheet or a font: 422 naming the field, before payment', async () => {
    const at = 'http://127.0.0.1:9';
    const cases: Array<[string, string, string]> = [
      ['header_html', `<link rel="stylesheet" href="${at}/h.css"><div>H</div>`, 'a <link> element'],
      ['footer_html', `<style>@import url("${at}/f.css");</style><div>F</div>`, 'an @import rule'],
      ['header_html', `<style>@font-face { font-family: X; src: url(${at}/x.ttf) }</style><div style="font-family: X">H</div>`, 'a font by URL'],
    ];
    const before = await balancesOf(t.evm);
    for (const [field, template, what] of cases) {
      const res = await fetch(`${t.url}/v1/pdf/from-html`, { method: 'POST', body: form([{ bytes: zip, name: 'page.zip' }], { [field]: template }) });
      expect(res.status, template).to.equal(422);
      const { error } = (await res.json()) as { error: { code: string; field: string; message: string } };
      expect([error.code, error.field]).to.equal(['FIELD_INVALID', field]);
      expect(error.message).to.include(what);
    }
    // A font given as a data: URL is taken: it loads nothing.
    const inline = `<style>@font-face { font-family: X; src: url(data:font/ttf;base64,AAAA) }</style><div>H</div>`;
    expect((await fetch(`${t.url}/v1/pdf/from-html`, { method: 'POST', body: form([{ bytes: zip, name: 'page.zip' }], { header_html: inline }) })).status).to.equal(402);
    expect(await balancesOf(t.evm)).to.equal(before);
  });

  it('MCP: the same, with booleans as JSON', async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const args = { file: { data: Buffer.from(zip).toString('base64') }, landscape: true, background: false };
      const unpaid = await client.callTool({ name: 'svc_pdf_from_html', arguments: args }) as { structuredContent?: Record<string, unknown> };
      const quote = unpaid.structuredContent as unknown as PaymentRequired;
      expect(quote.accepts[0].amount).to.equal('20000');
      const before = await balancesOf(t.evm);
      const paid = await client.callTool({ name: 'svc_pdf_from_html', arguments: args, _meta: { 'x402/payment': await signOnBase(quote, t.evm.payerKey) } }) as {
        isError?: boolean; content: Array<{ type: string; resource?: { blob?: string } }>;
      };
      expect(paid.isError).to.not.equal(true);
      const pdf = Buffer.from(paid.content.find((c) => c.type === 'resource')!.resource!.blob!, 'base64');
      expect(await text(pdf)).to.contain('Zipped page');
      expect(await poppler('pdfinfo', pdf)).to.match(/Page size:\s+84[12]\.\d+ x 59[56]\.\d+ pts \(A4\)/);
      const after = await balancesOf(t.evm);
      expect(before.payer - after.payer).to.equal(20000n);
    } finally {
      await client.close();
    }
  });

  it('a script that never ends: RENDER_TIMEOUT naming the deadline, nothing charged, no browser left', { timeout: 40_000 }, async () => {
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const page = Buffer.from('<!doctype html><p>spinning</p><script>for (;;) {}</script>');
    const started = Date.now();
    const res = await payFetch(`${t.url}/v1/pdf/from-html`, { method: 'POST', body: form([{ bytes: page, name: 'spin.html' }], { javascript: 'true' }) });
    expect(res.status).to.equal(422);
    const body = await res.json() as { error: { code: string; message: string } };
    expect(body.error.code).to.equal('RENDER_TIMEOUT');
    expect(body.error.message).to.match(/^the page did not finish loading and printing within the deadline of \d+ s; nothing was charged/);
    expect(Date.now() - started).to.be.below(25_000);
    const after = await balancesOf(t.evm);
    expect(after.payer).to.equal(before.payer);
    expect(await browsersLeftUnder(t.tmpDir)).to.equal(0);
    expect(await t.jobDirsLeft()).to.equal([]);
  });

  it(`a page printing on more than ${WEB_PAGE_LIMIT} pages: 413 after rendering, nothing charged`, { timeout: 40_000 }, async () => {
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const pages = Array.from({ length: WEB_PAGE_LIMIT + 1 }, (_, i) => `<p style="break-after: page">page ${i + 1}</p>`).join('');
    const res = await payFetch(`${t.url}/v1/pdf/from-html`, { method: 'POST', body: form([{ bytes: Buffer.from(`<!doctype html>${pages}`), name: 'long.html' }]) });
    expect(res.status).to.equal(413);
    const body = await res.json() as { error: { code: string; message: string } };
    expect(body.error.code).to.equal('LIMIT_EXCEEDED');
    expect(body.error.message).to.match(new RegExp(`^the page prints on ${WEB_PAGE_LIMIT + 1} pages; at most ${WEB_PAGE_LIMIT} are returned per call, and nothing was charged`));
    const after = await balancesOf(t.evm);
    expect(after.payer).to.equal(before.payer);
  });
});

describe('docs/operations/web-pages.md', () => {
  it('states the limits and the price as the code declares them', async () => {
    const doc = await readFile(new URL('../../../../docs/operations/web-pages.md', import.meta.url), 'utf8');
    const op = operationById('pdf.from-html');
    expect(doc).to.contain(`**Deadline: ${WEB_TIMEOUT_MS / 1000} s** (\`WEB_TIMEOUT_MS\``);
    expect(doc).to.contain(`**Pages: at most ${WEB_PAGE_LIMIT}** (\`WEB_PAGE_LIMIT\`)`);
    expect(doc).to.contain(`capped at ${PAGE_HEAP_MB} MB (\`PAGE_HEAP_MB\`)`);
    expect(doc).to.contain(`More than ${PAGE_ZIP_LIMITS.entries} entries; entries unpacking to more than ${PAGE_ZIP_LIMITS.uncompressedBytes / 1024 / 1024} MB`);
    expect(doc).to.contain(`inflating more than ${PAGE_ZIP_LIMITS.ratio} times`);
    expect(doc).to.contain(`at most ${TEMPLATE_MAX_BYTES / 1024} KB each`);
    expect(doc).to.contain(`Flat **${op.price.rate / 1e6} USD (${op.price.rate} atomic USDC)** per call`);
  });
});

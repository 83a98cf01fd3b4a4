// /v1/pdf/from-url through the running service: a loopback site named in URL_FETCH_ALLOW whose
// page pulls a script, an image, a font and a frame, each fetched by the service's fetcher (the
// site's log) and used (poppler reads the PDF); a trap on a refused address sees no connection;
// paid over HTTP and MCP on the local Base chain, balances read; format=png; the deadline answered
// RENDER_TIMEOUT uncharged; bad input refused before payment, naming the field.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import sharp from 'sharp';
import { PAGE_FETCH_BUDGET, PNG_MAX_HEIGHT, VIEWPORT, WAIT_MS_MAX } from '../../../operations/pdf/from-url.js';
import { MB } from '../../../operations/define.js';
import { operationById } from '../../../operations/index.js';
import { MAX_URL_LENGTH } from '../../../server/outbound/fetcher.js';
import { poppler } from '../../support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';
import { serveSite, type LoopbackSite } from '../../support/loopback-site.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf';

describe('from-url paid over HTTP and MCP on the local Base chain', () => {
  let t: TestService;
  let site: LoopbackSite;
  let trap: LoopbackSite;

  before(async () => {
    trap = await serveSite();
    const image = await sharp({ create: { width: 37, height: 23, channels: 3, background: '#cc3300' } }).png().toBuffer();
    site = await serveSite({
      '/': ['text/html; charset=utf-8', '<!doctype html><html><head><style>@font-face { font-family: "Site Mono"; src: url("/font.ttf"); }'
      + ' .mono { font-family: "Site Mono"; }</style><script src="/app.js"></script></head><body>'
      + '<h1 class="mono">Fetched page</h1><p id="out">script did not run</p><img src="/pic.png" width="74" height="46">'
      + '<iframe src="/frame.html" width="400" height="100"></iframe>'
      + `<img src="https://127.0.0.1:${trap.port}/refused.png"><img src="http://localhost:${trap.port}/plain.png"></body></html>`],
      '/app.js': ['text/javascript', 'addEventListener("DOMContentLoaded", () => {'
      + ' document.getElementById("out").textContent = "ScriptRan"; });'],
      '/pic.png': ['image/png', image],
      '/font.ttf': ['font/ttf', await readFile(FONT)],
      '/frame.html': ['text/html', '<p>InsideTheFrame</p>'],
      '/tall': ['text/html', '<body style="margin:0"><div style="height:2000px;background:#0a0">tall</div></body>'],
    }, ['/hang']);
    t = await startTestService({ config: { jobTimeoutMs: 12_000, urlFetchTimeoutMs: 60_000, urlFetchAllow: `127.0.0.1:${site.port}` } });
  });

  after(async () => {
    await t?.stop();
    await site?.close();
    await trap?.close();
  });

  it('HTTP: charged 0.02 USD; the page, script, image, font and frame all fetched and used; the trap sees nothing', async () => {
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    site.requested.length = 0;
    const body = form([], { url: `http://127.0.0.1:${site.port}/`, javascript: 'true' });
    const res = await payFetch(`${t.url}/v1/pdf/from-url`, { method: 'POST', body });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    const pdf = new Uint8Array(await res.arrayBuffer());
    const text = await poppler('pdftotext', pdf);
    expect(text).to.contain('Fetched page').and.to.contain('ScriptRan').and.to.contain('InsideTheFrame');
    expect(await poppler('pdffonts', pdf)).to.contain('DejaVuSansMono-Bold');
    expect((await poppler('pdfimages', pdf, '-list')).split('\n').filter((l) => /\bimage\s+37\s+23\b/.test(l)).length).to.equal(1);
    // The unpaid quote fetches nothing: only the paid call's browser asked, once each.
    expect(site.requested.sort()).to.equal(['/', '/app.js', '/font.ttf', '/frame.html', '/pic.png']);
    expect(trap.connections).to.equal(0);
    const after = await balancesOf(t.evm);
    expect(before.payer - after.payer).to.equal(20000n);
    expect(after.payTo - before.payTo).to.equal(20000n);
  });

  it('MCP: format=png, a PNG of the viewport\'s width as tall as the page; the tool takes no file', async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const listed = (await client.listTools()).tools.find((x) => x.name === 'svc_pdf_from_url')!;
      expect(Object.keys(listed.inputSchema.properties ?? {})).to.not.include('file');
      expect(listed.inputSchema.required).to.equal(['url']);
      const args = { url: `http://127.0.0.1:${site.port}/tall`, format: 'png', wait_ms: 10 };
      const unpaid = await client.callTool({ name: 'svc_pdf_from_url', arguments: args });
      const quote = unpaid.structuredContent as unknown as PaymentRequired;
      expect(quote.accepts[0].amount).to.equal('20000');
      const before = await balancesOf(t.evm);
      const payment = await signOnBase(quote, t.evm.payerKey);
      const paid = await client.callTool({ name: 'svc_pdf_from_url', arguments: args, _meta: { 'x402/payment': payment } }) as {
        isError?: boolean; content: Array<{ type: string; data?: string; mimeType?: string }>;
      };
      expect(paid.isError).to.not.equal(true);
      const image = paid.content.find((c) => c.type === 'image')!;
      expect(image.mimeType).to.equal('image/png');
      const meta = await sharp(Buffer.from(image.data!, 'base64')).metadata();
      expect([meta.format, meta.width, meta.height]).to.equal(['png', VIEWPORT.width, 2000]);
      const after = await balancesOf(t.evm);
      expect(before.payer - after.payer).to.equal(20000n);
    } finally {
      await client.close();
    }
  });

  it('a page that never finishes loading: RENDER_TIMEOUT naming the deadline, nothing charged', { timeout: 40_000 }, async () => {
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const hang = form([], { url: `http://127.0.0.1:${site.port}/hang` });
    const res = await payFetch(`${t.url}/v1/pdf/from-url`, { method: 'POST', body: hang });
    expect(res.status).to.equal(422);
    const body = await res.json() as { error: { code: string; message: string } };
    expect(body.error.code).to.equal('RENDER_TIMEOUT');
    expect(body.error.message).to.match(/^the page did not finish loading and printing within the deadline of \d+ s; nothing was charged/);
    const after = await balancesOf(t.evm);
    expect(after.payer).to.equal(before.payer);
    expect(await t.jobDirsLeft()).to.equal([]);
  });

  it('bad input is refused before payment, naming the field; the trap sees nothing', async () => {
    const rows: [Record<string, string>, number, string, string, string | RegExp][] = [
      [{}, 422, 'FIELD_INVALID', 'url', /url/],
      [{ url: 'http://example.com/' }, 422, 'URL_REFUSED', 'url', 'url must be an https URL, not http'],
      [{ url: 'https://user:pw@example.com/' }, 422, 'URL_REFUSED', 'url',
        'url carries credentials (user:password@); URLs with credentials are refused'],
      [{ url: `https://127.0.0.1:${trap.port}/` }, 422, 'URL_REFUSED', 'url',
        'url: 127.0.0.1 is a loopback address; only public addresses are reached'],
      [{ url: 'ftp://example.com/' }, 422, 'URL_REFUSED', 'url', 'url must be an https URL, not ftp'],
    ];
    for (const [fields, status, code, field, message] of rows) {
      const res = await fetch(`${t.url}/v1/pdf/from-url`, { method: 'POST', body: form([], fields) });
      const body = await res.json() as { error: { code: string; message: string; field?: string } };
      expect([res.status, body.error.code, body.error.field], JSON.stringify(fields)).to.equal([status, code, field]);
      if (typeof message === 'string') expect(body.error.message).to.equal(message);
      else expect(body.error.message).to.match(message);
    }
    const withFile = form([Buffer.from('<p>x</p>')], { url: 'https://example.com/' });
    const refused = await fetch(`${t.url}/v1/pdf/from-url`, { method: 'POST', body: withFile });
    expect(refused.status).to.equal(422);
    const message = '/v1/pdf/from-url takes no file: it fetches what "url" names';
    expect(await refused.json()).to.equal({ error: { code: 'FIELD_INVALID', status: 422, message, field: 'file' } });
    expect(trap.connections).to.equal(0);
  });
});

describe('docs/operations/web-pages.md on from-url', () => {
  it('states the budget, the PNG bounds and the price as the code declares them', async () => {
    const doc = await readFile(new URL('../../../../docs/operations/web-pages.md', import.meta.url), 'utf8');
    const op = operationById('pdf.from-url');
    const { requests, totalBytes } = PAGE_FETCH_BUDGET;
    expect(doc).to.contain(`at most **${requests} requests** and receive at most **${totalBytes / MB} MB**`);
    const { width, height } = VIEWPORT;
    expect(doc).to.contain(`${width} pixels wide (the viewport, ${width} × ${height}), at most ${PNG_MAX_HEIGHT} pixels tall`);
    expect(doc).to.contain(`(0 to ${WAIT_MS_MAX})`);
    expect(doc).to.contain(`at most ${MAX_URL_LENGTH} characters`);
    expect(doc).to.contain(`Price: flat **${op.price.rate / 1e6} USD (${op.price.rate} atomic USDC)** per call, as from-html`);
    expect(op.price.rate).to.equal(operationById('pdf.from-html').price.rate);
  });
});

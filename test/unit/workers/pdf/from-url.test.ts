// The from-url work function with the real browser and the real fetch channel: a loopback https
// site named in the allow-list whose page pulls a script, an image, a font and a frame, every one
// fetched by the front end's fetcher (the site's request log) and used (poppler reads the PDF); a
// trap on a refused address sees no connection; format=png; a page that never loads ends at the
// deadline with RENDER_TIMEOUT, no browser left behind.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import sharp from 'sharp';
import { ServiceError } from '../../../../core/errors.js';
import type { Job } from '../../../../core/job.js';
import { outboundRules, type OutboundRules } from '../../../../server/outbound/fetcher.js';
import { servePageFetches, type PageFetchStats } from '../../../../server/outbound/page-fetches.js';
import { PAGE_FETCH_BUDGET, VIEWPORT, type FromUrlRequest } from '../../../../operations/pdf/from-url.js';
import { fromUrl } from '../../../../workers/pdf/from-url.js';
import { killChromiumUsing } from '../../../../tools/engines/chromium.js';
import { poppler } from '../../../support/independent-tools.js';
import { jobRoot, TEST_SETTINGS } from '../../../support/jobs.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf';

describe('pdf.from-url: the worker with its fetch channel', () => {
  let site: https.Server;
  let sitePort: number;
  let cert: string;
  const requested: string[] = [];
  let trap: http.Server;
  let trapPort: number;
  let trapConnections = 0;
  let image: Buffer;

  before(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'paydoc-tls-'));
    let key: Buffer;
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
        '-subj', '/CN=site.test', '-addext', 'subjectAltName=DNS:site.test', '-keyout', path.join(dir, 'key.pem'),
        '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore', timeout: 10_000 });
      cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
      key = readFileSync(path.join(dir, 'key.pem'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    image = await sharp({ create: { width: 37, height: 23, channels: 3, background: '#cc3300' } }).png().toBuffer();
    const font = await readFile(FONT);
    trap = http.createServer((_req, res) => res.end('trapped'));
    trap.on('connection', () => { trapConnections += 1; });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    trapPort = (trap.address() as AddressInfo).port;
    const pages: Record<string, [string, string | Buffer]> = {
      '/': ['text/html; charset=utf-8', '<!doctype html><html><head><style>@font-face { font-family: "Site Mono"; src: url("/font.ttf"); }'
      + ' .mono { font-family: "Site Mono"; }</style><script src="/app.js"></script></head><body>'
      + '<h1 class="mono">Fetched page</h1><p id="out">script did not run</p><img src="/pic.png" width="74" height="46">'
      + '<iframe src="/frame.html" width="400" height="100"></iframe>'
      + `<img src="https://127.0.0.1:${trapPort}/refused.png"><img src="http://127.0.0.1:${trapPort}/plain.png"></body></html>`],
      '/app.js': ['text/javascript', 'addEventListener("DOMContentLoaded", () => {'
      + ' document.getElementById("out").textContent = "ScriptRan"; });'],
      '/pic.png': ['image/png', image],
      '/font.ttf': ['font/ttf', font],
      '/frame.html': ['text/html', '<p>InsideTheFrame</p>'],
      '/tall': ['text/html', '<body style="margin:0"><div style="height:3000px;background:#0a0">tall</div></body>'],
    };
    site = https.createServer({ key, cert }, (req, res) => {
      requested.push(req.url!);
      if (req.url === '/hang') return; // never answers: the page never finishes loading
      const page = pages[req.url!];
      if (!page) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': page[0] }).end(page[1]);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    sitePort = (site.address() as AddressInfo).port;
  });

  after(async () => {
    for (const server of [site, trap]) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  function rules(timeoutMs = 10_000): OutboundRules {
    const base = outboundRules({ urlInputs: 'on', urlFetchAllow: `site.test:${sitePort}`, urlFetchTimeoutMs: timeoutMs });
    return { ...base, resolve: async () => ['127.0.0.1'], ca: cert };
  }

  /** Runs the work function as the pool would, the front end answering its channel; the job directory is removed after. */
  async function run(params: Partial<FromUrlRequest>, options: { timeoutMs?: number; rules?: OutboundRules } = {}) {
    const jobDir = await mkdtemp(path.join(jobRoot(), 'paydoc-fromurl-'));
    const { port1, port2 } = new MessageChannel();
    const end = new AbortController();
    const stats = servePageFetches(port1, options.rules ?? rules(), { ...PAGE_FETCH_BUDGET, field: 'url' }, end.signal);
    const job: Job<FromUrlRequest> = {
      operation: 'pdf.from-url', files: [], jobDir, deadline: Date.now() + (options.timeoutMs ?? 60_000),
      settings: TEST_SETTINGS, fetchPort: port2,
      params: {
        url: `https://site.test:${sitePort}/`, format: 'pdf', waitMs: 0,
        paper: 'a4', landscape: false, marginMm: 10, javascript: true, background: true, ...params,
      },
    };
    try {
      const output = await fromUrl(job).catch((err: unknown) => err);
      return { output, stats: stats() as PageFetchStats, left: await killChromiumUsing(path.join(jobDir, 'chromium')) };
    } finally {
      end.abort();
      await rm(jobDir, { recursive: true, force: true });
    }
  }

  it('the page, its script, image, font and frame all come through the fetcher; the refused addresses see no connection', async () => {
    requested.length = 0;
    const { output, stats, left } = await run({});
    if (output instanceof Error) throw output;
    const { body, mediaType } = output as { body: Uint8Array; mediaType: string };
    expect(mediaType).to.equal('application/pdf');
    expect(requested.sort()).to.equal(['/', '/app.js', '/font.ttf', '/frame.html', '/pic.png']);
    const text = await poppler('pdftotext', body);
    expect(text).to.contain('Fetched page').and.to.contain('ScriptRan').and.to.contain('InsideTheFrame');
    expect(await poppler('pdffonts', body)).to.contain('DejaVuSansMono-Bold');
    const images = (await poppler('pdfimages', body, '-list')).split('\n').filter((l) => /^\s*\d+\s+\d+\s+image\s+37\s+23\b/.test(l));
    expect(images.length).to.equal(1);
    expect(trapConnections).to.equal(0);
    expect(stats).to.equal({ fetched: 5, refused: 2, bytes: stats.bytes });
    expect(left).to.equal(0);
  });

  it('format=png: a full-page PNG of the viewport\'s width, as tall as the page', async () => {
    const { output } = await run({ url: `https://site.test:${sitePort}/tall`, format: 'png', waitMs: 50 });
    if (output instanceof Error) throw output;
    const { body, mediaType } = output as { body: Uint8Array; mediaType: string };
    expect(mediaType).to.equal('image/png');
    const meta = await sharp(body).metadata();
    expect([meta.format, meta.width, meta.height]).to.equal(['png', VIEWPORT.width, 3000]);
  });

  it('a refused document answers the fetcher\'s reason naming url; the trap sees nothing', async () => {
    const { output } = await run({ url: `https://127.0.0.1:${trapPort}/` });
    expect(output).to.be.instanceOf(ServiceError);
    const err = output as ServiceError;
    const why = 'url: 127.0.0.1 is a loopback address; only public addresses are reached';
    expect([err.code, err.message, err.extra.field]).to.equal(['URL_REFUSED', why, 'url']);
    expect(trapConnections).to.equal(0);
  });

  it('a page that never finishes loading ends at the deadline with RENDER_TIMEOUT, its browser killed', async () => {
    const { output, left } = await run({ url: `https://site.test:${sitePort}/hang` }, { timeoutMs: 6000, rules: rules(60_000) });
    expect(output).to.be.instanceOf(ServiceError);
    expect((output as ServiceError).code).to.equal('RENDER_TIMEOUT');
    expect(left).to.equal(0);
  });
});

// Hostile web pages through /v1/pdf/from-html (uploaded) and /v1/pdf/from-url (served by a loopback
// site named in URL_FETCH_ALLOW), paid over HTTP on the local Base chain with scripts on: pages that
// loop, allocate, open windows, print huge or print themselves, keep reloading, and ask for file://
// and http:// resources. The pdf.js corpus holds no web pages, so this set stands in for it here.
// Each call ends in a result or the precise 4xx named below, never a 5xx or a hang; the payer pays
// exactly 0.02 USD per result; no browser, job directory or connection to the trap is left.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFileSync } from 'node:fs';
import { poppler } from '../../support/independent-tools.js';
import { startTestService, form, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';
import { browsersLeftUnder } from '../../support/processes.js';
import { serveSite, TRAPPED, type LoopbackSite } from '../../support/loopback-site.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** The job's deadline here: the pages that never finish end there. */
const JOB_TIMEOUT_MS = 12_000;
const PRICE = 20000n;

/** What a page must end in: a result whose printed text holds `prints` (and not `never`), or one of the named 4xx codes. */
interface Hostile { html: (trapPort: number) => string; prints?: string; never?: string[]; refusals?: string[] }

const passwd = readFileSync('/etc/passwd', 'utf8').split('\n')[0]!.split(':')[0]!;
const hostname = readFileSync('/etc/hostname', 'utf8').trim();

const PAGES: Record<string, Hostile> = {
  'a script that never ends': { html: () => '<p>spinning</p><script>for (;;) {}</script>', refusals: ['RENDER_TIMEOUT'] },
  'a script that allocates without end': {
    html: () => '<p>allocating</p><script>const kept = []; for (;;) kept.push(new Array(1e6).fill(Math.random()));</script>',
    refusals: ['LIMIT_EXCEEDED'],
  },
  'twenty windows opened': {
    html: () => '<p>Opener page</p><script>for (let i = 0; i < 20; i++) window.open("about:blank#" + i); window.open("file:///etc/passwd");</script>',
    prints: 'Opener page',
  },
  // About 9,000 pages: printing them does not end within the deadline, or ends past the page limit.
  'a page ten million pixels tall': { html: () => '<div style="height:10000000px">tall</div>', refusals: ['RENDER_TIMEOUT', 'LIMIT_EXCEEDED'] },
  'a 5 m square paper size': { html: () => '<style>@page { size: 5000mm 5000mm }</style><p>Giant paper</p>', prints: 'Giant paper' },
  'file:// and http:// resources': {
    html: (trap) => '<p>Resource page</p><img src="file:///etc/hostname"><iframe src="file:///etc/passwd"></iframe>'
      + '<link rel="stylesheet" href="file:///etc/passwd">'
      + `<img src="http://127.0.0.1:${trap}/img.png"><script src="http://127.0.0.1:${trap}/app.js"></script>`
      + '<pre id="out"></pre><script>fetch("file:///etc/passwd").then((r) => r.text()).then((t) => { out.textContent = t; }, () => {});'
      + `fetch("http://127.0.0.1:${trap}/data").then((r) => r.text()).then((t) => { out.textContent += t; }, () => {});</script>`,
    prints: 'Resource page', never: [`${passwd}:x:`, hostname, TRAPPED],
  },
  'a navigation to file://': { html: () => '<p>Navigating page</p><script>location.href = "file:///etc/passwd";</script>', prints: 'Navigating page', never: [`${passwd}:x:`] },
  'alert, confirm, prompt and print()': {
    html: () => '<p>Dialog page</p><script>alert("a"); confirm("b"); prompt("c"); print(); document.body.append("after the dialogs");</script>',
    prints: 'after the dialogs',
  },
  'a refresh to itself': { html: () => '<meta http-equiv="refresh" content="0"><p>Refreshing page</p>', prints: 'Refreshing page' },
  'a reload after every load': {
    html: () => '<p>Reloading page</p><script>addEventListener("load", () => setTimeout(() => location.reload(), 0));</script>',
    prints: 'Reloading page', refusals: ['RENDER_TIMEOUT'],
  },
};

const pathOf = (name: string) => `/${name.replace(/[^a-z0-9]+/gi, '-')}`;

describe('hostile web pages through from-html and from-url, paid on the local Base chain', () => {
  let t: TestService;
  let trap: LoopbackSite;
  let site: LoopbackSite;

  before(async () => {
    trap = await serveSite();
    site = await serveSite(Object.fromEntries(Object.entries(PAGES).map(([name, page]) => [pathOf(name), `<!doctype html>${page.html(trap.port)}`])));
    t = await startTestService({ config: { jobTimeoutMs: JOB_TIMEOUT_MS, urlFetchAllow: `127.0.0.1:${site.port}` } });
  });

  after(async () => {
    await t?.stop();
    await site?.close();
    await trap?.close();
  });

  for (const route of ['from-html', 'from-url'] as const) {
    it(`${route}: each page a result or its precise 4xx, within the deadline; charged for results only`, { timeout: 300_000 }, async () => {
      const payFetch = await t.payFetch('base');
      const before = await balancesOf(t.evm);
      const problems: string[] = [];
      let results = 0;
      for (const [name, page] of Object.entries(PAGES)) {
        const body = route === 'from-html'
          ? form([{ bytes: Buffer.from(`<!doctype html>${page.html(trap.port)}`), name: 'page.html' }], { javascript: 'true' })
          : form([], { url: `http://127.0.0.1:${site.port}${pathOf(name)}`, javascript: 'true' });
        const started = Date.now();
        const res = await payFetch(`${t.url}/v1/pdf/${route}`, { method: 'POST', body, signal: AbortSignal.timeout(JOB_TIMEOUT_MS + 30_000) });
        const bytes = new Uint8Array(await res.arrayBuffer());
        const seconds = Math.round((Date.now() - started) / 1000);
        if (res.status === 200) {
          results += 1;
          const printed = await poppler('pdftotext', bytes);
          if (!page.prints || !printed.includes(page.prints)) problems.push(`${name}: a result without "${page.prints ?? '(none expected)'}"`);
          for (const secret of page.never ?? []) if (printed.includes(secret)) problems.push(`${name}: the result shows "${secret}"`);
        } else {
          const { error } = JSON.parse(Buffer.from(bytes).toString('utf8')) as { error: { code: string; status: number } };
          if (!page.refusals?.includes(error.code)) problems.push(`${name}: ${res.status} ${error.code} (${seconds} s)`);
          if (error.status >= 500) problems.push(`${name}: a ${error.status}`);
        }
      }
      expect(problems).to.equal([]);
      const after = await balancesOf(t.evm);
      expect(before.payer - after.payer).to.equal(PRICE * BigInt(results));
      expect(after.payTo - before.payTo).to.equal(PRICE * BigInt(results));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(trap.connections).to.equal(0);
      expect(await browsersLeftUnder(t.tmpDir)).to.equal(0);
      expect(await t.jobDirsLeft()).to.equal([]);
    });
  }
});

// /v1/pdf/from-html: the page's files (checks/web-page.ts) served to Chromium at a fixed origin
// through request interception, every other request refused, then printed by the browser
// (tools/engines/chromium.ts). One browser per job; it is killed at the job's deadline.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { fail } from '../../core/errors.js';
import { timeLeft, type Job, type JobOutput, type WorkFunction } from '../../core/job.js';
import { PAGE_INDEX, readPageFiles } from '../../checks/web-page.js';
import { killChromiumUsing, launchChromium, startRefusingProxy } from '../../tools/engines/chromium.js';
import { pageCountForJob } from '../../tools/engines/qpdf.js';
import { WEB_PAGE_LIMIT, type FromHtmlRequest, type Paper, type PrintRequest } from '../../operations/pdf/from-html.js';

/** Where the page's files are served: a name no resolver answers (.invalid), answered only by the interception. */
export const PAGE_ORIGIN = 'https://page.paydoc.invalid';

const PLAYWRIGHT_FORMAT: Record<Paper, string> = { a4: 'A4', letter: 'Letter', legal: 'Legal', a3: 'A3', a5: 'A5' };

const MEDIA_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8', htm: 'text/html; charset=utf-8', xhtml: 'application/xhtml+xml', css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8', mjs: 'text/javascript; charset=utf-8', json: 'application/json', txt: 'text/plain; charset=utf-8',
  svg: 'image/svg+xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', avif: 'image/avif',
  ico: 'image/x-icon', bmp: 'image/bmp', woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', otf: 'font/otf', xml: 'application/xml',
};

function mediaTypeOf(name: string): string {
  return MEDIA_TYPES[name.slice(name.lastIndexOf('.') + 1).toLowerCase()] ?? 'application/octet-stream';
}

/** The ZIP entry a URL of the page's origin names ('/' is index.html), or undefined. */
function entryFor(url: URL, files: ReadonlyMap<string, Buffer>): string | undefined {
  let name: string;
  try {
    name = decodeURIComponent(url.pathname).replace(/^\//, '');
  } catch {
    return undefined;
  }
  if (name === '' || name.endsWith('/')) name += PAGE_INDEX;
  return files.has(name) ? name : undefined;
}

/** Answers every request of the page from its files (404 for a file not there); any other address is refused before it is sent. */
async function serveFrom(context: BrowserContext, files: ReadonlyMap<string, Buffer>): Promise<void> {
  // A route settled after its page closed (the deadline, the end of the job) throws; nothing waits for it then.
  await context.route('**/*', async (route: Route) => {
    let url: URL | undefined;
    try { url = new URL(route.request().url()); } catch { url = undefined; }
    if (url?.origin !== PAGE_ORIGIN) {
      await route.abort('blockedbyclient').catch(() => undefined);
      return;
    }
    const name = entryFor(url, files);
    await route.fulfill(name === undefined
      ? { status: 404, contentType: 'text/plain', body: '' }
      : { status: 200, contentType: mediaTypeOf(name), body: files.get(name)! }).catch(() => undefined);
  });
}

/**
 * The document printed is the one loaded: once the page has loaded, a navigation of its main frame
 * (a reload, a refresh, a script setting location) is refused, so printing never meets the blank
 * document between two loads. Frames navigate as they will; requests go on to the job's routes.
 */
export async function keepLoadedDocument(page: Page): Promise<void> {
  let loaded = false;
  page.once('load', () => { loaded = true; });
  await page.route('**/*', async (route: Route) => {
    const request = route.request();
    const leaves = loaded && request.isNavigationRequest() && request.frame() === page.mainFrame();
    await (leaves ? route.abort('blockedbyclient') : route.fallback()).catch(() => undefined);
  });
}

/**
 * What Chromium answers when the page navigates while it is printed (a reload or refresh loop) or
 * prints itself: printing is tried again until it succeeds or the deadline stops the browser.
 */
const PRINT_INTERRUPTED = /Printing failed|already being printed/;
const PRINT_RETRY_MS = 200;

/** A page's own print() would hold the printer that the service prints with: it does nothing instead. */
const NO_SELF_PRINT = 'window.print = () => undefined;';

/** The PDF as Chromium prints the page. */
export async function printPage(page: Page, print: PrintRequest, timeoutMs: number): Promise<Buffer> {
  for (;;) {
    try {
      return await printOnce(page, print, timeoutMs);
    } catch (err) {
      if (!PRINT_INTERRUPTED.test((err as Error)?.message ?? '')) throw err;
      await new Promise((resolve) => setTimeout(resolve, PRINT_RETRY_MS));
    }
  }
}

async function printOnce(page: Page, print: PrintRequest, timeoutMs: number): Promise<Buffer> {
  const margin = `${print.marginMm}mm`;
  const withTemplates = print.headerHtml !== undefined || print.footerHtml !== undefined;
  page.setDefaultTimeout(timeoutMs);
  return page.pdf({
    format: PLAYWRIGHT_FORMAT[print.paper],
    landscape: print.landscape,
    margin: { top: margin, right: margin, bottom: margin, left: margin },
    printBackground: print.background,
    displayHeaderFooter: withTemplates,
    // An empty template prints nothing; Chromium's default would print the date and the title.
    ...(withTemplates ? { headerTemplate: print.headerHtml ?? '<span></span>', footerTemplate: print.footerHtml ?? '<span></span>' } : {}),
  });
}

/**
 * Runs `work` with a browser whose traffic can only reach the refusing proxy, and kills the browser's
 * process group when the job's deadline passes (RENDER_TIMEOUT) or the work ends.
 */
export async function withBrowser<T>(
  job: Job, javascript: boolean, work: (context: BrowserContext, page: Page, msLeft: () => number) => Promise<T>,
): Promise<T> {
  const profileDir = path.join(job.jobDir, 'chromium');
  await mkdir(profileDir, { recursive: true, mode: 0o700 });
  const proxy = await startRefusingProxy();
  const budget = timeLeft(job, 1000);
  const started = Date.now();
  let expired = false;
  let crashed = false;
  const timer = setTimeout(() => { expired = true; void killChromiumUsing(profileDir); }, budget);
  try {
    const context = await launchChromium({ profileDir, proxyPort: proxy.port, javascript, timeoutMs: budget });
    await context.addInitScript(NO_SELF_PRINT);
    const page = context.pages()[0] ?? await context.newPage();
    page.on('crash', () => { crashed = true; });
    // Only the page itself is printed: windows it opens are closed as they open.
    context.on('page', (opened) => { if (opened !== page) void opened.close().catch(() => undefined); });
    return await work(context, page, () => Math.max(1, budget - (Date.now() - started)));
  } catch (err) {
    // A step's own timeout (each is given the time left) can fire a moment before the deadline's kill.
    if (expired || (err as Error)?.name === 'TimeoutError') {
      fail('RENDER_TIMEOUT', `the page did not finish loading and printing within the deadline of ${Math.round(budget / 1000)} s; nothing was charged (a script that never ends, or a page too large to print in time)`);
    }
    if (crashed) fail('LIMIT_EXCEEDED', 'the page needed more memory than one job may use; nothing was charged');
    throw err;
  } finally {
    clearTimeout(timer);
    await killChromiumUsing(profileDir);
    await proxy.close();
  }
}

/** Refuses a printed PDF of more than WEB_PAGE_LIMIT pages (after the work, so nothing is charged). */
export async function checkPageLimit(pdf: Uint8Array, job: Job): Promise<void> {
  const file = path.join(job.jobDir, 'printed.pdf');
  await writeFile(file, pdf);
  const pages = await pageCountForJob(file, { cwd: job.jobDir, timeoutMs: timeLeft(job) });
  if (pages > WEB_PAGE_LIMIT) {
    fail('LIMIT_EXCEEDED', `the page prints on ${pages} pages; at most ${WEB_PAGE_LIMIT} are returned per call, and nothing was charged (split the page, or print it on larger paper or with smaller margins)`);
  }
}

export const fromHtml: WorkFunction<FromHtmlRequest> = async (job): Promise<JobOutput> => {
  const upload = job.files[0];
  if (!upload) throw new Error('from-html received no file');
  const files = await readPageFiles(upload.bytes, job.params.form);
  const pdf = await withBrowser(job, job.params.javascript, async (context, page, msLeft) => {
    await serveFrom(context, files);
    await keepLoadedDocument(page);
    await page.goto(`${PAGE_ORIGIN}/${PAGE_INDEX}`, { waitUntil: 'load', timeout: msLeft() });
    return printPage(page, job.params, msLeft());
  });
  await checkPageLimit(pdf, job);
  return { body: new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength), mediaType: 'application/pdf' };
};

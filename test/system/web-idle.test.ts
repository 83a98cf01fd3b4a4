// The page leaves no request open: every response it asks for is read or cancelled, so Chromium
// sees the network go idle (a response whose body nobody reads keeps its request open, and the
// page never reaches network idle). Checked in Debian's headless Chromium against the real service
// in dev mode with both local chains, so the page makes every request it can: the catalog, the API
// description, the health, the demo payer, the Solana relay, and quotes refused and accepted.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { ensureWebBuilt } from '../../bin/build-assets.js';
import { startTestService, type TestService } from '../support/service.js';
import { STEP_TIMEOUT, chooseOperation, launchBrowser } from '../support/browser.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('the web page goes idle: no request left open', () => {
  let t: TestService;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let jpeg: Buffer;

  before(async () => {
    await ensureWebBuilt();
    t = await startTestService({ solana: true });
    browser = await launchBrowser();
    jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
  });

  after(async () => {
    await browser?.close();
    await t?.stop();
  });

  /** A page that keeps the requests it started and has not seen finish (or fail), by method and path. */
  async function watchedPage(): Promise<{ page: Page; open: Map<unknown, string>; seen: string[] }> {
    const page = await browser.context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    const open = new Map<unknown, string>();
    const seen: string[] = [];
    page.on('request', (request) => {
      const name = `${request.method()} ${new URL(request.url()).pathname}`;
      open.set(request, name);
      seen.push(name);
    });
    page.on('requestfinished', (request) => open.delete(request));
    page.on('requestfailed', (request) => open.delete(request));
    return { page, open, seen };
  }

  /** Waits up to `ms` for every request to finish; answers those still open. */
  async function stillOpen(open: Map<unknown, string>, ms = 5_000): Promise<string[]> {
    const until = Date.now() + ms;
    while (open.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    return [...open.values()].sort();
  }

  it('loading the page reaches network idle, with the Solana relay, the health and the demo payer asked and every answer finished', async () => {
    const { page, open, seen } = await watchedPage();
    try {
      await page.goto(`${t.url}/`);
      await page.waitForLoadState('networkidle', { timeout: 10_000 });
      expect(await stillOpen(open, 0)).to.equal([]);
      for (const asked of ['GET /web/solana-rpc', 'GET /v1/health', 'GET /dev/payer', 'GET /v1/discovery', 'GET /openapi.json']) expect(seen).to.include(asked);
    } finally {
      await page.close();
    }
  });

  it('quotes, refused and accepted, one overtaken by the next, leave no request open', async () => {
    const { page, open, seen } = await watchedPage();
    try {
      await page.goto(`${t.url}/`);
      await page.waitForLoadState('networkidle', { timeout: 10_000 });
      await chooseOperation(page, '/v1/image/crop');
      // A crop larger than the image: the service refuses the quote (422), which the page reads.
      await page.locator('#field-width').fill('500');
      await page.locator('#field-height').fill('500');
      await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
      await page.locator('#field-width').fill('10');
      await page.locator('#field-height').fill('10');
      // Two files one after the other: the first quote may be overtaken by the second.
      await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
      await page.locator('#field-file').setInputFiles({ name: 'photo2.jpg', mimeType: 'image/jpeg', buffer: jpeg });
      await page.locator('#quote-amount').waitFor();
      expect(seen.filter((s) => s === 'POST /v1/image/crop').length).to.be.at.least(2);
      expect(await stillOpen(open)).to.equal([]);
    } finally {
      await page.close();
    }
  });
});

// /v1/pdf/from-url: a buyer's page loaded in Chromium, every request it makes sent over the job's
// fetch channel (core/page-fetch.ts) to the front end's vetted fetcher and answered with what it
// got, or refused; then printed (tools/engines/chromium.ts, as from-html) or photographed whole.
// The browser itself reaches only the refusing proxy; it is killed at the job's deadline.
import type { Route } from 'playwright-core';
import { fail } from '../../core/errors.js';
import type { JobOutput, WorkFunction } from '../../core/job.js';
import { PageFetchClient, type PageFetchResult } from '../../core/page-fetch.js';
import { PNG_MAX_HEIGHT, VIEWPORT, type FromUrlRequest } from '../../operations/pdf/from-url.js';
import { checkPageLimit, keepLoadedDocument, printPage, withBrowser } from './from-html.js';

/** Answers one request of the page through the channel: only GETs of http(s) URLs are asked for. */
async function answer(route: Route, client: PageFetchClient, seen: (result: PageFetchResult) => void): Promise<void> {
  const request = route.request();
  if (request.method() !== 'GET' || !/^https?:\/\//i.test(request.url())) {
    await route.abort('blockedbyclient').catch(() => undefined);
    return;
  }
  const result = await client.fetch(request.url());
  seen(result);
  // A route settled after its page closed (the deadline, the end of the job) throws; nothing waits for it then.
  if (result.ok) {
    const body = Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength);
    await route.fulfill({ status: 200, contentType: result.mediaType ?? 'application/octet-stream', body }).catch(() => undefined);
  } else {
    await route.abort('blockedbyclient').catch(() => undefined);
  }
}

export const fromUrl: WorkFunction<FromUrlRequest> = async (job): Promise<JobOutput> => {
  if (!job.fetchPort) throw new Error('from-url received no fetch channel');
  const client = new PageFetchClient(job.fetchPort);
  const { url, format, waitMs } = job.params;
  let documentAnswer: PageFetchResult | undefined;
  try {
    const output = await withBrowser(job, job.params.javascript, async (context, page, msLeft) => {
      await context.route('**/*', async (route) => {
        const request = route.request();
        const isDocument = request.isNavigationRequest() && request.frame() === page.mainFrame() && documentAnswer === undefined;
        await answer(route, client, (result) => { if (isDocument) documentAnswer = result; });
      });
      await keepLoadedDocument(page);
      await page.setViewportSize(VIEWPORT);
      try {
        await page.goto(url, { waitUntil: 'load', timeout: msLeft() });
      } catch (err) {
        // The buyer's own URL refused or failed: the fetcher's reason, naming the field.
        if (documentAnswer && !documentAnswer.ok) fail(documentAnswer.code, documentAnswer.message, { field: 'url' });
        throw err;
      }
      if (waitMs > 0) await page.waitForTimeout(Math.min(waitMs, msLeft()));
      if (format === 'png') {
        const height = await page.evaluate(() => document.documentElement.scrollHeight);
        const png = await page.screenshot({
          fullPage: true, type: 'png', timeout: msLeft(),
          clip: { x: 0, y: 0, width: VIEWPORT.width, height: Math.max(1, Math.min(height, PNG_MAX_HEIGHT)) },
        });
        return { body: png, mediaType: 'image/png' };
      }
      return { body: await printPage(page, job.params, msLeft()), mediaType: 'application/pdf' };
    });
    if (output.mediaType === 'application/pdf') await checkPageLimit(output.body, job);
    return { body: new Uint8Array(output.body.buffer, output.body.byteOffset, output.body.byteLength), mediaType: output.mediaType };
  } finally {
    client.close();
  }
};

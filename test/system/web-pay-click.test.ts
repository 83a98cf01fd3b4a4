// A click on a pay button always ends in a payment or in words saying why not (issue 42, item 12).
// A person in Debian's headless Chromium, on the real service in dev mode with the local Base
// chain: chooses Resize, types a width, chooses a photo, and clicks "Pay with the demo payer" as
// soon as a price is on the screen, the list's "0.005 USD" beside Resize, while the service is
// still pricing the photo (held back here for a few seconds, as a busy service or a large photo
// holds it). The page used to drop that click without a word: the button was `disabled`, the
// browser sent no click, no request, no status, no problem, and the page went on waiting.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import type { Page, Route } from 'playwright-core';
import { ensureWebBuilt } from '../../bin/build-assets.js';
import { startTestService, type TestService } from '../support/service.js';
import { STEP_TIMEOUT, launchBrowser } from '../support/browser.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** How long the words may take to appear after a click: at once, to a person. */
const WORDS_WITHIN_MS = 2_000;

describe('the web page: every click on a pay button pays or says why not', () => {
  let t: TestService;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let photo: Buffer;

  before(async () => {
    await ensureWebBuilt();
    t = await startTestService();
    browser = await launchBrowser();
    const noise = { type: 'gaussian', mean: 128, sigma: 40 } as const;
    const create = { width: 640, height: 480, channels: 3, background: '#808080', noise } as const;
    photo = await sharp({ create }).jpeg({ quality: 90 }).toBuffer();
  });

  after(async () => {
    await browser?.close();
    await t?.stop();
  });

  /** While `holding`, the unpaid requests of the operation (the quotes) wait until released; paid ones pass at once. */
  async function holdQuotes(page: Page, opPath: string): Promise<{ holding: boolean; release(): void; held(): number }> {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => { open = resolve; });
    let held = 0;
    const control = { holding: true, release: () => open(), held: () => held };
    await page.route(`**${opPath}`, async (route: Route) => {
      if (control.holding && route.request().headers()['payment-signature'] === undefined) {
        held += 1;
        await gate;
      }
      await route.continue().catch(() => undefined);
    });
    return control;
  }

  /** The page says these words, under Pay and run, within moments of the click. */
  async function says(page: Page, words: string): Promise<void> {
    await page.locator('#problem, #status').filter({ hasText: words }).first().waitFor({ timeout: WORDS_WITHIN_MS });
  }

  it('Resize, a width, a photo, pay clicked while its price is coming: words, no request; then the price, pay, the result', async () => {
    const page = await browser.context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    const posts: string[] = [];
    page.on('request', (request) => { if (request.method() === 'POST') posts.push(new URL(request.url()).pathname); });
    try {
      const quotes = await holdQuotes(page, '/v1/image/resize');
      await page.goto(`${t.url}/`);
      const payButton = page.getByRole('button', { name: 'Pay with the demo payer (dev mode)' });
      await payButton.waitFor({ state: 'visible' });

      // The person's steps: choose Resize, type a width, choose a photo.
      await page.getByText('Resize an image').click();
      await page.getByRole('spinbutton', { name: /^width/ }).click();
      await page.keyboard.type('320', { delay: 80 });
      const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.locator('#field-file').click()]);
      await chooser.setFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: photo });
      await page.waitForFunction(() => document.getElementById('quote')?.getAttribute('aria-busy') === 'true');
      expect(await page.locator('.price[data-path="/v1/image/resize"]').innerText()).to.equal('0.005 USD');

      // The click, as a mouse makes it: on the button where it is, whatever state the page gives it.
      await payButton.click({ force: true });
      await says(page, 'The price is still being asked for.');
      expect(await page.locator('#problem').innerText()).to.contain('nothing was signed or paid');
      expect(posts.filter((p) => p === '/dev/sign')).to.equal([]);
      expect(quotes.held()).to.equal(1);

      // The price arrives; the same button now pays it.
      quotes.release();
      await page.locator('#quote-amount').waitFor();
      expect(await page.locator('#quote-amount').innerText()).to.equal('0.005 USD');
      const payerBefore = await t.evm.balanceOf(t.evm.payerAddress);
      await payButton.click({ force: true });
      await page.locator('#receipt-transaction').waitFor();
      expect(await page.locator('#status').innerText()).to.equal('Paid 0.005 USDC. The result is below.');
      expect(await page.locator('#result-image').evaluate((img) => (img as HTMLImageElement).naturalWidth)).to.equal(320);
      expect(await t.evm.balanceOf(t.evm.payerAddress)).to.equal(payerBefore - 5000n);

      // Clicked again: the price is spent, and the page says so instead of doing nothing.
      await payButton.click({ force: true });
      await says(page, 'This price is already paid.');
      expect(posts.filter((p) => p === '/dev/sign')).to.have.length(1);
      expect(await t.evm.balanceOf(t.evm.payerAddress)).to.equal(payerBefore - 5000n);
    } finally {
      await page.close();
    }
  });

  it('pay clicked before a photo is chosen, and right after a width is retyped: words each time, nothing signed', async () => {
    const page = await browser.context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    const posts: string[] = [];
    page.on('request', (request) => { if (request.method() === 'POST') posts.push(new URL(request.url()).pathname); });
    try {
      const quotes = await holdQuotes(page, '/v1/image/resize');
      quotes.holding = false;
      await page.goto(`${t.url}/`);
      const payButton = page.getByRole('button', { name: 'Pay with the demo payer (dev mode)' });
      await payButton.waitFor({ state: 'visible' });
      await page.getByText('Resize an image').click();
      await page.getByRole('spinbutton', { name: /^width/ }).click();
      await page.keyboard.type('32');
      await payButton.click({ force: true });
      await says(page, 'Choose a file first.');

      await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: photo });
      await page.locator('#quote-amount').waitFor();
      // A new width: the shown price no longer fits the form, and the new one is asked after a pause.
      quotes.holding = true;
      await page.getByRole('spinbutton', { name: /^width/ }).fill('48');
      await payButton.click({ force: true });
      await says(page, 'The price is still being asked for.');
      expect(posts.filter((p) => p === '/dev/sign')).to.equal([]);
      quotes.release();
    } finally {
      await page.close();
    }
  });
});

// The page for people, in a real browser (Debian's headless Chromium driven by playwright-core)
// against the real service and the local Base chain: the catalog and the generated form, the
// quote before signing, paying with the dev-mode demo payer and with an injected EIP-1193
// wallet, errors in words, and the API called from a page on another origin (CORS).
// Screenshots of each step go to test/artifacts/web/ (git-ignored) for a person to look at.
// The page with both chains offered, at phone and desktop sizes, and a declined signature on each
// chain: web-both-chains.test.ts.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createPublicClient, http as viemHttp, type Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { startTestService, type TestService } from '../support/service.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { createPayer } from '../../client/payer.js';
import { ensureWebBuilt } from '../../bin/build-assets.js';
import { CHROMIUM, CHROMIUM_ARGS, STEP_TIMEOUT, chooseOperation, injectEvmWallet, loadPage } from '../support/browser.js';
import { operations } from '../../operations/index.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const projectRoot = fileURLToPath(new URL('../../../', import.meta.url));
const artifacts = path.join(projectRoot, 'test/artifacts/web');
/** An atomic USDC amount as the page writes it: 5000 -> "0.005". */
const usd = (atomic: string | bigint) => String(Number(atomic) / 1e6);

describe('the web page in a real browser', () => {
  let t: TestService;
  let context: BrowserContext;
  let userDataDir: string;
  let jpeg: Buffer;
  let otherOrigin: http.Server;
  let otherUrl: string;
  const pdf3 = makePdf(textPages(3));
  const pdfWithoutImages = makePdf(textPages(1));
  /** Every URL each page asked for, to show the page talks to nothing but the service. */
  const requested = new Map<Page, string[]>();
  let shot = 0;

  before(async () => {
    await ensureWebBuilt();
    await rm(artifacts, { recursive: true, force: true });
    await mkdir(artifacts, { recursive: true });
    t = await startTestService();
    jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
    userDataDir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, acceptDownloads: true,
      viewport: { width: 1100, height: 900 },
    });
    // Another web application: a page served from a different origin than the service.
    otherOrigin = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>another app</title><p>another web application</p>');
    });
    await new Promise<void>((resolve) => otherOrigin.listen(0, '127.0.0.1', resolve));
    otherUrl = `http://127.0.0.1:${(otherOrigin.address() as { port: number }).port}`;
  });

  after(async () => {
    await context?.close();
    await new Promise((resolve) => otherOrigin?.close(resolve));
    await t?.stop();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  async function openPage(): Promise<Page> {
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    const urls: string[] = [];
    requested.set(page, urls);
    page.on('request', (request) => { urls.push(request.url()); });
    return page;
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    shot += 1;
    await page.screenshot({ path: path.join(artifacts, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
    // After a full-page capture Chromium's scroll position is out of step with what playwright
    // believes, and the next click lands beside its target; scrolling once re-aligns them.
    await page.evaluate(() => window.scrollTo(0, 0));
  }

  /** Nothing but the service itself (and the page's own blob: result) was ever asked for. */
  function expectOnlyServiceRequests(page: Page, serviceUrl = t.url): void {
    const origin = new URL(serviceUrl).origin;
    const foreign = (requested.get(page) ?? []).filter((url) => !url.startsWith('blob:') && !url.startsWith('data:') && new URL(url).origin !== origin);
    expect(foreign).to.equal([]);
  }

  const injectWallet = injectEvmWallet;

  const load = (page: Page, url = t.url) => loadPage(page, url);
  const choose = chooseOperation;

  const quoteText = async (page: Page) => {
    await page.locator('#quote-amount').waitFor();
    return { amount: await page.locator('#quote-amount').innerText(), usdc: await page.locator('#quote-usdc').innerText(), chains: await page.locator('#quote-chains').innerText() };
  };

  const problem = async (page: Page) => {
    await page.locator('#problem p').first().waitFor();
    return page.locator('#problem').innerText();
  };

  async function download(page: Page): Promise<Buffer> {
    const [file] = await Promise.all([page.waitForEvent('download'), page.locator('#result-download').click()]);
    return readFile((await file.path())!);
  }

  async function transactionSucceeded(hash: string): Promise<boolean> {
    const client = createPublicClient({ transport: viemHttp(t.evm.rpcUrl) });
    return (await client.getTransactionReceipt({ hash: hash as Hash })).status === 'success';
  }

  it('serves the page without third-party anything, lists every operation with live prices, and builds the form from the API description', async () => {
    const res = await fetch(`${t.url}/`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).to.include("connect-src 'self'");
    expect(csp).to.include("script-src 'self'");
    expect(csp).to.include("default-src 'none'");
    const html = await res.text();
    expect(html).to.not.match(/<(script|link)[^>]+(src|href)="(https?:)?\/\//);
    const script = await fetch(`${t.url}/web/app.js`);
    expect(script.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    const etag = script.headers.get('etag')!;
    expect((await fetch(`${t.url}/web/app.js`, { headers: { 'if-none-match': etag } })).status).to.equal(304);

    const page = await openPage();
    await load(page);
    const catalog = await (await fetch(`${t.url}/v1/discovery`)).json() as { items: Array<{ resource: string; accepts: Array<{ amount: string }>; metadata: { pricingModel: string; thirdParty?: { available?: boolean } } }> };
    expect(await page.locator('input[name="operation"]').count()).to.equal(operations.length);
    for (const item of catalog.items) {
      const opPath = new URL(item.resource).pathname;
      const label = await page.locator(`.price[data-path="${opPath}"]`).innerText();
      const offered = item.metadata.thirdParty?.available !== false;
      expect(label).to.equal(offered ? `${usd(item.accepts[0].amount)} USD${item.metadata.pricingModel === 'per-page' ? ' per page' : ''}` : 'not offered by this service');
    }
    await screenshot(page, 'operations');

    const openapi = await (await fetch(`${t.url}/openapi.json`)).json() as {
      paths: Record<string, {
        post: {
          summary: string;
          requestBody: { content: Record<string, { schema: { required: string[]; properties: Record<string, Record<string, unknown>> } }> };
        };
      }>;
    };
    for (const opPath of ['/v1/image/crop', '/v1/image/rotate', '/v1/pdf/protect', '/v1/pdf/merge', '/v1/pdf/from-images']) {
      await choose(page, opPath);
      const described = openapi.paths[opPath].post;
      expect(await page.locator('#job h3').innerText()).to.equal(described.summary);
      // OpenAPI 3.0 takes no empty list of required properties: an operation without required fields has no list.
      const { required = [], properties } = described.requestBody.content['multipart/form-data'].schema;
      expect(await page.locator('#field-file').getAttribute('multiple')).to.equal(properties.file.type === 'array' ? '' : null);
      if (opPath === '/v1/pdf/from-images') {
        // Several images, TIFF among them, from 1 to 100.
        expect(await page.locator('#field-file').getAttribute('accept')).to.contain('image/tiff');
        expect(await page.locator('label[for="field-file"]').innerText()).to.contain('Files (1 to 100)');
      }
      for (const [name, schema] of Object.entries(properties)) {
        // The file's own input; a URL in its place and the result's delivery are for programs.
        if (['file', 'file_url', 'delivery', 'deliver_to'].includes(name)) {
          expect(await page.locator(`#field-${name}`).count(), name).to.equal(name === 'file' ? 1 : 0);
          continue;
        }
        const control = page.locator(`#field-${name}`);
        expect(await control.evaluate((el) => (el as HTMLInputElement).required), name).to.equal(required.includes(name));
        if (schema.enum) {
          const values = await control.locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
          expect(values, name).to.equal(['', ...(schema.enum as unknown[]).map(String)]);
        } else if (schema.type === 'integer') {
          expect(await control.getAttribute('type')).to.equal('number');
          expect(await control.getAttribute('min'), name).to.equal(schema.minimum === undefined ? null : String(schema.minimum));
          expect(await control.getAttribute('max'), name).to.equal(schema.maximum === undefined ? null : String(schema.maximum));
          expect(await control.getAttribute('placeholder'), name).to.equal(schema.default === undefined ? null : String(schema.default));
        } else {
          expect(await control.getAttribute('type'), name).to.equal(schema.format === 'password' ? 'password' : 'text');
        }
        if (schema.default !== undefined) expect(await page.locator(`#hint-${name}`).innerText()).to.include(`Default: ${schema.default}.`);
      }
    }
    await choose(page, '/v1/image/crop');
    // Every control has a label a screen reader announces, and a description of what it takes.
    const unlabelled = await page.locator('input, select, textarea').evaluateAll((controls) =>
      controls.filter((c) => ((c as HTMLInputElement).labels?.length ?? 0) === 0).map((c) => c.outerHTML));
    expect(unlabelled).to.equal([]);
    await screenshot(page, 'form');
    expectOnlyServiceRequests(page);
    await page.close();
  });

  it('dev mode: quotes after the file is chosen, pays with the demo payer, shows the image and downloads it; balances move by exactly the price', async () => {
    const page = await openPage();
    await load(page);
    await page.locator('#pay-demo').waitFor({ state: 'visible' });
    expect(await page.locator('#mode').innerText()).to.include('Dev mode');
    // This service offers Base only: the Solana wallet path is not shown.
    expect(await page.locator('#pay-solana').isHidden()).to.equal(true);
    expect(await page.locator('#wallet-note').innerText()).to.not.include('Solana');
    await choose(page, '/v1/image/resize');
    await page.locator('#field-width').fill('32');
    await page.locator('#field-format').selectOption('png');
    expect(await page.locator('#pay-demo').isDisabled()).to.equal(true);
    await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
    const quote = await quoteText(page);
    expect(quote.amount).to.equal('0.005 USD');
    expect(quote.usdc).to.include('Exactly 0.005 USDC (5000 ');
    expect(quote.chains).to.include('Base (eip155:8453): 0.005 USDC');
    await screenshot(page, 'demo-quote');

    const before = { payer: await t.evm.balanceOf(t.evm.payerAddress), payTo: await t.evm.balanceOf(t.evm.payTo) };
    await page.locator('#pay-demo').click();
    const transaction = await page.locator('#receipt-transaction').innerText();
    expect(transaction).to.match(/^0x[0-9a-f]{64}$/);
    expect(await transactionSucceeded(transaction)).to.equal(true);
    expect(await page.locator('#result-image').evaluate((img) => (img as HTMLImageElement).naturalWidth)).to.equal(32);
    expect(await page.locator('#result').innerText()).to.include(t.evm.payerAddress);
    await screenshot(page, 'demo-result');

    const bytes = await download(page);
    expect(await sharp(bytes).metadata()).to.include({ format: 'png', width: 32, height: 24 });
    expect(await t.evm.balanceOf(t.evm.payerAddress)).to.equal(before.payer - 5000n);
    expect(await t.evm.balanceOf(t.evm.payTo)).to.equal(before.payTo + 5000n);
    // The price box says it was paid, and no longer that nothing was.
    const priceBox = await page.locator('#quote').innerText();
    expect(priceBox).to.contain('This price is paid.');
    expect(priceBox).to.not.contain('Nothing has been signed or paid');
    // The quote is spent: a second click cannot pay twice; a new price must be asked for.
    expect(await page.locator('#pay-demo').isDisabled()).to.equal(true);
    await page.locator('#quote-again').click();
    expect((await quoteText(page)).amount).to.equal('0.005 USD');
    expect(await page.locator('#quote').innerText()).to.contain('Nothing has been signed or paid');
    expect(await page.locator('#pay-demo').isEnabled()).to.equal(true);
    const stored = await page.evaluate(async () => ({
      local: localStorage.length, session: sessionStorage.length, cookie: document.cookie,
      databases: (await indexedDB.databases()).length, caches: (await caches.keys()).length,
    }));
    expect(stored).to.equal({ local: 0, session: 0, cookie: '', databases: 0, caches: 0 });
    expectOnlyServiceRequests(page);
    await page.close();
  });

  it('an injected wallet signs the per-page quote of a 3-page PDF; the JSON result is shown and downloaded; the wallet pays exactly the price', async () => {
    const key = generatePrivateKey();
    const page = await openPage();
    const wallet = await injectWallet(page, key);
    await t.evm.mint(wallet.account.address, 1_000_000n);
    await load(page);
    await choose(page, '/v1/pdf/extract');
    await page.locator('#field-file').setInputFiles({ name: 'letter.pdf', mimeType: 'application/pdf', buffer: pdf3 });
    const quote = await quoteText(page);
    expect(quote.amount).to.equal('0.03 USD');
    expect(quote.usdc).to.include('for 3 pages at 0.01 USD per page');
    expect(wallet.signatures).to.equal(0);
    await screenshot(page, 'wallet-quote');

    const payToBefore = await t.evm.balanceOf(t.evm.payTo);
    await page.locator('#pay-wallet').click();
    const transaction = await page.locator('#receipt-transaction').innerText();
    expect(await transactionSucceeded(transaction)).to.equal(true);
    expect(wallet.signatures).to.equal(1);
    expect(await page.locator('#result').innerText()).to.include(wallet.account.address);
    expect(await page.locator('#result-text').innerText()).to.include('"pageCount": 3');
    await screenshot(page, 'wallet-result');

    const json = JSON.parse((await download(page)).toString('utf8')) as { text: string; pageCount: number; likelyScanned: boolean };
    expect(json.pageCount).to.equal(3);
    expect(json.text).to.include('markerpage3');
    expect(await t.evm.balanceOf(wallet.account.address)).to.equal(1_000_000n - 30_000n);
    expect(await t.evm.balanceOf(t.evm.payTo)).to.equal(payToBefore + 30_000n);
    expectOnlyServiceRequests(page);
    await page.close();
  });

  it('an operation that reports beside its file (redact) shows the report under the receipt; the PDF downloaded has the text removed; charged per page', async () => {
    const page = await openPage();
    await load(page);
    await page.locator('#pay-demo').waitFor({ state: 'visible' });
    await choose(page, '/v1/pdf/redact');
    await page.locator('#field-text').fill('["markerpage2"]');
    await page.locator('#field-file').setInputFiles({ name: 'letter.pdf', mimeType: 'application/pdf', buffer: pdf3 });
    expect((await quoteText(page)).amount).to.equal('0.03 USD');
    const payToBefore = await t.evm.balanceOf(t.evm.payTo);
    await page.locator('#pay-demo').click();
    expect(await transactionSucceeded(await page.locator('#receipt-transaction').innerText())).to.equal(true);
    expect(await page.locator('#result-report').innerText()).to.equal('Paydoc-Redactions: {"total":1,"pages":[0,1,0],"elsewhere":0,"attachments":{"redacted":0,"removed":0}}');
    const pdf = await download(page);
    expect(pdf.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
    expect(await t.evm.balanceOf(t.evm.payTo)).to.equal(payToBefore + 30_000n);
    expectOnlyServiceRequests(page);
    await page.close();
  });

  it('says in words what went wrong, and that nothing was charged: a refused file, a wallet on another chain, a refused payment, a failed job', async () => {
    const payToBefore = await t.evm.balanceOf(t.evm.payTo);

    // A 4xx before payment: no price, no pay button.
    const refusedFile = await openPage();
    await load(refusedFile);
    await choose(refusedFile, '/v1/image/resize');
    await refusedFile.locator('#field-width').fill('10');
    await refusedFile.locator('#field-file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an image at all') });
    const notAnImage = await problem(refusedFile);
    expect(notAnImage).to.include('This operation does not take this kind of file.');
    expect(notAnImage).to.include('Nothing was charged.');
    expect(await refusedFile.locator('#pay-demo').isDisabled()).to.equal(true);
    await screenshot(refusedFile, 'error-before-payment');
    await refusedFile.close();

    // A wallet on another chain that cannot switch: nothing is signed.
    const elsewhere = await openPage();
    const mainnet = await injectWallet(elsewhere, generatePrivateKey(), { chainId: 1 });
    await load(elsewhere);
    await choose(elsewhere, '/v1/image/compress');
    await elsewhere.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
    await quoteText(elsewhere);
    await elsewhere.locator('#pay-wallet').click();
    const wrongChain = await problem(elsewhere);
    expect(wrongChain).to.include('switch it to Base (chain 8453)');
    expect(wrongChain).to.include('Nothing was charged.');
    expect(mainnet.methods).to.include('wallet_switchEthereumChain');
    expect(mainnet.signatures).to.equal(0);
    await elsewhere.close();

    // A wallet without USDC signs, and the service refuses the payment.
    const broke = await openPage();
    const empty = await injectWallet(broke, generatePrivateKey());
    await load(broke);
    await choose(broke, '/v1/image/compress');
    await broke.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
    await quoteText(broke);
    await broke.locator('#pay-wallet').click();
    const refused = await problem(broke);
    expect(empty.signatures).to.equal(1);
    expect(refused).to.include('The payment was refused.');
    expect(refused).to.include('The paying account does not hold enough USDC for this price.');
    expect(refused).to.include('Nothing was charged.');
    await screenshot(broke, 'error-payment-refused');
    await broke.close();

    // A paid job that fails (a PDF without embedded images): not settled.
    const failing = await openPage();
    await load(failing);
    await choose(failing, '/v1/pdf/images');
    await failing.locator('#field-file').setInputFiles({ name: 'text-only.pdf', mimeType: 'application/pdf', buffer: pdfWithoutImages });
    await quoteText(failing);
    const payerBefore = await t.evm.balanceOf(t.evm.payerAddress);
    await failing.locator('#pay-demo').click();
    const failed = await problem(failing);
    expect(failed).to.include('The file holds nothing this operation can return.');
    expect(failed).to.include('Nothing was charged.');
    expect(await t.evm.balanceOf(t.evm.payerAddress)).to.equal(payerBefore);
    await screenshot(failing, 'error-job-failed');
    expectOnlyServiceRequests(failing);
    await failing.close();

    expect(await t.evm.balanceOf(t.evm.payTo)).to.equal(payToBefore);
  });

  it('another origin can quote and pay from a browser: preflight answered, PAYMENT-REQUIRED and PAYMENT-RESPONSE readable; the dev payer is not reachable from there', async () => {
    const preflight = await fetch(`${t.url}/v1/image/resize`, {
      method: 'OPTIONS',
      headers: { origin: otherUrl, 'access-control-request-method': 'POST', 'access-control-request-headers': 'payment-signature' },
    });
    expect(preflight.status).to.equal(200);
    expect(preflight.headers.get('access-control-allow-origin')).to.equal(otherUrl);
    expect(preflight.headers.get('access-control-allow-headers')!.toLowerCase()).to.include('payment-signature');
    const exposed = preflight.headers.get('access-control-expose-headers')!.toLowerCase().split(',');
    expect(exposed).to.include(['payment-required', 'payment-response']);

    const page = await openPage();
    await page.goto(otherUrl);
    const jpegBase64 = jpeg.toString('base64');
    const send = (paymentSignature?: string) => page.evaluate(async ({ service, image, signature }) => {
      const body = new FormData();
      body.append('file', new Blob([Uint8Array.from(atob(image), (c) => c.charCodeAt(0))], { type: 'image/jpeg' }), 'photo.jpg');
      body.append('width', '16');
      const response = await fetch(`${service}/v1/image/resize`, { method: 'POST', body, ...(signature ? { headers: { 'PAYMENT-SIGNATURE': signature } } : {}) });
      return { status: response.status, required: response.headers.get('payment-required'), receipt: response.headers.get('payment-response'), type: response.headers.get('content-type') };
    }, { service: t.url, image: jpegBase64, signature: paymentSignature });

    const quoted = await send();
    expect(quoted.status).to.equal(402);
    const paymentRequired: PaymentRequired = decodePaymentRequiredHeader(quoted.required!);
    expect(paymentRequired.accepts[0]).to.include({ network: 'eip155:8453', amount: '5000', payTo: t.evm.payTo });

    const payer = await createPayer({ chain: 'base', evmKey: t.evm.payerKey });
    const payload = await payer.createPaymentPayload(paymentRequired);
    const paid = await send(encodePaymentSignatureHeader(payload));
    expect(paid.status).to.equal(200);
    expect(paid.type).to.equal('image/jpeg');
    const receipt = decodePaymentResponseHeader(paid.receipt!);
    expect(receipt.success).to.equal(true);
    expect(await transactionSucceeded(receipt.transaction)).to.equal(true);

    const devSign = await page.evaluate(async (service) => {
      try {
        await fetch(`${service}/dev/sign`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        return 'answered';
      } catch {
        return 'blocked';
      }
    }, t.url);
    expect(devSign).to.equal('blocked');
    // Even from the page's own origin it signs nothing but this service's own requirements.
    const foreignPayTo = privateKeyToAccount(generatePrivateKey()).address;
    const foreignQuote = { ...paymentRequired, accepts: [{ ...paymentRequired.accepts[0], payTo: foreignPayTo }] };
    const refusedSign = await fetch(`${t.url}/dev/sign`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ paymentRequired: foreignQuote }) });
    expect(refusedSign.status).to.equal(422);
    expect((await refusedSign.json() as { error: { code: string } }).error.code).to.equal('FIELD_INVALID');
    await screenshot(page, 'other-origin');
    await page.close();
  });

  it('a browser app on another origin pays with the unmodified wrapFetchWithPayment of @x402/fetch; the transfer is on the chain', async () => {
    // The app: @x402/fetch and viem bundled for the browser as any web app would, served from its own origin.
    const esbuild = await import('esbuild');
    const bundle = await esbuild.build({
      stdin: {
        contents: [
          "import { wrapFetchWithPayment, x402Client } from '@x402/fetch';",
          "import { registerExactEvmScheme } from '@x402/evm/exact/client';",
          "import { privateKeyToAccount } from 'viem/accounts';",
          'window.payingFetch = (key) => { const client = new x402Client(); registerExactEvmScheme(client, { signer: privateKeyToAccount(key) }); return wrapFetchWithPayment(fetch, client); };',
        ].join('\n'),
        resolveDir: projectRoot, loader: 'js',
      },
      bundle: true, format: 'iife', platform: 'browser', write: false, minify: true, logLevel: 'error',
    });
    const app = http.createServer((req, res) => {
      if (req.url === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle.outputFiles[0].text);
      else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>a buyer app</title><script src="/app.js"></script>');
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const appUrl = `http://127.0.0.1:${(app.address() as { port: number }).port}`;
    const page = await openPage();
    try {
      await page.goto(appUrl);
      await page.waitForFunction(() => 'payingFetch' in window);
      const before = await t.evm.balanceOf(t.evm.payerAddress);
      const paid = await page.evaluate(async ({ service, key, image }) => {
        const pay = (window as unknown as { payingFetch(key: string): typeof fetch }).payingFetch(key);
        const body = new FormData();
        body.append('file', new Blob([Uint8Array.from(atob(image), (c) => c.charCodeAt(0))], { type: 'image/jpeg' }), 'photo.jpg');
        body.append('width', '16');
        const response = await pay(`${service}/v1/image/resize`, { method: 'POST', body });
        return { status: response.status, type: response.headers.get('content-type'), receipt: response.headers.get('payment-response'), bytes: (await response.arrayBuffer()).byteLength };
      }, { service: t.url, key: t.evm.payerKey, image: jpeg.toString('base64') });
      expect(paid.status).to.equal(200);
      expect(paid.type).to.equal('image/jpeg');
      expect(paid.bytes).to.be.above(100);
      const receipt = decodePaymentResponseHeader(paid.receipt!);
      expect(receipt.success).to.equal(true);
      expect(await transactionSucceeded(receipt.transaction)).to.equal(true);
      expect(before - await t.evm.balanceOf(t.evm.payerAddress)).to.equal(5000n);
    } finally {
      await page.close();
      await new Promise((resolve) => app.close(resolve));
    }
  });

  it('an operation that takes no file (from-url) is quoted once its fields change, and again when they change; the quote fetches nothing', async () => {
    // A service allowing one loopback site, which never answers: a quote fetches nothing.
    const site = http.createServer((_req, res) => { fetched += 1; res.end(); });
    let fetched = 0;
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const port = (site.address() as { port: number }).port;
    const withUrls = await startTestService({ config: { urlFetchAllow: `127.0.0.1:${port}` }, rigs: { evm: t.evm } });
    const page = await openPage();
    try {
      await load(page, withUrls.url);
      await page.locator('input[name="operation"][value="/v1/pdf/from-url"]').check();
      await page.locator('#field-url').waitFor();
      expect(await page.locator('#field-file').count()).to.equal(0);
      const asked = () => page.waitForResponse((res) => res.url().endsWith('/v1/pdf/from-url') && res.request().method() === 'POST');
      const first = asked();
      await page.locator('#field-url').fill(`http://127.0.0.1:${port}/page`);
      await page.locator('#field-url').dispatchEvent('change');
      expect((await first).status()).to.equal(402);
      expect((await quoteText(page)).amount).to.equal('0.02 USD');
      expect(await page.locator('#pay-demo').isEnabled()).to.equal(true);
      const second = asked();
      await page.locator('#field-paper').selectOption('letter');
      const requote = await second;
      expect(requote.status()).to.equal(402);
      expect(requote.request().postData()).to.contain('letter');
      expect((await quoteText(page)).amount).to.equal('0.02 USD');
      expect(fetched).to.equal(0);
      expectOnlyServiceRequests(page, withUrls.url);
    } finally {
      await page.close();
      await withUrls.stop();
      await new Promise((resolve) => site.close(resolve));
    }
  });

  it('operations the service cannot run (no model provider here) are marked in the list in plain words and cannot be chosen', async () => {
    const page = await openPage();
    try {
      await load(page);
      for (const op of ['/v1/image/ocr', '/v1/pdf/ocr', '/v1/pdf/tables', '/v1/pdf/structured']) {
        const input = page.locator(`input[name="operation"][value="${op}"]`);
        expect(await input.isDisabled(), op).to.equal(true);
        expect(await page.locator(`.price[data-path="${op}"]`).innerText(), op).to.equal('not offered by this service');
      }
      expect(await page.locator('input[name="operation"][value="/v1/image/resize"]').isEnabled()).to.equal(true);
      expect(await page.locator('.price[data-path="/v1/image/resize"]').innerText()).to.equal('0.005 USD');
    } finally {
      await page.close();
    }
  });

  it('a settlement whose answer is lost: the page asks again with the same payment, shows the result, and the payer is charged once', async () => {
    const page = await openPage();
    try {
      await load(page);
      await page.locator('#pay-demo').waitFor({ state: 'visible' });
      await choose(page, '/v1/image/resize');
      await page.locator('#field-width').fill('16');
      await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
      await quoteText(page);
      const before = await t.evm.balanceOf(t.evm.payerAddress);
      const settles = t.evm.facilitator.calls.settle;
      t.evm.facilitator.faults.settle = 'lost';
      try {
        await page.locator('#pay-demo').click();
        while (t.evm.facilitator.calls.settle === settles) await new Promise((resolve) => setTimeout(resolve, 20));
      } finally {
        delete t.evm.facilitator.faults.settle;
      }
      // The receipt is shown (without a transaction hash: the first answer, which carried it, was lost).
      await page.locator('#receipt-transaction').waitFor({ state: 'attached', timeout: 30_000 });
      expect(await page.locator('#result-image').evaluate((img) => (img as HTMLImageElement).naturalWidth)).to.equal(16);
      expect(await page.locator('#problem').innerText()).to.equal('');
      expect(before - await t.evm.balanceOf(t.evm.payerAddress)).to.equal(5000n);
    } finally {
      await page.close();
    }
  });

  it('field names quoted in descriptions show as code, never as raw backticks', async () => {
    const page = await openPage();
    try {
      await load(page);
      await choose(page, '/v1/image/compress');
      expect(await page.locator('p.desc code', { hasText: 'colors' }).count()).to.be.at.least(1);
      for (const text of await page.locator('p.desc').allInnerTexts()) expect(text).to.not.contain('`');
    } finally {
      await page.close();
    }
  });

  it('in live mode the demo payer does not exist, and CORS_ORIGINS limits which origins may call', async () => {
    const live = await startTestService({
      rigs: { evm: t.evm },
      config: { payments: 'live', evmFacilitatorUrl: t.evm.facilitatorUrl, evmPayTo: t.evm.payTo, corsOrigins: 'http://allowed.example' },
    });
    try {
      expect((await fetch(`${live.url}/dev/payer`)).status).to.equal(404);
      expect((await fetch(`${live.url}/dev/sign`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).to.equal(404);

      const allowed = await fetch(`${live.url}/v1/discovery`, { headers: { origin: 'http://allowed.example' } });
      expect(allowed.headers.get('access-control-allow-origin')).to.equal('http://allowed.example');
      const other = await fetch(`${live.url}/v1/discovery`, { headers: { origin: otherUrl } });
      expect(other.headers.get('access-control-allow-origin')).to.be.null();

      const page = await openPage();
      await injectWallet(page, generatePrivateKey());
      await load(page, live.url);
      await choose(page, '/v1/image/compress');
      await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
      expect((await quoteText(page)).amount).to.equal('0.005 USD');
      expect(await page.locator('#pay-demo').isHidden()).to.equal(true);
      expect(await page.locator('#mode').isHidden()).to.equal(true);
      expect(await page.locator('#pay-wallet').isEnabled()).to.equal(true);
      await screenshot(page, 'live-mode');
      expect((requested.get(page) ?? []).some((url) => url.includes('/dev/'))).to.equal(false);
      expectOnlyServiceRequests(page, live.url);
      await page.close();

      const foreign = await openPage();
      await foreign.goto(otherUrl);
      const outcome = await foreign.evaluate(async (service) => {
        try {
          await fetch(`${service}/v1/discovery`);
          return 'answered';
        } catch {
          return 'blocked';
        }
      }, live.url);
      expect(outcome).to.equal('blocked');
      await foreign.close();
    } finally {
      await live.stop();
    }
  });
});

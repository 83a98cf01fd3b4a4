// The page with both chains offered (the local Base chain and the local Solana chain, each with
// its real facilitator), at a phone's size and at a desktop's, in Debian's headless Chromium:
// the page keeps the phone's width once the Solana network id is shown, a form does not scold
// before the person has had a chance to fill it, a refused field is marked on the field, the
// result comes into view with its receipt after paying, and a person pays on Solana with a
// Wallet Standard wallet. Balances are read from the chains. Screenshots of what is in view go to
// test/artifacts/web-both-chains/ (git-ignored) for a person to look at.
// A declined signature runs once per chain here. The other pages in web.test.ts are not a per-chain
// pair: they run the default Base-only service (its demo payer, CORS, live mode), and its wallet
// payment shows EIP-1193 on a desktop with a download where this one shows Wallet Standard by keyboard.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import type { BrowserContext, Page } from 'playwright-core';
import { ensureWebBuilt } from '../../bin/build-assets.js';
import { startTestService, type TestService } from '../support/service.js';
import { STEP_TIMEOUT, accessibilityViolations, chooseOperation, injectEvmWallet, injectSolanaWallet, launchBrowser, layout, loadPage } from '../support/browser.js';
import { balancesOf } from '../support/paying.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { generatePrivateKey } from 'viem/accounts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SOLANA = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1100, height: 900 };
const artifacts = path.join(fileURLToPath(new URL('../../../', import.meta.url)), 'test/artifacts/web-both-chains');

describe('the web page with Base and Solana offered, at phone and desktop sizes', () => {
  let t: TestService;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let context: BrowserContext;
  let jpeg: Buffer;
  /** A tall photo: its result is far taller than a phone's screen. */
  let tallJpeg: Buffer;
  const requested = new Map<Page, string[]>();

  before(async () => {
    await ensureWebBuilt();
    await rm(artifacts, { recursive: true, force: true });
    await mkdir(artifacts, { recursive: true });
    t = await startTestService({ solana: true });
    browser = await launchBrowser();
    context = browser.context;
    jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
    tallJpeg = await sharp({ create: { width: 60, height: 600, channels: 3, background: '#cc6633' } }).jpeg().toBuffer();
  });

  after(async () => {
    await browser?.close();
    await t?.stop();
  });

  async function openPage(size: { width: number; height: number }): Promise<Page> {
    const page = await context.newPage();
    await page.setViewportSize(size);
    page.setDefaultTimeout(STEP_TIMEOUT);
    const urls: string[] = [];
    requested.set(page, urls);
    page.on('request', (request) => { urls.push(request.url()); });
    return page;
  }

  /** What the person sees in the window right now (not the full page: being in view is the point). */
  const screenshot = (page: Page, name: string) => page.screenshot({ path: path.join(artifacts, `${name}.png`) });

  function expectOnlyServiceRequests(page: Page): void {
    const origin = new URL(t.url).origin;
    const foreign = (requested.get(page) ?? []).filter((url) => !url.startsWith('blob:') && !url.startsWith('data:') && new URL(url).origin !== origin);
    expect(foreign).to.equal([]);
  }

  const load = (page: Page, url = t.url) => loadPage(page, url);
  const choose = chooseOperation;

  const chainsShown = async (page: Page) => {
    await page.locator('#quote-amount').waitFor();
    return page.locator('#quote-chains').innerText();
  };

  /** Whether the element is entirely within the window as it is scrolled now. */
  async function inView(page: Page, selector: string): Promise<boolean> {
    const { box, viewportHeight } = await layout(page, selector);
    return box !== undefined && box.top >= 0 && box.bottom <= viewportHeight;
  }

  for (const [size, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
    it(`${size}: the page keeps the window's width once a price with the Solana network id is shown`, async () => {
      const page = await openPage(viewport);
      try {
        await load(page);
        await choose(page, '/v1/image/compress');
        await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
        const chains = await chainsShown(page);
        expect(chains).to.include(`Solana (${SOLANA}): 0.005 USDC`);
        expect(chains).to.include('Base (eip155:8453): 0.005 USDC');
        const { pageWidth, viewportWidth } = await layout(page);
        expect(viewportWidth).to.equal(viewport.width);
        expect(pageWidth).to.equal(viewport.width);
        await page.locator('#quote').scrollIntoViewIfNeeded();
        await screenshot(page, `${size}-price-both-chains`);
        expect(await accessibilityViolations(page)).to.equal([]);
        expectOnlyServiceRequests(page);
      } finally {
        await page.close();
      }
    });

    it(`${size}: resize says nothing about width and height when the file is picked; the message waits until the person leaves the fields, then marks the width field`, async () => {
      const page = await openPage(viewport);
      try {
        await load(page);
        await choose(page, '/v1/image/resize');
        // The file field comes first: the person picks the photo before reaching width and height.
        await page.locator('#field-file').focus();
        await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
        await page.locator('#quote-pending').waitFor();
        expect(await page.locator('#quote').innerText()).to.include('No price yet: fill in the options above');
        expect(await page.locator('#problem').innerText()).to.equal('');
        expect(await page.locator('#job [aria-invalid]').count()).to.equal(0);
        await screenshot(page, `${size}-resize-file-picked`);

        // Moving through the fields with the keyboard says nothing yet...
        await page.keyboard.press('Tab');
        expect(await page.evaluate(() => document.activeElement?.id)).to.equal('field-width');
        let left = false;
        for (let i = 0; i < 10 && !left; i++) {
          expect(await page.locator('#problem').innerText()).to.equal('');
          await page.keyboard.press('Tab');
          // Out of the form, or already shown (and the focus taken back to the width field).
          left = await page.evaluate(() => !document.getElementById('job')!.contains(document.activeElement) || document.getElementById('problem')!.textContent !== '');
        }
        expect(left).to.equal(true);
        // ...and leaving them without filling width or height does: below, and on the width field,
        // where the focus goes (the next stop, "Show what is missing", went away with the message).
        await page.locator('#problem p').first().waitFor();
        await page.waitForFunction(() => document.activeElement?.id === 'field-width');
        expect(await page.locator('#problem').innerText()).to.include('at least one of "width" and "height"');
        const width = page.locator('#field-width');
        expect(await width.getAttribute('aria-invalid')).to.equal('true');
        expect(await width.getAttribute('aria-describedby')).to.equal('error-width hint-width');
        expect(await page.locator('#error-width').innerText()).to.include('at least one of "width" and "height"');
        await width.scrollIntoViewIfNeeded();
        await screenshot(page, `${size}-resize-fields-left`);

        // Filling width clears the mark and brings the price.
        await width.fill('32');
        expect(await chainsShown(page)).to.include('Base');
        expect(await width.getAttribute('aria-invalid')).to.equal(null);
        expect(await page.locator('#error-width').count()).to.equal(0);
        expect(await page.locator('#problem').innerText()).to.equal('');
      } finally {
        await page.close();
      }
    });
  }

  it('resize: "Show what is missing" in the price box shows the held message at once, by keyboard', async () => {
    const page = await openPage(PHONE);
    try {
      await load(page);
      await choose(page, '/v1/image/resize');
      await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
      await page.locator('#quote-why').focus();
      await page.keyboard.press('Enter');
      await page.locator('#problem p').first().waitFor();
      expect(await page.locator('#problem').innerText()).to.include('at least one of "width" and "height"');
      expect(await page.locator('#field-width').getAttribute('aria-invalid')).to.equal('true');
      expect(await page.evaluate(() => document.activeElement?.id)).to.equal('field-width');
    } finally {
      await page.close();
    }
  });

  it('quality 101 is marked on the quality field itself (aria-invalid, a visible mark, its message tied to it); 90 clears it', async () => {
    const page = await openPage(PHONE);
    try {
      await load(page);
      await choose(page, '/v1/image/compress');
      const quality = page.locator('#field-quality');
      const normalBorder = await quality.evaluate((el) => getComputedStyle(el).borderTopColor);
      await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
      await chainsShown(page);
      await quality.fill('101');
      await page.locator('#field-quality[aria-invalid="true"]').waitFor();
      const describedBy = (await quality.getAttribute('aria-describedby'))!.split(' ');
      expect(describedBy).to.equal(['error-quality', 'hint-quality']);
      const message = await page.locator('#error-quality').innerText();
      expect(message).to.include('quality');
      expect(message).to.include('100');
      // Seen, not only announced: the field's border changes colour and its message sits under it.
      expect(await quality.evaluate((el) => getComputedStyle(el).borderTopColor)).to.not.equal(normalBorder);
      expect(await page.locator('#error-quality').isVisible()).to.equal(true);
      expect(await page.locator('#problem').innerText()).to.include('One of the options is missing or not allowed.');
      await screenshot(page, 'phone-quality-101');
      expect(await accessibilityViolations(page)).to.equal([]);

      await quality.fill('90');
      await page.locator('#quote-amount').waitFor();
      expect(await quality.getAttribute('aria-invalid')).to.equal(null);
      expect(await quality.getAttribute('aria-describedby')).to.equal('hint-quality');
    } finally {
      await page.close();
    }
  });

  for (const [size, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
    it(`${size}: after paying, the result and its receipt are in view even when the result image is tall; the page keeps its width`, async () => {
      const page = await openPage(viewport);
      try {
        await load(page);
        await page.locator('#pay-demo').waitFor({ state: 'visible' });
        await choose(page, '/v1/image/resize');
        await page.locator('#field-width').fill('300');
        await page.locator('#field-file').setInputFiles({ name: 'tall.jpg', mimeType: 'image/jpeg', buffer: tallJpeg });
        await chainsShown(page);
        const before = await balancesOf(t.evm);
        await page.locator('#pay-demo').click();
        await page.locator('#receipt-transaction').waitFor();
        await page.locator('#result-image').evaluate((img) => (img as HTMLImageElement).decode());
        expect(await page.locator('#result-image').evaluate((img) => (img as HTMLImageElement).naturalHeight)).to.equal(3000);
        expect(await inView(page, '#result-heading')).to.equal(true);
        expect(await inView(page, '#receipt')).to.equal(true);
        expect(await page.evaluate(() => document.activeElement?.id)).to.equal('result-heading');
        // The preview is bounded: a 300 x 3000 image does not fill more than most of the window.
        const shown = await page.locator('#result-image').evaluate((img) => img.getBoundingClientRect().height);
        expect(shown).to.be.at.most(viewport.height * 0.7 + 2);
        expect((await layout(page)).pageWidth).to.equal(viewport.width);
        await screenshot(page, `${size}-after-paying-tall-result`);
        const after = await balancesOf(t.evm);
        expect(before.payer - after.payer).to.equal(5000n);
        expect(after.payTo - before.payTo).to.equal(5000n);
      } finally {
        await page.close();
      }
    });
  }

  it('phone: a person pays on Solana with an injected Wallet Standard wallet, keyboard only; the wallet pays exactly the price, once', async () => {
    const page = await openPage(PHONE);
    try {
      // Both wallets, as a person with two extensions has: both paths are shown.
      const evmWallet = await injectEvmWallet(page, generatePrivateKey());
      const wallet = await injectSolanaWallet(page);
      await t.svm!.setBalance(wallet.address, 1_000_000n);
      await load(page);
      await choose(page, '/v1/pdf/extract');
      await page.locator('#field-file').setInputFiles({ name: 'letter.pdf', mimeType: 'application/pdf', buffer: makePdf(textPages(2)) });
      const chains = await chainsShown(page);
      expect(chains).to.include(`Solana (${SOLANA}): 0.02 USDC to`);
      expect(chains).to.not.include('pay with an x402 client');
      expect(await page.locator('#pay-wallet').isVisible()).to.equal(true);
      expect(await page.locator('#pay-solana').isVisible()).to.equal(true);
      expect(await page.locator('#pay-solana').innerText()).to.equal('Pay on Solana with my wallet');
      expect(await page.locator('#wallet-note').innerText()).to.include('A Solana wallet was found (Test Solana wallet)');
      // Every control has a label.
      const unlabelled = await page.locator('input, select, textarea').evaluateAll((controls) =>
        controls.filter((c) => ((c as HTMLInputElement).labels?.length ?? 0) === 0).map((c) => c.outerHTML));
      expect(unlabelled).to.equal([]);
      expect(wallet.signatures).to.equal(0);

      const before = { payer: await t.svm!.balanceOf(wallet.address), payTo: await t.svm!.balanceOf(t.svm!.payTo) };
      await page.locator('#pay-solana').focus();
      await page.keyboard.press('Enter');
      await page.locator('#receipt-transaction').waitFor();
      const receipt = await page.locator('#receipt').innerText();
      expect(receipt).to.include('Paid 0.02 USDC on Solana.');
      expect(receipt).to.include(wallet.address);
      // A Solana transaction id: a base58 signature of 64 bytes.
      expect(await page.locator('#receipt-transaction').innerText()).to.match(/^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
      expect(await page.locator('#result-text').innerText()).to.include('"pageCount": 2');
      expect(await inView(page, '#receipt')).to.equal(true);
      expect((await layout(page)).pageWidth).to.equal(PHONE.width);
      await screenshot(page, 'phone-paid-on-solana');
      expect(await accessibilityViolations(page)).to.equal([]);
      expect(wallet.connects).to.equal(1);
      expect(evmWallet.methods).to.equal([]);
      expect(wallet.signatures).to.equal(1);
      expect(before.payer - await t.svm!.balanceOf(wallet.address)).to.equal(20_000n);
      expect(await t.svm!.balanceOf(t.svm!.payTo) - before.payTo).to.equal(20_000n);
      // The quote is spent: the Solana button cannot pay it twice.
      expect(await page.locator('#pay-solana').isDisabled()).to.equal(true);
      expectOnlyServiceRequests(page);
    } finally {
      await page.close();
    }
  });

  /** Each chain's wallet as the page meets it, declining: injected its own way, asked through its own button. */
  const decliningWallets = [
    {
      chain: 'Base', button: '#pay-wallet',
      inject: async (page: Page) => {
        const wallet = await injectEvmWallet(page, generatePrivateKey(), { decline: true });
        await t.evm.mint(wallet.account.address, 1_000_000n);
        return { balance: () => t.evm.balanceOf(wallet.account.address), asked: () => wallet.methods.includes('eth_signTypedData_v4') };
      },
    },
    {
      chain: 'Solana', button: '#pay-solana',
      inject: async (page: Page) => {
        const wallet = await injectSolanaWallet(page, { decline: true });
        await t.svm!.setBalance(wallet.address, 1_000_000n);
        return { balance: () => t.svm!.balanceOf(wallet.address), asked: () => wallet.requests === 1 };
      },
    },
  ];

  for (const { chain, button, inject } of decliningWallets) {
    it(`a declined ${chain} signature: said in words, nothing charged`, async () => {
      const page = await openPage(DESKTOP);
      try {
        const wallet = await inject(page);
        await load(page);
        await choose(page, '/v1/image/compress');
        await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
        await chainsShown(page);
        await page.locator(button).click();
        await page.locator('#problem p').first().waitFor();
        const said = await page.locator('#problem').innerText();
        expect(said).to.include('You declined the request in your wallet.');
        expect(said).to.include('Nothing was charged.');
        expect(wallet.asked()).to.equal(true);
        expect(await wallet.balance()).to.equal(1_000_000n);
      } finally {
        await page.close();
      }
    });
  }

  it('the Solana relay answers only the two reads a payment needs, for the offered mint, and only to the page itself', async () => {
    const ask = (body: unknown) => fetch(`${t.url}/web/solana-rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const blockhash = await ask({ jsonrpc: '2.0', id: 1, method: 'getLatestBlockhash', params: [] });
    expect(blockhash.status).to.equal(200);
    expect((await blockhash.json() as { result: { value: { blockhash: string } } }).result.value.blockhash).to.match(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect((await ask({ jsonrpc: '2.0', id: 2, method: 'getAccountInfo', params: [t.svm!.asset, { encoding: 'base64' }] })).status).to.equal(200);
    expect((await ask({ jsonrpc: '2.0', id: 3, method: 'getAccountInfo', params: [t.svm!.payerAddress, { encoding: 'base64' }] })).status).to.equal(422);
    expect((await ask({ jsonrpc: '2.0', id: 4, method: 'sendTransaction', params: ['AA=='] })).status).to.equal(422);
    // No CORS: another origin's page cannot use the service as its RPC.
    const preflight = await fetch(`${t.url}/web/solana-rpc`, { method: 'OPTIONS', headers: { origin: 'http://elsewhere.example', 'access-control-request-method': 'POST' } });
    expect(preflight.headers.get('access-control-allow-origin')).to.be.null();
  });

  it('the Solana relay asks the RPC at most once per interval however many pages ask, echoes each caller\'s id, and refuses options that would make new reads', { timeout: 30_000 }, async () => {
    let upstreamCalls = 0;
    const proxy = createServer((req, res) => {
      upstreamCalls++;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c)).on('end', async () => {
        const answer = await fetch(t.svm!.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const live = await startTestService({
      rigs: { evm: t.evm, svm: t.svm },
      config: { payments: 'live', svmFacilitatorUrl: t.svm!.facilitatorUrl, svmPayTo: t.svm!.payTo, svmRpcUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` },
    });
    try {
      const ask = (body: unknown) => fetch(`${live.url}/web/solana-rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const many = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(i % 2
        ? { jsonrpc: '2.0', id: `b${i}`, method: 'getLatestBlockhash', params: [{ commitment: 'confirmed' }] }
        : { jsonrpc: '2.0', id: `m${i}`, method: 'getAccountInfo', params: [t.svm!.asset, { encoding: 'base64' }] })));
      const bodies = await Promise.all(many.map((r) => r.json() as Promise<{ id: string; result: { value: unknown } }>));
      expect(many.map((r) => r.status)).to.equal(Array(20).fill(200));
      expect(bodies.map((b) => b.id)).to.equal(Array.from({ length: 20 }, (_, i) => (i % 2 ? `b${i}` : `m${i}`)));
      expect(bodies.every((b) => b.result.value !== undefined)).to.be.true();
      expect(upstreamCalls).to.equal(2);
      // A blockhash is asked for again after its 2 s; the mint's account is not.
      await new Promise((r) => setTimeout(r, 2_100));
      expect((await ask({ jsonrpc: '2.0', id: 1, method: 'getLatestBlockhash', params: [{ commitment: 'confirmed' }] })).status).to.equal(200);
      expect((await ask({ jsonrpc: '2.0', id: 2, method: 'getAccountInfo', params: [t.svm!.asset, { encoding: 'base64' }] })).status).to.equal(200);
      expect(upstreamCalls).to.equal(3);
      for (const params of [[{ commitment: 'confirmed', minContextSlot: 7 }], [{ commitment: 'soon' }], [{}, 'extra']]) {
        const refused = await ask({ jsonrpc: '2.0', id: 3, method: 'getLatestBlockhash', params });
        expect(refused.status).to.equal(422);
        expect((await refused.json() as { error: { field: string } }).error.field).to.equal('params');
      }
      expect(upstreamCalls).to.equal(3);
    } finally {
      await live.stop();
      proxy.close();
    }
  });

  it('live mode offering Solana only (SVM_RPC_URL set): the page shows only the Solana path and pays through it', async () => {
    const live = await startTestService({
      rigs: { evm: t.evm, svm: t.svm },
      config: { payments: 'live', svmFacilitatorUrl: t.svm!.facilitatorUrl, svmPayTo: t.svm!.payTo, svmRpcUrl: t.svm!.rpcUrl },
    });
    const page = await openPage(PHONE);
    try {
      const wallet = await injectSolanaWallet(page);
      await t.svm!.setBalance(wallet.address, 1_000_000n);
      await load(page, live.url);
      await choose(page, '/v1/image/compress');
      await page.locator('#field-file').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: jpeg });
      const chains = await chainsShown(page);
      expect(chains).to.not.include('Base');
      expect(await page.locator('#pay-wallet').isHidden()).to.equal(true);
      expect(await page.locator('#pay-demo').isHidden()).to.equal(true);
      expect(await page.locator('#wallet-note').innerText()).to.not.include('Base');
      await page.locator('#pay-solana').click();
      await page.locator('#receipt-transaction').waitFor();
      expect(await page.locator('#receipt').innerText()).to.include('on Solana');
      expect(await t.svm!.balanceOf(wallet.address)).to.equal(1_000_000n - 5000n);
      const origin = new URL(live.url).origin;
      expect((requested.get(page) ?? []).filter((url) => !url.startsWith('blob:') && !url.startsWith('data:') && new URL(url).origin !== origin)).to.equal([]);
    } finally {
      await page.close();
      await live.stop();
    }
  });
});

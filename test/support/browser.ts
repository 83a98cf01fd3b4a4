// What the browser tests of the page share: Debian's headless Chromium driven by playwright-core,
// and the test wallets injected into a page before its scripts run. Each wallet's key stays in
// Node; the page's signing requests are forwarded to a function that signs for real with a key
// funded on a local chain, so the service and the facilitators see exactly what a real wallet sends.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import {
  generateKeyPair, getAddressFromPublicKey, getBase58Encoder, getBase64Decoder, getBase64Encoder,
  getTransactionDecoder, getTransactionEncoder, partiallySignTransaction,
} from '@solana/kit';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
export const STEP_TIMEOUT = 20_000;

/** A persistent Chromium context in a throw-away profile; close() removes the profile too. */
export async function launchBrowser(viewport = { width: 1100, height: 900 }): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, acceptDownloads: true, viewport,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

export interface EvmWalletOptions { decline?: boolean; chainId?: number }
export interface EvmWallet { account: PrivateKeyAccount; signatures: number; methods: string[] }

/**
 * A minimal EIP-1193 wallet injected before the page's scripts run. Its key stays in Node:
 * the page's requests are forwarded to a function that signs with the local-chain key.
 */
export async function injectEvmWallet(page: Page, key: `0x${string}`, options: EvmWalletOptions = {}): Promise<EvmWallet> {
  const wallet: EvmWallet = { account: privateKeyToAccount(key), signatures: 0, methods: [] };
  const chainId = `0x${(options.chainId ?? 8453).toString(16)}`;
  await page.exposeFunction('__testWalletRequest', async (method: string, paramsJson: string): Promise<string> => {
    wallet.methods.push(method);
    const params = JSON.parse(paramsJson) as unknown[];
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return JSON.stringify({ result: [wallet.account.address] });
      case 'eth_chainId':
        return JSON.stringify({ result: chainId });
      case 'eth_signTypedData_v4': {
        if (options.decline) return JSON.stringify({ error: { code: 4001, message: 'User rejected the request.' } });
        if (String(params[0]).toLowerCase() !== wallet.account.address.toLowerCase()) {
          return JSON.stringify({ error: { code: 4100, message: 'unknown account' } });
        }
        const typed = JSON.parse(String(params[1])) as {
          domain: Record<string, unknown>; types: Record<string, unknown>; primaryType: string; message: Record<string, unknown>;
        };
        const { EIP712Domain: _domainType, ...types } = typed.types;
        const signature = await wallet.account.signTypedData({ domain: typed.domain, types, primaryType: typed.primaryType, message: typed.message } as Parameters<PrivateKeyAccount['signTypedData']>[0]);
        wallet.signatures += 1;
        return JSON.stringify({ result: signature });
      }
      default:
        return JSON.stringify({ error: { code: 4200, message: `${method} is not supported by the test wallet` } });
    }
  });
  await page.addInitScript(() => {
    type Bridge = (method: string, params: string) => Promise<string>;
    const bridge = (window as unknown as { __testWalletRequest: Bridge }).__testWalletRequest;
    (window as unknown as { ethereum: unknown }).ethereum = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        type Answer = { result?: unknown; error?: { code: number; message: string } };
        const answer = JSON.parse(await bridge(method, JSON.stringify(params ?? []))) as Answer;
        if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
        return answer.result;
      },
      on() {},
      removeListener() {},
    };
  });
  return wallet;
}

export interface SolanaWalletOptions { decline?: boolean; name?: string }
/** `requests` counts the signing requests the wallet received, `signatures` those it signed. */
export interface SolanaWallet { address: string; name: string; connects: number; requests: number; signatures: number }

/**
 * A Solana wallet as a browser extension injects it: a Wallet Standard wallet with
 * `standard:connect` and `solana:signTransaction`, registered the way @wallet-standard/wallet's
 * registerWallet does (an announcement event, and an answer to the app's app-ready event). The
 * key pair is made and kept in Node; the wallet partially signs the transaction's wire bytes
 * with it, as Phantom or Solflare do.
 */
export async function injectSolanaWallet(page: Page, options: SolanaWalletOptions = {}): Promise<SolanaWallet> {
  const keyPair = await generateKeyPair();
  const address = await getAddressFromPublicKey(keyPair.publicKey);
  const wallet: SolanaWallet = { address, name: options.name ?? 'Test Solana wallet', connects: 0, requests: 0, signatures: 0 };
  await page.exposeFunction('__testSolanaWallet', async (method: string, base64: string): Promise<string> => {
    if (method === 'connect') {
      wallet.connects += 1;
      return JSON.stringify({ result: 'ok' });
    }
    wallet.requests += 1;
    if (options.decline) return JSON.stringify({ error: { code: 4001, message: 'User rejected the request.' } });
    const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
    const signed = await partiallySignTransaction([keyPair], transaction);
    wallet.signatures += 1;
    return JSON.stringify({ result: getBase64Decoder().decode(getTransactionEncoder().encode(signed)) });
  });
  const publicKey = Array.from(getBase58Encoder().encode(address));
  await page.addInitScript(({ address: walletAddress, publicKey: keyBytes, name }) => {
    type Bridge = (method: string, base64: string) => Promise<string>;
    const bridge = (window as unknown as { __testSolanaWallet: Bridge }).__testSolanaWallet;
    const call = async (method: string, base64 = '') => {
      const answer = JSON.parse(await bridge(method, base64)) as { result?: string; error?: { code: number; message: string } };
      if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
      return answer.result!;
    };
    const chains = ['solana:mainnet'];
    const account = { address: walletAddress, publicKey: new Uint8Array(keyBytes), chains, features: ['solana:signTransaction'] };
    const wallet = {
      version: '1.0.0', name, icon: 'data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg"/>', chains,
      accounts: [] as unknown[],
      features: {
        'standard:connect': {
          version: '1.0.0',
          async connect() { await call('connect'); wallet.accounts = [account]; return { accounts: wallet.accounts }; },
        },
        'standard:events': { version: '1.0.0', on: () => () => {} },
        'solana:signTransaction': {
          version: '1.0.0',
          supportedTransactionVersions: ['legacy', 0],
          signTransaction: (...inputs: Array<{ transaction: Uint8Array }>) => Promise.all(inputs.map(async ({ transaction }) => {
            const signed = await call('sign', btoa(String.fromCharCode(...transaction)));
            return { signedTransaction: Uint8Array.from(atob(signed), (c) => c.charCodeAt(0)) };
          })),
        },
      },
    };
    const callback = ({ register }: { register(wallet: unknown): unknown }) => register(wallet);
    window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback }));
    window.addEventListener('wallet-standard:app-ready', (event) => callback((event as CustomEvent).detail));
  }, { address, publicKey, name: wallet.name });
  return wallet;
}

/** The page's layout facts a person notices on a small screen. */
export async function layout(
  page: Page, selector?: string,
): Promise<{ pageWidth: number; viewportWidth: number; viewportHeight: number; box?: { top: number; bottom: number } }> {
  return page.evaluate((sel) => {
    const element = sel ? document.querySelector(sel) : null;
    const rect = element?.getBoundingClientRect();
    return {
      pageWidth: document.documentElement.scrollWidth,
      viewportWidth: window.innerWidth,
      viewportHeight: window.innerHeight,
      ...(rect ? { box: { top: rect.top, bottom: rect.bottom } } : {}),
    };
  }, selector);
}

/** Opens the page at a service's root and waits for the operation list. */
export async function loadPage(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.locator('input[name="operation"]').first().waitFor();
}

/** Chooses an operation by its path and waits for its form. */
export async function chooseOperation(page: Page, opPath: string): Promise<void> {
  await page.locator(`input[name="operation"][value="${opPath}"]`).check();
  await page.locator('#field-file').waitFor();
}

const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/**
 * axe-core's accessibility rules (WCAG 2.x A and AA, and best practices) over the page as it is
 * now: one line per violation and node. Evaluated through the DevTools protocol, which the page's
 * Content-Security-Policy does not govern, so the page itself still loads nothing but its own.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const source = await readFile(AXE_SOURCE, 'utf8');
  return page.evaluate(async (axeSource) => {
    (0, eval)(axeSource);
    type Violation = { id: string; help: string; nodes: Array<{ target: unknown[] }> };
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Violation[] }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.help}): ${JSON.stringify(n.target)}`));
  }, source);
}

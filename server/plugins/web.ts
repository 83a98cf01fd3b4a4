// The page for people: GET / and its two assets, built into dist/web by bin/build-assets.ts.
// In dev mode (PAYMENTS=dev with the local Base chain) it also lets the page pay with the
// rig's demo payer, signed here so the key never reaches the browser.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Plugin, Request, ResponseToolkit, Server } from '@hapi/hapi';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { fail } from '../../core/errors.js';
import { createPayer } from '../payment/client.js';
import type { EvmRig } from '../../devchains/index.js';
import type { App } from '../index.js';

// This file runs as dist/server/plugins/web.js; the build puts the page in dist/web.
const webDir = new URL('../../web/', import.meta.url);

const ASSETS: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/web/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/web/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

// The page may talk to this service only; blob: is the result it shows and offers to download.
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface LoadedAsset { body: Buffer; etag: string }

export interface DevSignRequest { paymentRequired: PaymentRequired }

export const webPlugin: Plugin<{ app: App }> = {
  name: 'web',
  register(server, { app }) {
    // Loaded on first use and kept: the files change only with a build, which a restart follows.
    const loaded = new Map<string, LoadedAsset>();
    async function load(file: string): Promise<LoadedAsset> {
      const cached = loaded.get(file);
      if (cached) return cached;
      let body: Buffer;
      try {
        body = await readFile(new URL(file, webDir));
      } catch {
        fail('UNAVAILABLE', 'the web page is not built; run `npm run build` (it bundles web/ into dist/web)');
      }
      const asset = { body, etag: createHash('sha256').update(body).digest('base64url').slice(0, 27) };
      loaded.set(file, asset);
      return asset;
    }

    for (const [routePath, { file, type }] of Object.entries(ASSETS)) {
      server.route({
        method: 'GET',
        path: routePath,
        options: { description: `The web page: ${file}` },
        handler: async (_request: Request, h: ResponseToolkit) => {
          const asset = await load(file);
          // Revalidated on every load (a 304 when unchanged), so a new build is seen at once.
          const unchanged = h.entity({ etag: asset.etag });
          if (unchanged) return unchanged.header('cache-control', 'no-cache');
          const response = h.response(asset.body).type(type).header('cache-control', 'no-cache');
          if (file === 'index.html') response.header('content-security-policy', PAGE_CSP);
          return response;
        },
      });
    }

    const rig = app.config.payments === 'dev' ? app.rigs.evm : undefined;
    if (rig) registerDevPayer(server, app, rig);

    const solana = app.gate.chains.find((c) => c.network.startsWith('solana:'));
    const solanaRpc = app.config.payments === 'dev' ? app.rigs.svm?.rpcUrl : app.config.svmRpcUrl || undefined;
    if (solana && solanaRpc) registerSolanaRelay(server, solanaRpc, solana.asset);
  },
};

// The only Solana reads the exact scheme's client makes before the wallet signs: the mint (its
// token program and decimals) and a recent blockhash.
// How long a relayed answer is served again: the mint's account hardly changes, and a blockhash
// stays valid for about a minute. However many pages ask, the RPC sees at most one read of each
// kind per interval, so the relay cannot be used to flood the operator's RPC.
const RELAYED_METHODS = new Map([['getAccountInfo', 60_000], ['getLatestBlockhash', 2_000]]);
const MAX_RELAYED_ANSWERS = 16;
const COMMITMENTS = new Set(['processed', 'confirmed', 'finalized']);
const ENCODINGS = new Set(['base64', 'base58', 'base64+zstd', 'jsonParsed']);

/** Options a wallet payment uses, and only those: a handful of distinct reads, all served from the cache. */
function relayableOptions(options: unknown): boolean {
  if (options === undefined) return true;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return false;
  return Object.entries(options).every(([key, value]) => (key === 'commitment' && COMMITMENTS.has(value as string)) || (key === 'encoding' && ENCODINGS.has(value as string)));
}

class RelayedReads {
  private readonly answers = new Map<string, { expires: number; result: Promise<unknown> }>();

  constructor(private readonly upstream: string) {}

  /** The RPC's result for this read: a fresh one, or one asked for within its interval (also one still on its way). */
  get(method: string, params: unknown[]): Promise<unknown> {
    const key = JSON.stringify([method, params]);
    const now = Date.now();
    const known = this.answers.get(key);
    if (known && known.expires > now) return known.result;
    const result = this.ask(method, params);
    this.answers.delete(key);
    this.answers.set(key, { expires: now + RELAYED_METHODS.get(method)!, result });
    // A failed read is not served again.
    result.catch(() => { if (this.answers.get(key)?.result === result) this.answers.delete(key); });
    while (this.answers.size > MAX_RELAYED_ANSWERS) this.answers.delete(this.answers.keys().next().value!);
    return result;
  }

  private async ask(method: string, params: unknown[]): Promise<unknown> {
    let answer: Response;
    try {
      answer = await fetch(this.upstream, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        signal: AbortSignal.timeout(10_000),
      });
    } catch {
      fail('UNAVAILABLE', 'the Solana RPC could not be reached');
    }
    if (!answer.ok) fail('UNAVAILABLE', `the Solana RPC answered with status ${answer.status}`);
    const body = await answer.json().catch(() => undefined) as { result?: unknown; error?: { message?: unknown } } | undefined;
    if (!body || !('result' in body)) fail('UNAVAILABLE', `the Solana RPC could not answer ${method}${typeof body?.error?.message === 'string' ? `: ${body.error.message.slice(0, 200)}` : ''}`);
    return body.result;
  }
}

/**
 * The Solana wallet path of the page needs two chain reads to build the transfer it asks the
 * wallet to sign. The page may talk to this service only (its CSP says so, and a person's page
 * should not call third parties), so the service relays exactly those reads, for its own USDC
 * mint, to its RPC. Same origin only; nothing is sent on the person's behalf.
 */
function registerSolanaRelay(server: Server, upstream: string, mint: string): void {
  const reads = new RelayedReads(upstream);
  server.route({
    method: 'GET',
    path: '/web/solana-rpc',
    options: { cors: false, description: 'Whether the page can build Solana payments (the relay below exists)' },
    handler: (_request, h) => h.response({ relay: true }).header('cache-control', 'no-store'),
  });
  server.route({
    method: 'POST',
    path: '/web/solana-rpc',
    options: {
      cors: false,
      description: 'The page\'s Solana reads (the USDC mint, a recent blockhash), relayed to the service\'s Solana RPC',
      payload: { parse: true, allow: ['application/json'], maxBytes: 4 * 1024 },
    },
    handler: async (request, h) => {
      const call = request.payload as { jsonrpc?: string; id?: unknown; method?: unknown; params?: unknown } | null;
      const method = typeof call?.method === 'string' ? call.method : '';
      const params = Array.isArray(call?.params) ? call.params : [];
      if (!RELAYED_METHODS.has(method) || (method === 'getAccountInfo' && params[0] !== mint)) {
        fail('FIELD_INVALID', 'this relay answers only getLatestBlockhash and getAccountInfo of the offered USDC mint', { field: 'method' });
      }
      if (!relayableOptions(params[method === 'getAccountInfo' ? 1 : 0]) || params.length > (method === 'getAccountInfo' ? 2 : 1)) {
        fail('FIELD_INVALID', 'this relay takes only a commitment and an encoding as options', { field: 'params' });
      }
      const result = await reads.get(method, params);
      return h.response({ jsonrpc: '2.0', id: call!.id ?? 1, result }).header('cache-control', 'no-store');
    },
  });
}

/**
 * Dev mode only: the demo payer of the local Base chain, for a newcomer without a wallet. Same
 * origin only (no CORS), and it signs nothing but this service's own Base requirements.
 */
function registerDevPayer(server: Server, app: App, rig: EvmRig): void {
  server.route({
    method: 'GET',
    path: '/dev/payer',
    options: { cors: false, description: 'Dev mode: the demo payer on the local Base chain' },
    handler: async (_request, h) => h.response({
      network: rig.network,
      address: rig.payerAddress,
      balance: (await rig.balanceOf(rig.payerAddress)).toString(),
    }).header('cache-control', 'no-store'),
  });

  server.route({
    method: 'POST',
    path: '/dev/sign',
    options: {
      cors: false,
      description: 'Dev mode: the demo payer signs a quote of this service on the local Base chain',
      payload: { parse: true, allow: ['application/json'], maxBytes: 64 * 1024 },
    },
    handler: async (request, h) => {
      const paymentRequired = (request.payload as Partial<DevSignRequest> | null)?.paymentRequired;
      if (!paymentRequired || paymentRequired.x402Version !== 2 || !Array.isArray(paymentRequired.accepts)) {
        fail('FIELD_INVALID', 'send { "paymentRequired": <the x402 v2 PaymentRequired of a 402 from this service> }', { field: 'paymentRequired' });
      }
      const chain = app.gate.chains.find((c) => c.network === rig.network);
      const same = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
      const accept = paymentRequired.accepts.find((a: PaymentRequirements) =>
        chain !== undefined && a.scheme === 'exact' && a.network === chain.network && same(a.payTo, chain.payTo) && same(a.asset, chain.asset));
      if (!accept) {
        fail('FIELD_INVALID', `the demo payer signs only this service's own requirements on ${rig.network}`, { field: 'paymentRequired' });
      }
      const payer = await createPayer({ chain: 'base', evmKey: rig.payerKey });
      const payload = await payer.createPaymentPayload({ ...paymentRequired, accepts: [accept] });
      return h.response(payload).header('cache-control', 'no-store');
    },
  });
}

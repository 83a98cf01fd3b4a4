// The page for people: GET / and its two assets, built into dist/web by bin/build-assets.ts, and
// the relay of the Solana reads its wallet payments need. The dev mode's demo payer is a plugin
// of its own (plugins/dev.ts), registered only in dev mode.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Plugin, Request, ResponseToolkit, Server } from '@hapi/hapi';
import { fail } from '../../core/errors.js';
import type { App } from '../app.js';

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

    const solana = app.gate.chains.find((c) => c.network.startsWith('solana:'));
    const solanaRpc = app.config.payments === 'dev' ? app.rigs.svm?.rpcUrl : app.config.svmRpcUrl || undefined;
    if (solana && solanaRpc) registerSolanaRelay(server, solanaRpc, solana.asset);
  },
};

// The only Solana reads the exact scheme's client makes before the wallet signs: the mint (its
// token program and decimals) and a recent blockhash.
// How long a relayed answer is served again: the mint's account hardly changes, and a blockhash
// stays valid for about a minute. However many pages ask, and however they spell their options,
// the RPC sees at most one read of each kind per interval, so the relay cannot be used to flood
// the operator's RPC.
const RELAYED_METHODS = new Map([['getAccountInfo', 60_000], ['getLatestBlockhash', 2_000]]);
const COMMITMENTS = new Set(['processed', 'confirmed', 'finalized']);
// The commitment every relayed read is made at: the page's own (@solana/kit's default). One
// commitment, so that a request's choice cannot make a second read; a confirmed blockhash is
// as good for a transfer as a finalized one, and the mint's decimals do not change.
const READ_COMMITMENT = 'confirmed';
// Per client address (an IPv6 client by its /64, which one host usually holds whole): the reads
// of a few payments a minute with room to spare. Beyond it, 429 with Retry-After.
const RELAY_REQUESTS_PER_MINUTE = 30;
const MAX_TRACKED_CLIENTS = 10_000;

/**
 * The options of a relayable read, or why not: only a commitment (any; answered at
 * READ_COMMITMENT) and, for the mint, the base64 encoding.
 */
function optionsProblem(method: string, options: unknown, more: boolean): string | undefined {
  const mint = method === 'getAccountInfo';
  const rule = mint
    ? 'getAccountInfo takes { "encoding": "base64" } and optionally a commitment'
    : 'getLatestBlockhash takes at most a commitment';
  if (more) return `${rule}, and no parameter after its options`;
  if (options === undefined) return mint ? rule : undefined;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return rule;
  const entries = Object.entries(options);
  const fits = entries.every(([key, value]) => (key === 'commitment' && COMMITMENTS.has(value as string)) || (mint && key === 'encoding' && value === 'base64'));
  return fits && (!mint || (options as { encoding?: unknown }).encoding === 'base64') ? undefined : rule;
}

/** The one upstream read of each kind: the same parameters whatever the page sent. */
function upstreamParams(method: string, mint: string): unknown[] {
  return method === 'getAccountInfo' ? [mint, { encoding: 'base64', commitment: READ_COMMITMENT }] : [{ commitment: READ_COMMITMENT }];
}

class RelayedReads {
  private readonly answers = new Map<string, { expires: number; result: Promise<unknown> }>();

  constructor(private readonly upstream: string, private readonly mint: string) {}

  /** The RPC's result for this kind of read: a fresh one, or one asked for within its interval (also one still on its way). */
  get(method: string): Promise<unknown> {
    const now = Date.now();
    const known = this.answers.get(method);
    if (known && known.expires > now) return known.result;
    const result = this.ask(method, upstreamParams(method, this.mint));
    this.answers.set(method, { expires: now + RELAYED_METHODS.get(method)!, result });
    // A failed read is not served again.
    result.catch(() => { if (this.answers.get(method)?.result === result) this.answers.delete(method); });
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

/** The address a limit counts by: an IPv4 address, or an IPv6 address's /64 (its first four groups). */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(':')) return address;
  const [head, tail] = address.split('%')[0].toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

/** Requests per client address in fixed one-minute windows. */
class PerClientLimit {
  private readonly windows = new Map<string, { resetAt: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  /** Counts one request; refuses it (429, Retry-After: the seconds until the window ends) past the limit. */
  take(address: string): void {
    const key = clientKey(address);
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      this.windows.delete(key);
      window = { resetAt: now + 60_000, count: 0 };
      this.windows.set(key, window);
      // Bounded memory: windows are kept in the order they started, so the oldest go first.
      while (this.windows.size > MAX_TRACKED_CLIENTS) this.windows.delete(this.windows.keys().next().value!);
    }
    window.count++;
    if (window.count > this.perMinute) {
      const retryAfterSeconds = Math.ceil((window.resetAt - now) / 1000);
      fail('RATE_LIMITED', `this relay answers ${this.perMinute} requests a minute from one address; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
    }
  }
}

/**
 * The Solana wallet path of the page needs two chain reads to build the transfer it asks the
 * wallet to sign. The page may talk to this service only (its CSP says so, and a person's page
 * should not call third parties), so the service relays exactly those reads, for its own USDC
 * mint, to its RPC. Same origin only; nothing is sent on the person's behalf.
 */
function registerSolanaRelay(server: Server, upstream: string, mint: string): void {
  const reads = new RelayedReads(upstream, mint);
  const limit = new PerClientLimit(RELAY_REQUESTS_PER_MINUTE);
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
      // Counted before the body is read, so every request counts, whatever it holds.
      ext: { onPreAuth: { method: (request, h) => { limit.take(request.info.remoteAddress); return h.continue; } } },
    },
    handler: async (request, h) => {
      const call = request.payload as { jsonrpc?: string; id?: unknown; method?: unknown; params?: unknown } | null;
      const method = typeof call?.method === 'string' ? call.method : '';
      const params = Array.isArray(call?.params) ? call.params : [];
      if (!RELAYED_METHODS.has(method) || (method === 'getAccountInfo' && params[0] !== mint)) {
        fail('FIELD_INVALID', 'this relay answers only getLatestBlockhash and getAccountInfo of the offered USDC mint', { field: 'method' });
      }
      const optionsAt = method === 'getAccountInfo' ? 1 : 0;
      const problem = optionsProblem(method, params[optionsAt], params.length > optionsAt + 1);
      if (problem) fail('FIELD_INVALID', `this relay takes only the options a wallet payment uses: ${problem}`, { field: 'params' });
      const result = await reads.get(method);
      return h.response({ jsonrpc: '2.0', id: call!.id ?? 1, result }).header('cache-control', 'no-store');
    },
  });
}

// What agent wallets and API tooling see of the service, with their own tools, unmodified and run
// the way their users run them (the package's bin from node_modules, as npx runs it):
// @agentcash/discovery lists every paid route as paid with its price and raises no warning (its
// favicon, guidance and 402 checks included); Redocly's and Spectral's recommended rules find no
// error in the OpenAPI document; `agentcash fetch` pays JSON calls end to end on the local Base
// chain, asking a stand-in for its hosted balance API on localhost:3000 (its --dev mode).
import http from 'node:http';
import { once } from 'node:events';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { isAddress } from 'viem';
import { isAddress as isSolanaAddress } from '@solana/kit';
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { toUsd } from '../../core/usd.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { balancesOf } from '../support/paying.js';
import { startTestService, type TestService } from '../support/service.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Runs an installed package's command as npx runs it: the bin linked in node_modules/.bin. */
async function run(
  bin: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [path.join(root, 'node_modules/.bin', bin), ...args], { cwd: options.cwd ?? root, env: options.env ?? process.env, maxBuffer: 16 * 1024 * 1024, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The price an agent wallet shows for an operation, as @agentcash/discovery formats it. */
function priceHint(op: Operation): string {
  const min = toUsd(BigInt(op.price.rate));
  if (op.price.model === 'flat') return `${min} USD`;
  return op.maxAmount !== undefined ? `${min}-${toUsd(BigInt(op.maxAmount))} USD` : `from ${min} USD`;
}

// The channel refund answers 402 only to hand x402's client the channel's terms; nothing is charged there.
const FREE_ROUTES = ['/v1/health', '/openapi.json', '/v1/openapi.json', '/v1/discovery', '/v1/channels/refund', '/.well-known/x402', '/v1/results/{token}', '/v1/jobs/{token}', '/llms.txt'];

describe('agent wallets and API linters read the service as it is', () => {
  let t: TestService;

  before(async () => {
    // Both chains, and a model provider's URL (never contacted by a quote), so that every paid
    // route answers its 402 and discovery checks them all.
    t = await startTestService({ solana: true, config: { modelBaseUrl: 'http://127.0.0.1:9/v1', modelName: 'any' } });
  });
  after(async () => { await t?.stop(); });

  it('@agentcash/discovery lists every paid route as paid with its price, the free routes as unprotected, and warns only of their number', async () => {
    const { code, stdout } = await run('discovery', ['discover', t.url, '--json', '-v']);
    expect(code).to.equal(0);
    const found = JSON.parse(stdout) as {
      ok: boolean; resources: Array<Record<string, unknown>>; warnings: unknown[]; meta: { guidance?: string };
    };
    expect(found.ok).to.be.true();
    // Its one advice is about size: past 40 routes a listing may not fit an agent's context in one
    // go. Each route is an operation buyers ask for, and llms.txt (named in its guidance) is the
    // short way in; nothing else may be warned of.
    const routes = operations.length + FREE_ROUTES.length;
    expect(found.warnings).to.equal(routes > 40 ? [{
      code: 'L2_ROUTE_COUNT_HIGH', severity: 'warn',
      message: `High route count (${routes}) may exceed agent token budgets for zero-hop injection.`,
      hint: 'Consider grouping routes or reducing the advertised surface.',
    }] : []);
    const paid = operations.map((op) => ({
      resourceKey: `${t.url} POST ${op.path}`, method: 'POST', path: op.path, authHint: 'paid', priceHint: priceHint(op), protocols: ['x402'],
    }));
    const free = FREE_ROUTES.map((route) => ({ resourceKey: `${t.url} GET ${route}`, method: 'GET', path: route, authHint: 'unprotected' }));
    expect(found.resources.map(({ resourceKey, method, path: route, authHint, priceHint: price, protocols }) => ({
      resourceKey, method, path: route, authHint, ...(price ? { priceHint: price } : {}), ...(protocols ? { protocols } : {}),
    }))).to.equal([...paid, ...free]);
    // The guidance it hands the agent points at llms.txt.
    expect(found.meta.guidance).to.contain(`${t.url}/llms.txt`);

    // What a person running it sees: the same list, and that advice only.
    const text = await run('discovery', [t.url]);
    expect(text.code).to.equal(0);
    for (const op of operations) expect(text.stdout).to.contain(`POST    ${op.path}  paid  ${priceHint(op)}  [x402]`);
    expect(text.stdout).to.contain(`Routes:   ${operations.length + FREE_ROUTES.length}`);
    const otherWarnings = text.stdout.split('\n').filter((line) => /warn/i.test(line) && !/L2_ROUTE_COUNT_HIGH|route count|^Warnings/i.test(line.trim()));
    expect(otherWarnings).to.equal([]);
  });

  it('its endpoint check of a merge shows the JSON body agents send, the price range and no warning', async () => {
    const { code, stdout } = await run('discovery', ['check', `${t.url}/v1/pdf/merge`, '--json']);
    expect(code).to.equal(0);
    const checked = JSON.parse(stdout) as {
      found: boolean; advisories: Array<Record<string, unknown> & { inputSchema: { requestBody: unknown } }>; warnings: unknown[];
    };
    expect(checked.found).to.be.true();
    expect(checked.warnings).to.equal([]);
    expect(checked.advisories).to.have.length(1);
    expect(checked.advisories[0]).to.include({ method: 'POST', authMode: 'paid', estimatedPrice: '>=0.005 USD', currency: 'USD', protocols: ['x402'] });
    const openapi = await (await fetch(`${t.url}/openapi.json`)).json() as { paths: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }> };
    expect(checked.advisories[0].inputSchema.requestBody).to.equal(openapi.paths['/v1/pdf/merge'].post.requestBody.content['application/json'].schema);
  });

  it('the web page links the icon, and the icon is served where browsers and directories look', async () => {
    const page = await (await fetch(`${t.url}/`)).text();
    expect(page).to.contain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    for (const route of ['/favicon.svg', '/favicon.ico']) {
      const res = await fetch(`${t.url}${route}`);
      expect(res.status, route).to.equal(200);
      expect(res.headers.get('content-type'), route).to.equal('image/svg+xml');
      // A real picture: it renders.
      const { width, height } = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      expect([width, height], route).to.equal([32, 32]);
    }
  });

  it('Redocly\'s and Spectral\'s recommended rules find no error in the OpenAPI document', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-lint-'));
    try {
      // Redocly's recommended rules apply when no configuration is given; its users turn telemetry off this way.
      const redocly = await run('redocly', ['lint', `${t.url}/openapi.json`, '--format=json'], { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } });
      const report = JSON.parse(redocly.stdout) as {
        totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }>;
      };
      expect(report.problems.filter((p) => p.severity === 'error')).to.equal([]);
      expect(report.totals.errors).to.equal(0);
      expect(redocly.code).to.equal(0);
      // Spectral's OpenAPI ruleset, as its documentation has users declare it.
      await writeFile(path.join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
      const spectral = await run('spectral', ['lint', `${t.url}/openapi.json`, '--format=json', '--output', 'results.json'], { cwd: dir });
      const results = JSON.parse(await readFile(path.join(dir, 'results.json'), 'utf8')) as Array<{ code: string; severity: number; message: string; path: string[] }>;
      // Severity 0 is an error.
      expect(results.filter((r) => r.severity === 0)).to.equal([]);
      expect(spectral.code).to.equal(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

interface BalanceRequest { method: string; path: string; body: string }

/**
 * A stand-in for agentcash's hosted balance API (POST /api/balance, asked on localhost:3000 with
 * --dev): it takes what the real one takes and no more (agentcash's own schema of the request:
 * a known network and a valid address for it), and answers the wallet's USDC on the local chain.
 */
async function startBalanceApi(t: TestService): Promise<{ requests: BalanceRequest[]; close(): Promise<void> }> {
  const requests: BalanceRequest[] = [];
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method!, path: req.url!, body });
      const answer = (status: number, value: unknown) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(value)); };
      if (req.method !== 'POST' || req.url !== '/api/balance') return answer(404, { error: 'not found' });
      let input: { address?: unknown; network?: unknown; tokenAddress?: unknown };
      try {
        input = JSON.parse(body) as typeof input;
      } catch {
        return answer(400, { error: 'the body is not JSON' });
      }
      const valid = typeof input === 'object' && input !== null && typeof input.address === 'string'
        && (input.network === 'solana'
          ? isSolanaAddress(input.address) && (input.tokenAddress === undefined || (typeof input.tokenAddress === 'string' && isSolanaAddress(input.tokenAddress)))
          : (input.network === 'base' || input.network === 'tempo') && isAddress(input.address) && (input.tokenAddress === undefined || (typeof input.tokenAddress === 'string' && isAddress(input.tokenAddress))));
      if (!valid) return answer(400, { error: 'invalid input' });
      // Only the local Base chain exists here; the test checks nothing else was asked for.
      if (input.network !== 'base') return answer(503, { error: `no ${String(input.network)} chain in this test` });
      void t.evm.balanceOf(input.address as string).then((atomic) => answer(200, {
        balance: Number(atomic) / 1e6, network: 'eip155:8453', paymentNetwork: 'base', chainId: 8453,
      }), (error: Error) => answer(500, { error: error.message }));
    });
  };
  // localhost is 127.0.0.1 or ::1, whichever the client resolves first.
  const servers: http.Server[] = [];
  for (const host of ['127.0.0.1', '::1']) {
    const server = http.createServer(handler);
    server.listen(3000, host);
    const outcome = await Promise.race([once(server, 'listening').then(() => undefined), once(server, 'error').then(([e]) => e as NodeJS.ErrnoException)]);
    if (outcome === undefined) servers.push(server);
    // A machine without IPv6 has no ::1; port 3000 already taken is the test's problem to report.
    else if (!(host === '::1' && outcome.code === 'EADDRNOTAVAIL')) throw new Error(`the balance API stand-in cannot listen on ${host}:3000: ${outcome.message}`);
  }
  return {
    requests,
    async close() { for (const s of servers) { s.closeAllConnections(); s.close(); } },
  };
}

describe('agentcash fetch pays a JSON call end to end (local Base chain)', () => {
  let t: TestService;
  let balanceApi: Awaited<ReturnType<typeof startBalanceApi>>;
  let home: string;

  before(async () => {
    t = await startTestService();
    balanceApi = await startBalanceApi(t);
    // agentcash keeps its wallets and settings under ~/.agentcash: a home of its own.
    home = await mkdtemp(path.join(os.tmpdir(), 'paydoc-agentcash-'));
  });
  after(async () => {
    await balanceApi?.close();
    await t?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  /** `agentcash fetch URL -m POST -b BODY --dev` with the demo payer's key as its wallet. */
  async function agentcashFetch(url: string, body: unknown): Promise<{ code: number; output: Record<string, unknown> }> {
    const env = { ...process.env, HOME: home, X402_PRIVATE_KEY: t.evm.payerKey };
    const { code, stdout, stderr } = await run('agentcash', ['fetch', url, '-m', 'POST', '-b', JSON.stringify(body), '--dev', '--format', 'json'], { env });
    try {
      return { code, output: JSON.parse(stdout) as Record<string, unknown> };
    } catch {
      throw new Error(`agentcash printed no JSON (exit ${code}): ${stdout}${stderr}`);
    }
  }

  it('a PDF sent as base64 is quoted, paid and answered as JSON; the chain moves the quoted price once', async () => {
    const before = await balancesOf(t.evm);
    const { code, output } = await agentcashFetch(`${t.url}/v1/pdf/extract`, { file: { data: Buffer.from(makePdf(textPages(1))).toString('base64') } });
    expect(output.success, JSON.stringify(output)).to.be.true();
    expect(code).to.equal(0);
    const data = output.data as { text: string; pageCount: number; likelyScanned: boolean };
    expect(data.pageCount).to.equal(1);
    expect(data.likelyScanned).to.be.false();
    expect(data.text).to.contain('Page 1 markerpage1');
    const metadata = output.metadata as {
      protocol: string; network: string; price: string; payment: { success: boolean; transactionHash: string };
    };
    expect(metadata).to.include({ protocol: 'x402', network: 'base', price: '$0.01' });
    expect(metadata.payment.success).to.be.true();
    expect(metadata.payment.transactionHash).to.match(/^0x[0-9a-f]{64}$/);
    const after = await balancesOf(t.evm);
    expect(before.payer - after.payer).to.equal(10000n);
    expect(after.payTo - before.payTo).to.equal(10000n);
    // It asked its balance API about the payer's Base wallet only, and in a shape the API takes.
    expect(balanceApi.requests.length).to.be.at.least(1);
    for (const request of balanceApi.requests) {
      expect(request).to.include({ method: 'POST', path: '/api/balance' });
      expect(JSON.parse(request.body)).to.equal({ address: t.evm.payerAddress, network: 'base' });
    }
  });

  it('an image result is taken as a one-time link (delivery=link), the way a JSON client holds a file', async () => {
    const before = await balancesOf(t.evm);
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#0b5cad' } }).png().toBuffer();
    const { code, output } = await agentcashFetch(`${t.url}/v1/image/resize`, { file: { data: png.toString('base64') }, width: 16, delivery: 'link' });
    expect(output.success, JSON.stringify(output)).to.be.true();
    expect(code).to.equal(0);
    const { result } = output.data as { result: { url: string; mediaType: string; bytes: number } };
    expect(result.mediaType).to.equal('image/png');
    const download = await fetch(result.url);
    expect(download.status).to.equal(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).to.equal(result.bytes);
    expect(await sharp(bytes).metadata()).to.include({ format: 'png', width: 16, height: 12 });
    expect(before.payer - (await balancesOf(t.evm)).payer).to.equal(5000n);
  });
});

// Replicas behind a real load balancer, under faults. Three service processes (node
// dist/bin/start.js, PAYMENTS=live) share one redis-server and sit behind HAProxy (Debian's, round
// robin, health checks on /v1/health); they settle on the local Base chain (anvil) and the local
// Solana chain (LiteSVM) through x402's own facilitator code, reached through a proxy that can slow
// settlements. The standard @x402/fetch client pays N calls (default 2,000) at concurrency C
// (default 16) over six operations on both chains, and retries a held or cut answer with the same
// payment, as docs/payments.md tells clients to. During the run:
//   - at 15 % of the calls one replica is killed with SIGKILL (and started again 10 s later);
//   - from 40 % to 60 % the facilitators' settlements are slowed (1 to 6 s each, past the
//     replicas' FACILITATOR_TIMEOUT_MS of 3 s), so settlements become unconfirmed and results held;
//   - at 50 % redis-server is restarted (3 s down, no persistence: it comes back empty).
// Afterwards every payment is reconciled against the chains (EIP-3009 AuthorizationUsed events
// and USDC Transfer events on Base; the settlement signatures' statuses and the token balances on
// Solana) and against the facilitator's own answers, and the counts below must hold:
//   payments settled twice 0; results without payment 0; charges without a delivered or held
//   result 0 apart from replies cut by the SIGKILL; no 402 for a payment that was spent; no 5xx
//   other than the documented ones (the service's catalog codes; HAProxy's for the killed replica).
// A result still held when a client gave up is looked for afterwards at each replica directly.
//   node dist/bench/chaos.js [--requests 2000] [--concurrency 16] [--retries 8] [--quick]
// Writes bench/results/chaos.json (bench/quick/results/chaos.json with --quick); exits 1 when a check fails.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentResponseHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import type { x402Client } from '@x402/core/client';
import { createPublicClient, http, parseAbiItem } from 'viem';
import { createPayer, type PayChain } from '../client/payer.js';
import { paymentId } from '../server/payment/guard.js';
import { makePdf, textPages } from '../test/support/pdf-fixtures.js';
import { ROOT, parseStepArgs, progress, start, writeResult } from './lib/common.js';
import { form } from './lib/service.js';
import { quantile, round } from './lib/stats.js';
import type { ChainBalances, ChainsReady, SettleRecord, VerifyRecord } from './lib/chains-process.js';
import { Haproxy, RedisServer, Replica, alive, freePort, metricBy, sleep, type HaproxyServerStats } from './lib/replicas.js';

interface Args {
  requests: number; concurrency: number; retries: number;
  facilitatorTimeoutMs: number; slowMinMs: number; slowMaxMs: number;
}

function parseArgs(quick: boolean, argv = process.argv.slice(2)): Args {
  const value = (name: string, fallback: number) => {
    const i = argv.indexOf(name);
    if (i === -1) return fallback;
    const n = Number(argv[i + 1]);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive integer`);
    return n;
  };
  return {
    requests: value('--requests', quick ? 200 : 2000), concurrency: value('--concurrency', 16), retries: value('--retries', 8),
    facilitatorTimeoutMs: value('--facilitator-timeout-ms', 3000), slowMinMs: value('--slow-min-ms', 1000), slowMaxMs: value('--slow-max-ms', 6000),
  };
}

const REPLICAS = ['r1', 'r2', 'r3'];
const KILLED = 'r2';
const AT = { kill: 0.15, slow: 0.40, redis: 0.50, fast: 0.60 };
const RESTART_AFTER_MS = 10_000;
const REDIS_DOWN_MS = 3_000;
// The service's 5xx that these faults are expected to cause (catalog codes, nothing charged or the result held).
const EXPECTED_5XX = new Set(['SETTLEMENT_UNCONFIRMED', 'GUARD_UNAVAILABLE', 'QUEUE_FULL']);
// Answers after which a client sends the identical request with the same payment again.
const RETRY_CODES = new Set(['SETTLEMENT_UNCONFIRMED', 'PAYMENT_IN_PROGRESS', 'GUARD_UNAVAILABLE', 'QUEUE_FULL', 'FACILITATOR_UNREACHABLE', 'UNAVAILABLE']);

interface Answer {
  /** ms since the run started */
  at: number;
  status: number;
  /** The error code, 'ok', 'payment-required' for a 402 quote, `haproxy` for HAProxy's own error page, `connection` for no answer. */
  code: string;
  message?: string;
  /** The replica HAProxy chose (its X-Replica header), or the replica asked directly. */
  replica: string;
  /** The PAYMENT-SIGNATURE it carried, if any. */
  payment?: string;
  retryAfterS?: number;
  ms: number;
  sweep?: boolean;
}

interface Payment {
  id: string;
  chain: PayChain;
  amount: bigint;
  header: string;
  answers: Answer[];
}

interface Call {
  index: number;
  route: string;
  chain: PayChain;
  answers: Answer[];
  payments: Payment[];
  ms: number;
}

interface Event { what: string; at: number; completed: number; detail?: string }

async function errorOf(res: Response): Promise<{ code: string; message?: string }> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } | string; x402Version?: number };
    if (typeof body.error === 'object' && body.error?.code) return { code: body.error.code, message: body.error.message };
    if (res.status === 402) return { code: 'payment-required', message: typeof body.error === 'string' ? body.error : undefined };
  } catch { /* HAProxy's error pages are HTML */ }
  if (/<h1>\d{3} /.test(text)) return { code: 'haproxy', message: /<h1>([^<]*)<\/h1>/.exec(text)?.[1] };
  return { code: String(res.status), message: text.slice(0, 160) };
}

function forkChains(): Promise<{ child: ChildProcess; ready: ChainsReady; ask<T>(message: object, kind: string): Promise<T> }> {
  const child = fork(path.join(ROOT, 'dist/bench/lib/chains-process.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = <T>(message: object, kind: string) => new Promise<T>((resolve, reject) => {
    const onMessage = (answer: { kind: string }) => { if (answer.kind === kind) { child.off('message', onMessage); resolve(answer as T); } };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`the chains process exited (${code})`)));
    child.send(message);
  });
  return new Promise((resolve, reject) => {
    child.once('message', (ready: ChainsReady) => resolve({ child, ready, ask }));
    child.once('exit', (code) => reject(new Error(`the chains process exited before it was ready (code ${code})`)));
  });
}

async function svmSignatureStatuses(rpcUrl: string, signatures: string[]): Promise<Map<string, boolean>> {
  const landed = new Map<string, boolean>();
  for (let i = 0; i < signatures.length; i += 200) {
    const batch = signatures.slice(i, i + 200);
    const res = await fetch(rpcUrl, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSignatureStatuses', params: [batch, { searchTransactionHistory: true }] }),
    });
    const { result } = (await res.json()) as { result: { value: Array<{ err: unknown; confirmationStatus?: string } | null> } };
    batch.forEach((sig, j) => { const s = result.value[j]; landed.set(sig, s !== null && s !== undefined && s.err === null); });
  }
  return landed;
}

function count<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) { const k = key(item); out[k] = (out[k] ?? 0) + 1; }
  return Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1]));
}

async function main(): Promise<void> {
  const step = parseStepArgs();
  const args = parseArgs(step.quick);
  const startedAt = start();
  for (const binary of ['haproxy', 'redis-server']) {
    if (spawnSync(binary, ['-v']).error) throw new Error(`${binary} is not installed (Debian: apt-get install ${binary === 'haproxy' ? 'haproxy' : 'redis-server'}; it is in test-packages.txt)`);
  }
  const haproxyVersion = spawnSync('haproxy', ['-v'], { encoding: 'utf8' }).stdout.split('\n')[0]!;
  const redisVersion = spawnSync('redis-server', ['-v'], { encoding: 'utf8' }).stdout.trim();

  const chains = await forkChains();
  const { evm, svm } = chains.ready;
  const redis = await RedisServer.start();
  const lbPort = await freePort();
  const env = {
    PAYMENTS: 'live', HOST: '127.0.0.1', BASE_URL: `http://127.0.0.1:${lbPort}`, WORKERS: '1', LOG_LEVEL: 'warn',
    EVM_NETWORK: evm.network, EVM_ASSET: evm.asset, EVM_PAY_TO: evm.payTo, EVM_FACILITATOR_URL: evm.proxyUrl, EVM_RPC_URL: evm.rpcUrl,
    SVM_NETWORK: svm.network, SVM_ASSET: svm.asset, SVM_PAY_TO: svm.payTo, SVM_FACILITATOR_URL: svm.proxyUrl,
    REDIS_URL: redis.url, FACILITATOR_TIMEOUT_MS: String(args.facilitatorTimeoutMs),
  };
  const tmpRoot = await mkdtemp(path.join('/dev/shm', 'paydoc-chaos-'));
  const replicas: Replica[] = [];
  let haproxy: Haproxy | undefined;
  try {
    for (const name of REPLICAS) replicas.push(new Replica(name, await freePort(), ROOT, env, path.join(tmpRoot, name)));
    await Promise.all(replicas.map((r) => r.start()));
    haproxy = await Haproxy.start(replicas.map((r) => ({ name: r.name, port: r.port })), lbPort);
    const lb = haproxy.url;
    progress(`${REPLICAS.length} replicas (node dist/bin/start.js, PAYMENTS=live, WORKERS=1, FACILITATOR_TIMEOUT_MS=${args.facilitatorTimeoutMs}) behind ${haproxyVersion} at ${lb}; ${redisVersion.split(' ').slice(0, 3).join(' ')} at ${redis.url}`);

    const payers = new Map<PayChain, x402Client>([
      ['base', await createPayer({ chain: 'base', evmKey: evm.payerKey, maxUsd: '5' })],
      ['solana', await createPayer({ chain: 'solana', svmKey: svm.payerSecretKey, svmRpcUrl: svm.rpcUrl, maxUsd: '5' })],
    ]);

    const jpeg = new Uint8Array(await sharp({ create: { width: 640, height: 480, channels: 3, background: '#4a7bb7' } }).jpeg({ quality: 85 }).toBuffer());
    const png = new Uint8Array(await sharp({ create: { width: 400, height: 300, channels: 4, background: '#c0503080' } }).png().toBuffer());
    const pdf2 = new Uint8Array(makePdf(textPages(2)));
    const pdf3 = new Uint8Array(makePdf(textPages(3)));
    const image = (bytes: Uint8Array, type: string) => ({ bytes, name: type === 'image/png' ? 'in.png' : 'in.jpg', type });
    const pdf = (bytes: Uint8Array) => ({ bytes, name: 'in.pdf', type: 'application/pdf' });
    const mix: Array<{ route: string; body: () => FormData }> = [
      { route: '/v1/image/resize', body: () => form([image(jpeg, 'image/jpeg')], { width: 320 }) },
      { route: '/v1/image/rotate', body: () => form([image(png, 'image/png')], { angle: 90 }) },
      { route: '/v1/image/compress', body: () => form([image(jpeg, 'image/jpeg')], { quality: 70 }) },
      { route: '/v1/pdf/extract', body: () => form([pdf(pdf3)]) },
      { route: '/v1/pdf/pages', body: () => form([pdf(pdf3)], { pages: 'z,1' }) },
      { route: '/v1/pdf/compress', body: () => form([pdf(pdf2)], { level: 'balanced' }) },
    ];

    const evmClient = createPublicClient({ transport: http(evm.rpcUrl) });
    const fromBlock = (await evmClient.getBlockNumber({ cacheTime: 0 })) + 1n;
    const balancesBefore = (await chains.ask<{ balances: ChainBalances }>({ kind: 'balances' }, 'balances')).balances;

    const t0 = performance.now();
    const now = () => Math.round(performance.now() - t0);
    const calls: Call[] = [];
    const events: Event[] = [];
    let completed = 0;
    const note = (what: string, detail?: string) => {
      events.push({ what, at: now(), completed, ...(detail ? { detail } : {}) });
      progress(`[${(now() / 1000).toFixed(1)} s, ${completed} done] ${what}${detail ? `: ${detail}` : ''}`);
    };

    // ---- the faults, each started when its share of the calls has been started -----------------
    const killed = replicas.find((r) => r.name === KILLED)!;
    const faults: Array<{ at: number; run: () => Promise<void> }> = [
      { at: Math.floor(args.requests * AT.kill), run: async () => {
        note(`SIGKILL ${KILLED}`, `pid ${killed.pid}`);
        await killed.kill();
        await sleep(RESTART_AFTER_MS);
        note(`restarting ${KILLED}`);
        await killed.start();
        note(`${KILLED} answers /v1/health again`);
      } },
      { at: Math.floor(args.requests * AT.slow), run: async () => {
        await chains.ask({ kind: 'slow', minMs: args.slowMinMs, maxMs: args.slowMaxMs }, 'slow');
        note('facilitators slowed', `each settlement delayed ${args.slowMinMs} to ${args.slowMaxMs} ms (half before the facilitator gets it, half before its answer)`);
      } },
      { at: Math.floor(args.requests * AT.redis), run: async () => {
        note('redis-server stopped (SIGTERM, no persistence)');
        await redis.down();
        await sleep(REDIS_DOWN_MS);
        await redis.up();
        note('redis-server started again, empty');
      } },
      { at: Math.floor(args.requests * AT.fast), run: async () => {
        await chains.ask({ kind: 'fast' }, 'fast');
        note('facilitators at full speed again');
      } },
    ];
    const running: Array<Promise<void>> = [];

    // ---- one call: the standard client, then the same payment again while the answer says to --
    async function paidCall(index: number): Promise<Call> {
      const { route, body } = mix[Math.floor(index / 2) % mix.length]!;
      const chain: PayChain = index % 2 === 0 ? 'base' : 'solana';
      const call: Call = { index, route, chain, answers: [], payments: [], ms: 0 };
      const started = performance.now();
      let current: Payment | undefined;
      const paymentFor = (header: string): Payment => {
        let payment = call.payments.find((p) => p.header === header);
        if (!payment) {
          const payload = decodePaymentSignatureHeader(header);
          payment = { id: paymentId(payload) ?? '?', chain, amount: BigInt(payload.accepted.amount), header, answers: [] };
          call.payments.push(payment);
        }
        return payment;
      };
      // A fetch that notes every answer (and the payment each request carried) for the reconciliation.
      const recording = (sweep?: string): typeof fetch => async (input, init) => {
        const request = new Request(input, init);
        const header = request.headers.get('payment-signature') ?? undefined;
        const payment = header ? paymentFor(header) : undefined;
        if (payment) current = payment;
        const t = performance.now();
        const answer: Answer = { at: now(), status: 0, code: 'connection', replica: sweep ?? '?', ms: 0, ...(sweep ? { sweep: true } : {}) };
        call.answers.push(answer);
        payment?.answers.push(answer);
        try {
          const res = await fetch(request);
          answer.status = res.status;
          answer.ms = Math.round(performance.now() - t);
          answer.replica = sweep ?? res.headers.get('x-replica') ?? '?';
          const retryAfter = Number(res.headers.get('retry-after'));
          if (retryAfter > 0) answer.retryAfterS = retryAfter;
          if (res.status === 200) {
            // Read here, so that a body cut off (the replica killed while sending) counts as no answer.
            const bytes = await res.arrayBuffer();
            answer.ms = Math.round(performance.now() - t);
            const receipt = res.headers.get('payment-response');
            answer.code = receipt && decodePaymentResponseHeader(receipt).success ? 'ok' : 'ok-without-receipt';
            return new Response(bytes, { status: 200, headers: res.headers });
          } else if (res.status !== 402 || header) {
            Object.assign(answer, await errorOf(res.clone()));
          } else {
            answer.code = 'quote';
          }
          return res;
        } catch (err) {
          answer.status = 0;
          answer.code = 'connection';
          answer.ms = Math.round(performance.now() - t);
          answer.message = (err as Error).message.slice(0, 160);
          throw err;
        }
      };
      for (let fresh = 0; fresh < 4; fresh++) {
        current = undefined;
        let res: Response | undefined;
        try {
          res = await wrapFetchWithPayment(recording(), payers.get(chain)!)(`${lb}${route}`, { method: 'POST', body: body() });
          await res.arrayBuffer();
        } catch { /* noted by the recording fetch */ }
        if (!current) {
          // Nothing was paid (HAProxy's error page for the quote, say): start again with a new quote.
          if (res && res.status === 200) break;
          await sleep(1000);
          continue;
        }
        // The same payment again, as long as the last answer says it may still buy the result.
        const payment: Payment = current;
        for (let retry = 0; retry < args.retries; retry++) {
          const last = payment.answers.at(-1)!;
          const again = last.code === 'connection' || last.code === 'haproxy' || RETRY_CODES.has(last.code);
          if (!again) break;
          await sleep(Math.min(last.retryAfterS ?? 1, 5) * 1000);
          try {
            const retried = await recording()(`${lb}${route}`, { method: 'POST', body: body(), headers: { 'PAYMENT-SIGNATURE': payment.header } });
            await retried.arrayBuffer();
          } catch { /* noted */ }
        }
        break;
      }
      call.ms = performance.now() - started;
      return call;
    }

    let next = 0;
    note(`load: ${args.requests} paid calls at concurrency ${args.concurrency}, ${mix.length} operations, Base and Solana alternately`);
    await Promise.all(Array.from({ length: args.concurrency }, async () => {
      while (next < args.requests) {
        const index = next++;
        for (const fault of faults) if (fault.at === index) running.push(fault.run().catch((err) => note('fault step failed', (err as Error).message)));
        calls.push(await paidCall(index));
        completed += 1;
        if (completed % 100 === 0) progress(`${completed} of ${args.requests} calls done (${(now() / 1000).toFixed(0)} s)`);
      }
    }));
    await Promise.all(running);
    const loadSeconds = now() / 1000;
    note('load finished');

    // ---- the facilitator's side and the chains' ----------------------------------------------------
    // Charged = a transfer on the chain for the payment's id: AuthorizationUsed on Base, a settlement
    // signature the Solana chain confirms.
    async function readCharges() {
      const log = await chains.ask<{ settles: SettleRecord[]; verifies: VerifyRecord[]; inFlight: number }>({ kind: 'log' }, 'log');
      const toBlock = await evmClient.getBlockNumber({ cacheTime: 0 });
      const authorizationsUsed = await evmClient.getLogs({
        address: evm.asset as `0x${string}`, event: parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)'),
        args: { authorizer: evm.payerAddress as `0x${string}` }, fromBlock, toBlock,
      });
      const evmTransfers = await evmClient.getLogs({
        address: evm.asset as `0x${string}`, event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
        args: { from: evm.payerAddress as `0x${string}`, to: evm.payTo as `0x${string}` }, fromBlock, toBlock,
      });
      const svmSettled = log.settles.filter((s) => s.network === svm.network && s.success);
      const svmLanded = await svmSignatureStatuses(svm.rpcUrl, [...new Set(svmSettled.map((s) => s.transaction))]);
      const chargedTimes = new Map<string, number>();
      for (const entry of authorizationsUsed) {
        const id = `${evm.network}:${String(entry.args.authorizer).toLowerCase()}:${String(entry.args.nonce).toLowerCase()}`;
        chargedTimes.set(id, (chargedTimes.get(id) ?? 0) + 1);
      }
      const svmSignaturesById = new Map<string, Set<string>>();
      for (const s of svmSettled) {
        if (!svmLanded.get(s.transaction)) continue;
        if (!svmSignaturesById.has(s.id)) svmSignaturesById.set(s.id, new Set());
        svmSignaturesById.get(s.id)!.add(s.transaction);
      }
      for (const [id, sigs] of svmSignaturesById) chargedTimes.set(id, sigs.size);
      return { ...log, authorizationsUsed, evmTransfers, svmSettled, svmLanded, svmSignaturesById, chargedTimes };
    }

    // ---- results still held: asked for at each replica directly ---------------------------------
    // A payment left without a result after the client's retries, whose last answer let it hope for
    // one or which the chain shows charged, is sent to each replica directly: a real client cannot do
    // this (it sees only the load balancer), but it tells a result still held from one lost.
    const beforeSweep = await readCharges();
    const undelivered = calls.flatMap((c) => c.payments
      .filter((p) => !p.answers.some((a) => a.status === 200))
      .map((p) => ({ call: c, payment: p })));
    const toSweep = undelivered.filter(({ payment }) => {
      const last = payment.answers.at(-1)!;
      return last.code === 'connection' || last.code === 'haproxy' || RETRY_CODES.has(last.code) || beforeSweep.chargedTimes.has(payment.id);
    });
    const swept: Array<{ id: string; replica: string }> = [];
    for (const { call, payment } of toSweep) {
      for (const replica of replicas) {
        const mixEntry = mix.find((m) => m.route === call.route)!;
        const answer: Answer = { at: now(), status: 0, code: 'connection', replica: replica.name, ms: 0, sweep: true };
        const t = performance.now();
        try {
          const res = await fetch(`${replica.url}${call.route}`, { method: 'POST', body: mixEntry.body(), headers: { 'PAYMENT-SIGNATURE': payment.header } });
          answer.status = res.status;
          if (res.status === 200) { answer.code = 'ok'; await res.arrayBuffer(); } else Object.assign(answer, await errorOf(res));
        } catch (err) { answer.message = (err as Error).message.slice(0, 160); }
        answer.ms = Math.round(performance.now() - t);
        payment.answers.push(answer);
        call.answers.push(answer);
        if (answer.status === 200) { swept.push({ id: payment.id, replica: replica.name }); break; }
      }
    }
    note('sweep finished', `${undelivered.length} payments without a result after the client's retries; ${toSweep.length} sent to each replica directly; ${swept.length} collected so`);

    const {
      settles, verifies, inFlight, authorizationsUsed, evmTransfers, svmSettled, svmLanded, svmSignaturesById, chargedTimes,
    } = await readCharges();
    const balancesAfter = (await chains.ask<{ balances: ChainBalances }>({ kind: 'balances' }, 'balances')).balances;

    const payments = calls.flatMap((c) => c.payments.map((p) => ({ call: c, payment: p })));
    const knownIds = new Set(payments.map(({ payment }) => payment.id));
    const delivered = (p: Payment) => p.answers.filter((a) => a.status === 200);
    const killedAt = events.find((e) => e.what.startsWith('SIGKILL'))?.at ?? Infinity;
    const restartedAt = events.find((e) => e.what.endsWith('answers /v1/health again'))?.at ?? Infinity;
    const redisRestartedAt = events.find((e) => e.what.startsWith('redis-server started again'))?.at ?? Infinity;
    // A reply cut by the SIGKILL: HAProxy's error page naming the killed replica, or a connection that broke, over the moment of the kill.
    const cutAnswer = (a: Answer) => !a.sweep && ((a.code === 'haproxy' && a.replica === KILLED && a.at + a.ms >= killedAt && a.at <= restartedAt)
      || (a.code === 'connection' && a.at <= killedAt && a.at + a.ms >= killedAt));
    const cutByKill = (p: Payment) => p.answers.some(cutAnswer);
    const heldAnswer = (p: Payment) => p.answers.find((a) => a.code === 'SETTLEMENT_UNCONFIRMED' && !/another instance/.test(a.message ?? ''));

    const rows = payments.map(({ call, payment }) => {
      const charged = chargedTimes.get(payment.id) ?? 0;
      const results = delivered(payment);
      const throughLb = results.filter((a) => !a.sweep).length;
      const held = heldAnswer(payment);
      return {
        call, payment, charged, results: results.length, throughLb, swept: results.length - throughLb, cut: cutByKill(payment),
        holder: held?.replica, heldBeforeKill: held !== undefined && held.at < killedAt,
      };
    });
    const chargedRows = rows.filter((r) => r.charged > 0);
    const settledTwice = rows.filter((r) => r.charged > 1);
    const resultsWithoutPayment = rows.filter((r) => r.results > 0 && r.charged === 0);
    const moreThanOneResult = rows.filter((r) => r.results > 1);
    const chargedNoResult = chargedRows.filter((r) => r.results === 0);
    const lastLbAnswer = (p: Payment) => [...p.answers].reverse().find((a) => !a.sweep);
    // Charged, and still held for a retry when the client stopped retrying: its last answer was the
    // documented 503 SETTLEMENT_UNCONFIRMED (the result held for up to 5 minutes).
    const heldAtGiveUp = (r: { payment: Payment; throughLb: number; charged: number }) => r.charged > 0 && r.throughLb === 0 && lastLbAnswer(r.payment)?.code === 'SETTLEMENT_UNCONFIRMED';
    // Lost to the SIGKILL: a reply cut by it with no replica holding the result afterwards, or a result held by the killed replica.
    const lostToKill = (r: { cut: boolean; holder?: string; heldBeforeKill: boolean }) =>
      (r.cut && r.holder === undefined) || (r.holder === KILLED && r.heldBeforeKill);
    // Each charged payment's fate, in this order: its result delivered through the load balancer;
    // still held when the client stopped retrying; collected afterwards by asking each replica
    // directly (the client had been told something else); lost to the SIGKILL; none of these.
    const FATES = {
      delivered: 'result delivered through the load balancer',
      held: 'result held when the client stopped retrying',
      direct: 'no result through the load balancer, collected directly afterwards',
      killed: 'lost to the SIGKILL',
      none: 'no result delivered or held',
    } as const;
    const fateOf = (r: (typeof rows)[number]): keyof typeof FATES => r.throughLb > 0 ? 'delivered'
      : heldAtGiveUp(r) ? 'held'
        : r.swept > 0 ? 'direct'
          : lostToKill(r) ? 'killed'
            : 'none';
    const chargedNoResultCut = chargedRows.filter((r) => fateOf(r) === 'killed');
    const chargedNoResultOther = chargedRows.filter((r) => fateOf(r) === 'none');
    const heldRows = chargedRows.filter((r) => fateOf(r) === 'held');
    // What the replica holding such a result answered when it was asked directly after the run.
    const heldDirect = count(heldRows, (r) => {
      const sweeps = r.payment.answers.filter((a) => a.sweep);
      const atHolder = sweeps.filter((a) => r.holder === undefined || a.replica === r.holder).at(-1) ?? sweeps.at(-1);
      return `${r.payment.chain}: ${atHolder ? `${atHolder.status} ${atHolder.code}${atHolder.status !== 200 ? ` (${(atHolder.message ?? '').replace(/;.*$/, '').slice(0, 90)})` : ''}` : 'not asked'}`;
    });
    const callsChargedTwice = calls.filter((c) => c.payments.filter((p) => (chargedTimes.get(p.id) ?? 0) > 0).length > 1);
    const unknownCharges = [...chargedTimes.keys()].filter((id) => !knownIds.has(id));

    // 402 answered to a payment that was spent on the chain (the client would be asked to pay twice).
    const spent402 = rows.flatMap((r) => r.charged > 0 ? r.payment.answers.filter((a) => a.status === 402 && !a.sweep).map((a) => ({
      id: r.payment.id, chain: r.payment.chain, replica: a.replica, atHolder: r.holder === undefined ? 'no result held' : a.replica === r.holder ? 'at the replica holding the result' : 'at a replica not holding the result',
      afterRedisRestart: a.at >= redisRestartedAt, at: a.at, code: a.code, message: (a.message ?? '').slice(0, 200),
    })) : []);
    const reasonOf = (message: string) => /duplicate_settlement/.test(message) ? 'duplicate_settlement' : /^[a-z_]+$/.test(message) ? message : message.slice(0, 60);
    const spent402Kinds = count(spent402, (a) => `${a.chain}: 402 ${a.code} (${reasonOf(a.message)}) ${a.atHolder}${a.afterRedisRestart ? ', after the Redis restart' : ''}`);
    // Every transfer on the chains accounted for.
    const reconciliation = {
      transfers: authorizationsUsed.length + svmSignaturesById.size,
      ...count(chargedRows, (r) => FATES[fateOf(r)]),
      chargedPaymentsAccountedFor: chargedRows.length,
    };
    // What a client charged without a result through the load balancer was last told there.
    const chargedNoResultTold = count(chargedRows.filter((r) => r.throughLb === 0), (r) => { const a = lastLbAnswer(r.payment); return `${r.payment.chain}: ${a ? `${a.status} ${a.code}${a.status === 402 ? ` (${reasonOf(a.message ?? '')})` : ''}` : 'nothing'}${fateOf(r) === 'killed' ? ' [lost to the SIGKILL]' : ''}`; });
    const byChain = Object.fromEntries((['base', 'solana'] as PayChain[]).map((chain) => {
      const mine = rows.filter((r) => r.payment.chain === chain);
      return [chain, {
        calls: calls.filter((c) => c.chain === chain).length, signed: mine.length, charged: mine.filter((r) => r.charged > 0).length,
        deliveredThroughLoadBalancer: mine.filter((r) => r.throughLb > 0).length,
        collectedAfterwardsFromHolder: mine.filter((r) => r.throughLb === 0 && r.swept > 0).length,
        collectedDirectlyAfterOtherAnswers: mine.filter((r) => r.charged > 0 && fateOf(r) === 'direct').length,
        chargedWithoutResultCutBySigkill: chargedNoResultCut.filter((r) => r.payment.chain === chain).length,
        chargedWithoutResultOther: chargedNoResultOther.filter((r) => r.payment.chain === chain).length,
        answered402WhileSpent: spent402.filter((a) => a.chain === chain).length,
        chargedAndHeldWhenClientGaveUp: heldRows.filter((r) => r.payment.chain === chain).length,
        held: mine.filter((r) => r.holder !== undefined).length,
        heldCollectedThroughLoadBalancer: mine.filter((r) => r.holder !== undefined && r.throughLb > 0).length,
      }];
    }));

    // Every answer through the load balancer, and its 5xx.
    const lbAnswers = calls.flatMap((c) => c.answers.filter((a) => !a.sweep));
    const fiveXx = lbAnswers.filter((a) => a.status >= 500);
    const explained5xx = (a: Answer) => (a.code !== 'haproxy' && EXPECTED_5XX.has(a.code)) || cutAnswer(a);
    const other5xx = fiveXx.filter((a) => !explained5xx(a));
    const connectionErrors = lbAnswers.filter((a) => a.code === 'connection');

    // Held results: where they were collected and after how many tries of the same payment.
    const held = rows.filter((r) => r.holder !== undefined);
    const heldStats = held.map((r) => {
      const firstHeld = r.payment.answers.findIndex((a) => a.code === 'SETTLEMENT_UNCONFIRMED' && !/another instance/.test(a.message ?? ''));
      const later = r.payment.answers.slice(firstHeld + 1).filter((a) => !a.sweep);
      const collectedAt = later.findIndex((a) => a.status === 200);
      return {
        holder: r.holder!, charged: r.charged > 0,
        collected: collectedAt >= 0, retriesToCollect: collectedAt >= 0 ? collectedAt + 1 : undefined,
        retries: later.length, retriesAtHolder: later.filter((a) => a.replica === r.holder).length,
        answersElsewhere: count(later.filter((a) => a.replica !== r.holder), (a) => `${a.status} ${a.code}`),
        swept: r.swept > 0,
      };
    });
    const retriesToCollect = heldStats.flatMap((h) => h.retriesToCollect !== undefined ? [h.retriesToCollect] : []);

    // Chains: transfers, sums and balances.
    const evmTransferred = evmTransfers.reduce((sum, log) => sum + (log.args.value ?? 0n), 0n);
    const svmTransferred = BigInt(balancesAfter.svm.payTo) - BigInt(balancesBefore.svm.payTo);
    const sumCharged = (chain: PayChain) => chargedRows
      .filter((r) => r.payment.chain === chain)
      .reduce((s, r) => s + r.payment.amount * BigInt(r.charged), 0n);
    const svmSettledDistinct = [...svmSignaturesById.values()].reduce((n, s) => n + s.size, 0);
    const chainsTally = {
      base: {
        transfers: evmTransfers.length, authorizationsUsed: authorizationsUsed.length, transferredAtomic: String(evmTransferred),
        payerPaidAtomic: String(BigInt(balancesBefore.evm.payer) - BigInt(balancesAfter.evm.payer)),
        payToReceivedAtomic: String(BigInt(balancesAfter.evm.payTo) - BigInt(balancesBefore.evm.payTo)),
        chargedPaymentsAtomic: String(sumCharged('base')),
      },
      solana: {
        transfers: svmSettledDistinct, settleAnswersSuccess: svmSettled.length,
        signaturesNotLanded: [...svmLanded.values()].filter((v) => !v).length,
        payerPaidAtomic: String(BigInt(balancesBefore.svm.payer) - BigInt(balancesAfter.svm.payer)),
        payToReceivedAtomic: String(svmTransferred),
        chargedPaymentsAtomic: String(sumCharged('solana')),
      },
    };
    const balancesAgree = BigInt(chainsTally.base.payerPaidAtomic) === evmTransferred && BigInt(chainsTally.base.payToReceivedAtomic) === evmTransferred && evmTransferred === sumCharged('base')
      && BigInt(chainsTally.solana.payerPaidAtomic) === svmTransferred && svmTransferred === sumCharged('solana') && evmTransfers.length === authorizationsUsed.length;

    // What the facilitator was asked and answered.
    const facilitator = {
      settles: settles.length,
      settlesUnheard: settles.filter((s) => !s.heard).length,
      settlesUnheardSucceeded: settles.filter((s) => !s.heard && s.success).length,
      settleAnswers: count(settles, (s) => `${s.network.split(':')[0]} ${s.success ? 'success' : s.errorReason ?? `http ${s.httpStatus}`}${s.heard ? '' : ' (replica no longer listening)'}`),
      slowed: settles.filter((s) => s.delayMs > 0).length,
      verifies: verifies.length,
      verifyRefusals: count(verifies.filter((v) => !v.isValid), (v) => `${v.network.split(':')[0]} ${v.invalidReason ?? 'invalid'}`),
      stillInFlightAtEnd: inFlight,
    };

    // Replicas' own counters (the killed replica's from its restart on), HAProxy's, and what the SIGKILL left behind.
    const metrics: Record<string, Record<string, number>> = {};
    for (const r of replicas) {
      const text = await r.metrics();
      if (text) metrics[r.name] = metricBy(text, 'paydoc_payments_total', 'stage');
    }
    const haproxyServers: HaproxyServerStats[] = await haproxy.stats();
    const haproxyBackend = await haproxy.frontendStats();
    const leftBehind = killed.killedTree.slice(1).filter(alive);
    const jobDirsLeft: Record<string, number> = {};
    for (const r of replicas) jobDirsLeft[r.name] = (await readdir(r.tmpDir).catch(() => [])).length;

    const okCalls = calls.filter((c) => c.answers.some((a) => a.status === 200));
    const latencies = okCalls.map((c) => c.ms);
    const finalOutcome = count(calls, (c) => {
      const last = [...c.answers].reverse().find((a) => !a.sweep);
      return c.answers.some((a) => a.status === 200 && !a.sweep) ? 'result delivered through the load balancer'
        : c.answers.some((a) => a.status === 200) ? 'result collected afterwards from the replica holding it'
          : `no result: last answer through the load balancer ${last ? `${last.status} ${last.code}` : 'none'}`;
    });

    const checks = {
      noPaymentSettledTwice: settledTwice.length === 0 && unknownCharges.length === 0,
      noResultWithoutPayment: resultsWithoutPayment.length === 0,
      noPaymentBoughtTwoResults: moreThanOneResult.length === 0,
      noChargeWithoutResultExceptSigkill: chargedNoResultOther.length === 0,
      noCallChargedTwice: callsChargedTwice.length === 0,
      no402ForSpentPayment: spent402.length === 0,
      noUndocumented5xx: other5xx.length === 0,
      chainsAgree: balancesAgree,
      killedReplicaLeftNothing: leftBehind.length === 0,
    };
    const sample = (list: Array<{ payment: Payment; call: Call }>) => list.slice(0, 8).map(({ payment, call }) => ({
      id: payment.id, chain: payment.chain, route: call.route, amount: String(payment.amount),
      answers: payment.answers.map((a) => `${(a.at / 1000).toFixed(1)}s ${a.sweep ? 'direct ' : ''}${a.replica} ${a.status} ${a.code}${a.message ? ` (${a.message.slice(0, 120)})` : ''}`),
      facilitator: settles.filter((s) => s.id === payment.id).map((s) => `${((s.receivedAt - (Date.now() - now())) / 1000).toFixed(1)}s ${s.success ? 'success' : s.errorReason} delay ${s.delayMs} ms${s.heard ? '' : ' unheard'}`),
    }));

    const result = {
      method: `${REPLICAS.length} replicas of the service (node dist/bin/start.js, PAYMENTS=live, WORKERS=1, REDIS_URL shared, FACILITATOR_TIMEOUT_MS=${args.facilitatorTimeoutMs}) behind HAProxy (round robin, health checks on /v1/health every 500 ms, 2 failures mark a replica down, connection failures retried on another replica); the local Base chain (anvil) and the local Solana chain (LiteSVM), each settled by x402's own facilitator code behind a proxy that slows settlements on demand. Clients: the standard @x402/fetch wrapper, one Base payer and one Solana payer, Base and Solana alternately over six operations; after a 503 SETTLEMENT_UNCONFIRMED, 409 PAYMENT_IN_PROGRESS, 503 GUARD_UNAVAILABLE or QUEUE_FULL, HAProxy's own error page or a lost connection, a client sends the identical request with the same payment again (at most ${args.retries} times, waiting Retry-After, at most 5 s; 1 s without it); a quote that failed before anything was paid is started again. Faults: SIGKILL of ${KILLED} at ${AT.kill * 100} % of the calls (started again ${RESTART_AFTER_MS / 1000} s later), settlements slowed by ${args.slowMinMs} to ${args.slowMaxMs} ms from ${AT.slow * 100} % to ${AT.fast * 100} %, redis-server restarted empty (${REDIS_DOWN_MS / 1000} s down, no persistence) at ${AT.redis * 100} %. Charged means a transfer on the chain for the payment's id: EIP-3009 AuthorizationUsed events on Base, the facilitator's settlement signatures confirmed by getSignatureStatuses on Solana; totals are checked against USDC Transfer events and balances. A payment still without a result after the client's retries is then sent to each replica directly, which no real client can do, to tell a result still held from one lost.`,
      versions: { haproxy: haproxyVersion, redis: redisVersion },
      requests: args.requests, concurrency: args.concurrency, retries: args.retries,
      seconds: round(loadSeconds, 1),
      events,
      calls: {
        total: calls.length, finalOutcome,
        latencyMsOfDelivered: {
          p50: Math.round(quantile(latencies, 0.5)), p90: Math.round(quantile(latencies, 0.9)), p99: Math.round(quantile(latencies, 0.99)),
        },
      },
      payments: {
        signed: payments.length,
        charged: chargedRows.length,
        deliveredThroughLoadBalancer: rows.filter((r) => r.throughLb > 0).length,
        chargedNotDeliveredThroughLoadBalancer: chargedRows.filter((r) => r.throughLb === 0).length,
        collectedAfterwardsFromHolder: rows.filter((r) => r.throughLb === 0 && r.swept > 0).length,
        chargedWithoutResult: chargedNoResult.length,
        collectedDirectlyAfterOtherAnswers: chargedRows.filter((r) => fateOf(r) === 'direct').length,
        chargedAndHeldWhenClientGaveUp: heldRows.length,
        ofThoseCollectedDirectly: heldRows.filter((r) => r.swept > 0).length,
        heldAskedDirectlyAfterwards: heldDirect,
        chargedWithoutResultCutBySigkill: chargedNoResultCut.length,
        chargedWithoutResultOther: chargedNoResultOther.length,
        uncharged: rows.filter((r) => r.charged === 0).length,
        unchargedFinalAnswers: count(rows.filter((r) => r.charged === 0), (r) => { const a = r.payment.answers.at(-1); return a ? `${a.status} ${a.code}` : 'none'; }),
        settledTwice: settledTwice.length,
        resultsWithoutPayment: resultsWithoutPayment.length,
        paymentsWithMoreThanOneResult: moreThanOneResult.length,
        callsChargedTwice: callsChargedTwice.length,
        chargesForUnknownPayments: unknownCharges.length,
        answered402WhileSpent: spent402.length,
        answered402WhileSpentByKind: spent402Kinds,
        chargedWithoutResultLastToldByKind: chargedNoResultTold,
        byChain,
        reconciliation,
      },
      heldResults: {
        held: held.length,
        heldAndCharged: heldStats.filter((h) => h.charged).length,
        collectedThroughLoadBalancer: heldStats.filter((h) => h.collected).length,
        notCollectedWithinRetries: heldStats.filter((h) => !h.collected).length,
        ofThoseCollectedAfterwardsFromHolder: heldStats.filter((h) => !h.collected && h.swept).length,
        retriesToCollect: {
          median: retriesToCollect.length ? quantile(retriesToCollect, 0.5) : null,
          p90: retriesToCollect.length ? quantile(retriesToCollect, 0.9) : null,
          max: retriesToCollect.length ? Math.max(...retriesToCollect) : null,
          histogram: count(retriesToCollect.map(String), (s) => s),
        },
        retries: heldStats.reduce((n, h) => n + h.retries, 0),
        retriesThatReachedHolder: heldStats.reduce((n, h) => n + h.retriesAtHolder, 0),
        answersToRetriesElsewhere: heldStats.reduce((acc, h) => {
          for (const [k, v] of Object.entries(h.answersElsewhere)) acc[k] = (acc[k] ?? 0) + v;
          return acc;
        }, {} as Record<string, number>),
        byHolder: count(heldStats, (h) => h.holder),
      },
      answers: {
        throughLoadBalancer: lbAnswers.length,
        byStatus: count(lbAnswers, (a) => `${a.status} ${a.code}`),
        fiveXx: fiveXx.length,
        fiveXxByCode: count(fiveXx, (a) => `${a.status} ${a.code}${a.code === 'haproxy' ? ` (${a.replica})` : ''}`),
        other5xx: other5xx.length,
        connectionErrors: connectionErrors.length,
        cutBySigkill: lbAnswers.filter(cutAnswer).length,
      },
      chains: chainsTally,
      facilitator,
      replicas: {
        paymentsByStage: metrics, jobDirsLeft, killedProcessTree: killed.killedTree.length, leftAliveAfterKill: leftBehind.length,
      },
      haproxy: { servers: haproxyServers, backend: haproxyBackend },
      checks,
      samples: {
        chargedWithoutResultOther: sample(chargedNoResultOther),
        chargedWithoutResultCutBySigkill: sample(chargedNoResultCut),
        answered402WhileSpent: spent402.slice(0, 8),
        resultsWithoutPayment: sample(resultsWithoutPayment),
        settledTwice: sample(settledTwice),
        other5xx: other5xx.slice(0, 8),
        heldNotCollected: sample(held.filter((r) => r.throughLb === 0)),
      },
    };
    const file = await writeResult(step, 'chaos', result, startedAt);
    progress(`${calls.length} calls in ${round(loadSeconds, 1)} s: ${JSON.stringify(finalOutcome)}`);
    progress(`payments: ${JSON.stringify(result.payments)}`);
    progress(`held results: ${JSON.stringify(result.heldResults)}`);
    progress(`5xx: ${JSON.stringify(result.answers.fiveXxByCode)}; answers ${JSON.stringify(result.answers.byStatus)}`);
    progress(`chains: ${JSON.stringify(chainsTally)}`);
    progress(`facilitator: ${JSON.stringify(facilitator)}`);
    progress(`checks: ${Object.entries(checks).map(([k, v]) => `${k} ${v ? 'ok' : 'FAILED'}`).join(', ')}`);
    progress(`written to ${file}`);
    // Short last lines: the suite's runner shows the last three of a failed step in the report.
    const failedChecks = Object.entries(checks).filter(([, ok]) => !ok).map(([k]) => k);
    progress(`${Object.keys(checks).length - failedChecks.length} of ${Object.keys(checks).length} checks met`);
    if (failedChecks.length) progress(`checks failed: ${failedChecks.join(', ')}`);
    if (!Object.values(checks).every(Boolean)) process.exitCode = 1;
  } finally {
    await haproxy?.stop().catch(() => undefined);
    await Promise.allSettled(replicas.map((r) => r.stop()));
    await redis.stop().catch(() => undefined);
    chains.child.send({ kind: 'stop' });
    await Promise.race([once(chains.child, 'exit'), sleep(10_000)]);
    if (chains.child.exitCode === null) chains.child.kill('SIGKILL');
    await rm(tmpRoot, { recursive: true, force: true });
  }
}

await main();

// Bounded load on loopback: N paid requests (default 2,000) at concurrency C (default 16) over a
// mix of small image and PDF operations, paid on the local Base chain with the standard x402
// client. It stops by itself and checks what must hold under load:
//   - no 5xx other than deliberate 503 back-pressure;
//   - settled transfers on the chain == 200 responses, and the payer paid exactly their prices;
//   - memory returns near its baseline, and no file descriptors or child processes are left over.
//   node dist/bench/load.js [--requests 2000] [--concurrency 16] [--quick]
// Writes bench/results/load.json (bench/quick/results/load.json with --quick) and exits 1 when a check fails.
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import sharp from 'sharp';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentResponseHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import { createPublicClient, http, parseAbiItem } from 'viem';
import { createPayer } from '../client/payer.js';
import { makePdf, textPages } from '../test/support/pdf-fixtures.js';
import { parseStepArgs, progress, start, writeResult } from './lib/common.js';
import { form, startBenchService } from './lib/service.js';
import { quantile, round, summarize } from './lib/stats.js';

interface Args { requests: number; concurrency: number }

function parseArgs(argv = process.argv.slice(2)): Args {
  const value = (name: string, fallback: number) => {
    const i = argv.indexOf(name);
    if (i === -1) return fallback;
    const n = Number(argv[i + 1]);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive integer`);
    return n;
  };
  return { requests: value('--requests', 2000), concurrency: value('--concurrency', 16) };
}

const MB = 1024 * 1024;
/** Memory after the run counts as back near its baseline within this much (allocators keep some pages). */
const RSS_SLACK_BYTES = 96 * MB;
const HEAP_SLACK_BYTES = 24 * MB;
const SAMPLE_EVERY_MS = 100;

/**
 * Processes whose parent is this one: the local chain, and the tools jobs start. Read
 * synchronously: under load, asynchronous reads queue behind the jobs in libuv's thread pool and
 * come back after the short-lived tools have exited.
 */
function children(): Array<{ pid: number; comm: string; rssBytes: number }> {
  const found: Array<{ pid: number; comm: string; rssBytes: number }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      if (Number(fields[1]) !== process.pid) continue;
      // rss (field 24, in pages) counted from the state field (field 3), which is fields[0].
      found.push({ pid: Number(entry), comm: stat.slice(stat.indexOf('(') + 1, close), rssBytes: Number(fields[21]) * 4096 });
    } catch { /* exited while listed */ }
  }
  return found;
}

/** What each open descriptor points at (socket:[inode], pipe:[inode], a path, anon_inode:...). */
async function openFds(): Promise<string[]> {
  const targets: string[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    try { targets.push(await readlink(`/proc/self/fd/${fd}`)); } catch { /* the directory handle itself */ }
  }
  return targets;
}

// --expose-gc on the command line would reach the worker threads too; the main thread alone needs it.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Descriptor counts by kind (socket, pipe, anon_inode:[eventfd], a path...), for telling what grew. */
function fdKinds(targets: readonly string[]): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const target of targets) {
    const kind = target.replace(/:\[\d+\]$/, '');
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

function collectGarbage(): void {
  gc();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Snapshot { rssBytes: number; heapUsedBytes: number; fds: number; fdTargets: string[]; children: string[] }

async function snapshot(): Promise<Snapshot> {
  collectGarbage();
  const memory = process.memoryUsage();
  const fdTargets = await openFds();
  return {
    rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, fds: fdTargets.length, fdTargets,
    children: children().map((c) => c.comm).sort(),
  };
}

/** Idle keep-alive sockets close after a few seconds: wait (bounded) until the counts settle. */
async function settled(baseline: Snapshot, timeoutMs = 20_000): Promise<Snapshot> {
  const until = Date.now() + timeoutMs;
  let now = await snapshot();
  const settled = () => now.fds <= baseline.fds && now.children.length <= baseline.children.length
    && now.rssBytes <= baseline.rssBytes + RSS_SLACK_BYTES;
  while (Date.now() < until && !settled()) {
    await sleep(500);
    now = await snapshot();
  }
  return now;
}

async function main(): Promise<void> {
  const args = parseArgs();
  const step = parseStepArgs();
  const startedAt = start();
  const bench = await startBenchService({ config: { workers: os.availableParallelism(), logLevel: 'warn', devChains: 'evm' } });
  const { evm, url } = bench;
  try {
    const payer = await createPayer({ chain: 'base', evmKey: evm.payerKey });
    await evm.mint(evm.payerAddress, 10_000_000_000n);

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

    interface Outcome { route: string; status: number; code: string; ms: number; paid: bigint }
    async function paidRequest(index: number): Promise<Outcome> {
      const { route, body } = mix[index % mix.length];
      const amounts: bigint[] = [];
      // The standard client over a fetch that notes what each payment it sends authorises.
      const recording: typeof fetch = async (input, init) => {
        const request = new Request(input, init);
        const header = request.headers.get('payment-signature');
        if (header) amounts.push(BigInt(decodePaymentSignatureHeader(header).accepted.amount));
        return fetch(request);
      };
      const pay = wrapFetchWithPayment(recording, payer) as typeof fetch;
      const started = performance.now();
      try {
        const res = await pay(`${url}${route}`, { method: 'POST', body: body() });
        const bytes = Buffer.from(await res.arrayBuffer());
        const ms = performance.now() - started;
        if (res.status === 200) {
          const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') ?? '');
          return { route, status: 200, code: receipt.success ? 'ok' : 'no-receipt', ms, paid: amounts.at(-1) ?? 0n };
        }
        let code = String(res.status);
        try { code = (JSON.parse(bytes.toString('utf8')) as { error: { code: string } }).error.code; } catch { /* a 402 body is the quote */ }
        return { route, status: res.status, code, ms, paid: 0n };
      } catch (err) {
        return { route, status: 0, code: `client: ${(err as Error).message.slice(0, 120)}`, ms: performance.now() - started, paid: 0n };
      }
    }

    // Warm-up at full concurrency, so modules, thread pools and lazily opened handles exist before the baseline.
    const warmUp = await Promise.all(Array.from({ length: Math.max(args.concurrency, mix.length * 2) }, (_, i) => paidRequest(i)));
    const failedWarmUp = warmUp.find((o) => o.status !== 200);
    if (failedWarmUp) throw new Error(`warm-up ${failedWarmUp.route} answered ${failedWarmUp.status} ${failedWarmUp.code}`);
    const chain = createPublicClient({ transport: http(evm.rpcUrl) });
    const fromBlock = (await chain.getBlockNumber()) + 1n;
    await sleep(6_000);
    const baseline = await snapshot();
    progress(`baseline: rss ${round(baseline.rssBytes / MB, 1)} MB, heap ${round(baseline.heapUsedBytes / MB, 1)} MB, ${baseline.fds} fds, children [${baseline.children.join(', ')}]`);

    const payerBefore = await evm.balanceOf(evm.payerAddress);
    const payToBefore = await evm.balanceOf(evm.payTo);

    let peakServiceRss = baseline.rssBytes;
    let peakToolsRss = 0;
    let peakChildren = 0;
    const sampler = setInterval(() => {
      peakServiceRss = Math.max(peakServiceRss, process.memoryUsage().rss);
      const tools = children().filter((c) => c.comm !== 'anvil');
      peakChildren = Math.max(peakChildren, tools.length);
      peakToolsRss = Math.max(peakToolsRss, tools.reduce((sum, c) => sum + c.rssBytes, 0));
    }, SAMPLE_EVERY_MS);

    const outcomes: Outcome[] = [];
    let next = 0;
    const loadStarted = performance.now();
    await Promise.all(Array.from({ length: args.concurrency }, async () => {
      while (next < args.requests) {
        const index = next++;
        outcomes.push(await paidRequest(index));
        if (outcomes.length % 250 === 0) progress(`${outcomes.length} of ${args.requests}`);
      }
    }));
    const seconds = (performance.now() - loadStarted) / 1000;
    clearInterval(sampler);

    const toBlock = await chain.getBlockNumber();
    const transfers = await chain.getLogs({
      address: evm.asset as `0x${string}`,
      event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
      args: { from: evm.payerAddress, to: evm.payTo },
      fromBlock,
      toBlock,
    });
    const payerAfter = await evm.balanceOf(evm.payerAddress);
    const payToAfter = await evm.balanceOf(evm.payTo);
    const after = await settled(baseline);

    const ok = outcomes.filter((o) => o.status === 200 && o.code === 'ok');
    const charged = ok.reduce((sum, o) => sum + o.paid, 0n);
    const transferred = transfers.reduce((sum, log) => sum + (log.args.value ?? 0n), 0n);
    const statuses: Record<string, number> = {};
    for (const o of outcomes) statuses[`${o.status} ${o.code}`] = (statuses[`${o.status} ${o.code}`] ?? 0) + 1;
    const byRoute: Record<string, { count: number; latencyMs: ReturnType<typeof summarize> }> = {};
    for (const { route } of mix) {
      const mine = outcomes.filter((o) => o.route === route && o.status === 200);
      byRoute[route] = { count: mine.length, latencyMs: summarize(mine.map((o) => o.ms)) };
    }
    const unexpected = outcomes.filter((o) => o.status !== 200 && !(o.status === 503 && o.code === 'QUEUE_FULL'));
    const latency = summarize(ok.map((o) => o.ms));
    const p99 = quantile(ok.map((o) => o.ms), 0.99);

    const checks = {
      noUnexpectedStatus: unexpected.length === 0,
      transfersEqual200s: transfers.length === ok.length,
      payerPaidExactlyThePrices: payerBefore - payerAfter === charged && payToAfter - payToBefore === charged && transferred === charged,
      memoryBackNearBaseline: after.rssBytes <= baseline.rssBytes + RSS_SLACK_BYTES
        && after.heapUsedBytes <= baseline.heapUsedBytes + HEAP_SLACK_BYTES,
      noFdLeak: after.fds <= baseline.fds,
      noChildLeak: after.children.join(',') === baseline.children.join(','),
      jobDirectoryEmpty: (await readdir(bench.service.app.config.tmpDir)).length === 0,
      poolIdle: bench.service.app.pool.busy === 0,
    };
    const result = {
      requests: args.requests,
      concurrency: args.concurrency,
      workers: bench.service.app.config.workers,
      mix: mix.map((m) => m.route),
      seconds: round(seconds, 1),
      throughputPerSecond: round(outcomes.length / seconds, 1),
      latencyMs: { p50: round(latency.median, 0), p99: round(p99, 0), summary: latency },
      statuses,
      byRoute,
      chain: {
        transfers: transfers.length, responses200: ok.length, transferredAtomic: transferred.toString(), chargedAtomic: charged.toString(),
      },
      memory: {
        baselineRssMB: round(baseline.rssBytes / MB, 1),
        peakServiceRssMB: round(peakServiceRss / MB, 1),
        peakToolsRssMB: round(peakToolsRss / MB, 1),
        peakToolProcesses: peakChildren,
        afterRssMB: round(after.rssBytes / MB, 1),
        baselineHeapMB: round(baseline.heapUsedBytes / MB, 1),
        afterHeapMB: round(after.heapUsedBytes / MB, 1),
      },
      fds: { baseline: baseline.fds, after: after.fds, byKind: { baseline: fdKinds(baseline.fdTargets), after: fdKinds(after.fdTargets) } },
      children: { baseline: baseline.children, after: after.children },
      checks,
      unexpectedSamples: unexpected.slice(0, 10),
    };
    const file = await writeResult(step, 'load', result, startedAt);
    progress(`${outcomes.length} paid requests at concurrency ${args.concurrency} in ${round(seconds, 1)} s: ${result.throughputPerSecond}/s`);
    progress(`latency p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms; statuses ${JSON.stringify(statuses)}`);
    progress(`chain: ${transfers.length} transfers for ${ok.length} responses 200; charged ${charged} atomic units`);
    progress(`memory: rss ${result.memory.baselineRssMB} -> peak ${result.memory.peakServiceRssMB} -> ${result.memory.afterRssMB} MB (tools peak ${result.memory.peakToolsRssMB} MB); fds ${baseline.fds} -> ${after.fds}; children [${after.children.join(', ')}]`);
    progress(`checks: ${Object.entries(checks).map(([k, v]) => `${k} ${v ? 'ok' : 'FAILED'}`).join(', ')}`);
    progress(`written to ${file}`);
    if (!Object.values(checks).every(Boolean)) process.exitCode = 1;
  } finally {
    await bench.stop();
  }
}

await main();

// Requests per second for the image case (a 12-megapixel JPEG resized to 1024 px WebP)
// at concurrency 1, 2 and 8: whole paid calls against the service versus raw sharp on the same
// input at the same concurrency, alternating sides batch by batch.
//   node dist/bench/throughput.js [--quick]  -> bench/results/throughput.json
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import sharp from 'sharp';
import { parseStepArgs, photoJpeg, progress, start, writeResult } from './lib/common.js';
import { form, startBenchService } from './lib/service.js';
import { ratio, summarize, type Summary } from './lib/stats.js';

const LEVELS = [1, 2, 8];
const ROUTE = '/v1/image/resize';

interface Batch { requests: number; seconds: number; perSecond: number; latencyMs: Summary; cpuMsPerCall: number; chainCpuMsPerCall: number }

/** CPU milliseconds used so far by the local chain (anvil), a child process of this one. */
function chainCpuMs(): number {
  let total = 0;
  for (const task of readdirSync('/proc/self/task')) {
    let children = '';
    try { children = readFileSync(`/proc/self/task/${task}/children`, 'utf8'); } catch { continue; }
    for (const pid of children.split(' ').filter(Boolean)) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (!stat.includes('(anvil)')) continue;
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
      } catch { /* gone */ }
    }
  }
  return total;
}

/** Runs `count` calls with `concurrency` in flight, or until maxMs has passed. */
async function batch(concurrency: number, count: number, maxMs: number, call: () => Promise<void>): Promise<Batch> {
  const latencies: number[] = [];
  let issued = 0;
  const cpuBefore = process.cpuUsage();
  const chainBefore = chainCpuMs();
  const started = performance.now();
  const loop = async () => {
    while (issued < count && performance.now() - started < maxMs) {
      issued++;
      const t = performance.now();
      await call();
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const n = latencies.length;
  return {
    requests: n, seconds: Math.round(seconds * 100) / 100, perSecond: Math.round((n / seconds) * 100) / 100, latencyMs: summarize(latencies),
    // CPU time of this process (all threads: client, service, facilitator, workers) and of the chain:
    // unlike wall time it hardly depends on what else the shared machine is doing.
    cpuMsPerCall: Math.round((cpu.user + cpu.system) / 1000 / n), chainCpuMsPerCall: Math.round((chainCpuMs() - chainBefore) / n),
  };
}

async function main(): Promise<void> {
  const args = parseStepArgs();
  const began = start();
  const rounds = args.quick ? 1 : 3;
  const maxMs = args.quick ? 12_000 : 20_000;
  const photo = await photoJpeg();
  const bench = await startBenchService();
  const service = async () => { await bench.paidCall(ROUTE, () => form([{ bytes: photo, name: 'photo.jpg', type: 'image/jpeg' }], { width: 1024, format: 'webp' })); };
  const raw = async () => { await sharp(photo, { autoOrient: true, failOn: 'error' }).resize(1024).webp({ quality: 90 }).toBuffer(); };
  const levels: Array<{ concurrency: number; service: Batch[]; raw: Batch[]; stageMsPerCall: Record<string, number>[] }> =
    LEVELS.map((concurrency) => ({ concurrency, service: [], raw: [], stageMsPerCall: [] }));
  try {
    // Warm-up: both paths once, so pool workers, libvips and the chain client are loaded.
    sharp.concurrency(1);
    await service();
    sharp.concurrency(0);
    await raw();
    for (let round = 0; round < rounds; round++) {
      for (const level of levels) {
        const count = Math.max(8, level.concurrency * 4);
        const runService = async () => {
          // In the service each pool worker runs libvips with one thread; the pool gives the parallelism.
          sharp.concurrency(1);
          bench.resetStages();
          const b = await batch(level.concurrency, count, maxMs, service);
          level.service.push(b);
          const s = bench.stages;
          level.stageMsPerCall.push({ verifyMs: s.verifyMs / b.requests, settleMs: s.settleMs / b.requests, workMs: s.workMs / b.requests });
        };
        const runRaw = async () => {
          // sharp's default in a plain program: libvips uses one thread per core for each image.
          sharp.concurrency(0);
          level.raw.push(await batch(level.concurrency, count, maxMs, raw));
        };
        if (round % 2 === 0) { await runService(); await runRaw(); } else { await runRaw(); await runService(); }
        const [sv, rw] = [level.service.at(-1)!, level.raw.at(-1)!];
        progress(`round ${round + 1}/${rounds} concurrency ${level.concurrency}: service ${sv.perSecond}/s (${sv.cpuMsPerCall}+${sv.chainCpuMsPerCall} CPU ms/call), raw sharp ${rw.perSecond}/s (${rw.cpuMsPerCall} CPU ms/call)`);
      }
    }
  } finally {
    await bench.stop();
  }
  const rows = levels.map((level) => {
    const servicePerSecond = summarize(level.service.map((b) => b.perSecond));
    const rawPerSecond = summarize(level.raw.map((b) => b.perSecond));
    const stage = (name: string) => Math.round(summarize(level.stageMsPerCall.map((s) => s[name]!)).median);
    return {
      concurrency: level.concurrency,
      servicePerSecond, rawPerSecond,
      /** service / raw at the median: 1 means the same throughput. */
      ratio: ratio(servicePerSecond.median, rawPerSecond.median),
      serviceLatencyMs: summarize(level.service.flatMap((b) => [b.latencyMs.median])),
      rawLatencyMs: summarize(level.raw.flatMap((b) => [b.latencyMs.median])),
      cpuMsPerCall: {
        service: summarize(level.service.map((b) => b.cpuMsPerCall)).median,
        chain: summarize(level.service.map((b) => b.chainCpuMsPerCall)).median,
        raw: summarize(level.raw.map((b) => b.cpuMsPerCall)).median,
      },
      serviceStageMsPerCall: { verify: stage('verifyMs'), work: stage('workMs'), settle: stage('settleMs') },
      batches: { service: level.service, raw: level.raw },
    };
  });
  const file = await writeResult(args, 'throughput', {
    method: `Paid calls with the standard @x402/fetch client (quote, sign, paid request, settlement on the local Base chain) against the service `
      + `with its default pool of ${os.availableParallelism()} workers, each running libvips with one thread; raw sharp in the benchmark `
      + 'process with its defaults (libvips threads = cores, libuv threadpool of 4) at the same number of calls in flight. Each batch is '
      + `max(8, 4 x concurrency) calls or ${maxMs / 1000} s, whichever ends first; ${rounds} round(s) after a warm-up, sides alternating. `
      + 'The client (signing) shares the machine with the service, as it does with raw sharp.',
    input: '12 MP JPEG (4032x3024) to 1024 px wide WebP, quality 90',
    levels: rows,
  }, began);
  progress(`wrote ${file}`);
}

await main();

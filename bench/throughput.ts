// Requests per second for the image case (a 12-megapixel JPEG resized to 1024 px WebP)
// at concurrency 1, 2 and 8: whole paid calls against the service versus raw sharp on the same
// input at the same concurrency, alternating sides batch by batch.
//
// The parties run as they do when deployed, each in its own process on this one machine: the
// service (this process, PAYMENTS=live), the facilitator with its local chain (a child process,
// as the facilitator is another party's server), and the paying clients (a child process running
// the standard @x402/fetch client). CPU time is counted per party, so the report can say what the
// service itself costs per call next to what the clients and the payment infrastructure cost.
//   node dist/bench/throughput.js [--quick]  -> bench/results/throughput.json
import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createServer } from '../server/index.js';
import { parseStepArgs, photoJpeg, progress, ROOT, start, writeResult } from './lib/common.js';
import { timeMethod } from './lib/service.js';
import { ratio, round, summarize, type Summary } from './lib/stats.js';
import type { PaymentProcessReady } from './lib/payment-process.js';
import type { BatchAnswer, BatchRequest, ClientSetup } from './lib/client-process.js';

const LEVELS = [1, 2, 8];
const ROUTE = '/v1/image/resize';

interface Batch {
  requests: number; seconds: number; perSecond: number; latencyMs: Summary;
  /** CPU milliseconds per call of each party (raw batches: only `service`, which is then raw sharp). */
  cpuMsPerCall: { service: number; clients: number; payments: number };
  /** Service batches: where the service process's CPU went, per call, by thread. */
  serviceThreadsMsPerCall?: ThreadCpu;
}

/**
 * This process's CPU split by thread: the main thread (both uploads, the checks, the facilitator
 * calls, the response) and all the others (the image work, which libvips and sharp spread over
 * their own and libuv's threads, the pool's JavaScript, V8's helpers).
 */
interface ThreadCpu { mainThread: number; otherThreads: number }

function threadCpuMs(): ThreadCpu {
  const split: ThreadCpu = { mainThread: 0, otherThreads: 0 };
  for (const task of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
      if (Number(task) === process.pid) split.mainThread += ms;
      else split.otherThreads += ms;
    } catch { /* the thread ended */ }
  }
  return split;
}

/** CPU milliseconds used so far by a process and all its descendants (the facilitator and its anvil). */
function treeCpuMs(pid: number): number {
  let total = 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) total += treeCpuMs(Number(child));
    }
  } catch { /* gone */ }
  return total;
}

function nextMessage<T>(child: ChildProcess, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { kind?: string }) => {
      if (message.kind !== kind) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as T);
    };
    const onExit = (code: number | null) => reject(new Error(`${path.basename(String(child.spawnargs.at(-1)))} exited (${code}) before "${kind}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

function perCall(total: number, requests: number): number {
  return requests ? round(total / requests, 1) : 0;
}

async function main(): Promise<void> {
  const args = parseStepArgs();
  const began = start();
  const rounds = args.quick ? 1 : 3;
  const maxMs = args.quick ? 12_000 : 20_000;
  const photo = await photoJpeg();
  const scratch = await mkdtemp(path.join('/dev/shm', 'paydoc-bench-throughput-'));
  const photoFile = path.join(scratch, 'photo.jpg');
  await writeFile(photoFile, photo);

  const payments = fork(path.join(ROOT, 'dist/bench/lib/payment-process.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const clients = fork(path.join(ROOT, 'dist/bench/lib/client-process.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  let service: Awaited<ReturnType<typeof createServer>> | undefined;
  const levels = LEVELS.map((concurrency) => ({
    concurrency, service: [] as Batch[], raw: [] as Batch[], stageMsPerCall: [] as Record<string, number>[],
  }));
  try {
    const rig = await nextMessage<PaymentProcessReady>(payments, 'ready');
    service = await createServer({
      config: { port: 0, host: '127.0.0.1', tmpDir: path.join(scratch, 'jobs'), logLevel: 'warn', payments: 'live', evmFacilitatorUrl: rig.facilitatorUrl, evmPayTo: rig.payTo },
      env: {},
    });
    await service.server.start();
    const url = service.server.info.uri.replace('localhost', '127.0.0.1');
    service.app.config.baseUrl = url;
    // The gate's resource server is private; the bench reaches it only to time its two facilitator calls.
    const stages = { verifyMs: 0, settleMs: 0, workMs: 0 };
    const resourceServer = (service.app.gate as unknown as { server: Record<string, unknown> }).server;
    timeMethod(resourceServer, 'verifyPayment', (ms) => { stages.verifyMs += ms; });
    timeMethod(resourceServer, 'settlePayment', (ms) => { stages.settleMs += ms; });
    timeMethod(service.app.pool as unknown as Record<string, unknown>, 'run', (ms) => { stages.workMs += ms; });

    const setup: ClientSetup = { kind: 'setup', url: `${url}${ROUTE}`, payerKey: rig.payerKey, file: photoFile, fileType: 'image/jpeg', fields: { width: '1024', format: 'webp' } };
    clients.send(setup);
    await nextMessage(clients, 'setup');

    const serviceBatch = async (concurrency: number, count: number): Promise<Batch> => {
      const cpuBefore = process.cpuUsage();
      const threadsBefore = threadCpuMs();
      const paymentsBefore = treeCpuMs(payments.pid!);
      const request: BatchRequest = { kind: 'batch', concurrency, count, maxMs };
      clients.send(request);
      const answer = await nextMessage<BatchAnswer>(clients, 'batch');
      if (answer.failures.length) throw new Error(`paid calls failed: ${answer.failures.slice(0, 3).join('; ')}`);
      const cpu = process.cpuUsage(cpuBefore);
      const threads = threadCpuMs();
      const n = answer.latenciesMs.length;
      return {
        serviceThreadsMsPerCall: {
          mainThread: perCall(threads.mainThread - threadsBefore.mainThread, n),
          otherThreads: perCall(threads.otherThreads - threadsBefore.otherThreads, n),
        },
        requests: n, seconds: round(answer.seconds), perSecond: round(n / answer.seconds), latencyMs: summarize(answer.latenciesMs),
        cpuMsPerCall: {
          service: perCall((cpu.user + cpu.system) / 1000, n), clients: perCall(answer.cpuMs, n),
          payments: perCall(treeCpuMs(payments.pid!) - paymentsBefore, n),
        },
      };
    };
    const rawBatch = async (concurrency: number, count: number): Promise<Batch> => {
      const latencies: number[] = [];
      let issued = 0;
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (issued < count && performance.now() - started < maxMs) {
          issued++;
          const t = performance.now();
          await sharp(photo, { autoOrient: true, failOn: 'error' }).resize(1024).webp({ quality: 90 }).toBuffer();
          latencies.push(performance.now() - t);
        }
      }));
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      return {
        requests: latencies.length, seconds: round(seconds), perSecond: round(latencies.length / seconds), latencyMs: summarize(latencies),
        cpuMsPerCall: { service: perCall((cpu.user + cpu.system) / 1000, latencies.length), clients: 0, payments: 0 },
      };
    };

    // Warm-up: both paths, so pool workers, libvips and the chain clients are loaded.
    sharp.concurrency(1);
    await serviceBatch(1, 2);
    sharp.concurrency(0);
    await rawBatch(1, 2);
    for (let pass = 0; pass < rounds; pass++) {
      for (const level of levels) {
        const count = Math.max(8, level.concurrency * 4);
        const runService = async () => {
          // libvips's thread count is one setting for the whole process, shared by the pool's
          // workers: put back the service's one thread per pipeline after a raw batch.
          sharp.concurrency(1);
          Object.assign(stages, { verifyMs: 0, settleMs: 0, workMs: 0 });
          const b = await serviceBatch(level.concurrency, count);
          level.service.push(b);
          const { verifyMs, settleMs, workMs } = stages;
          level.stageMsPerCall.push({ verifyMs: verifyMs / b.requests, settleMs: settleMs / b.requests, workMs: workMs / b.requests });
        };
        // sharp's default in a plain program: libvips uses one thread per core for each image.
        const runRaw = async () => { sharp.concurrency(0); level.raw.push(await rawBatch(level.concurrency, count)); };
        if (pass % 2 === 0) { await runService(); await runRaw(); } else { await runRaw(); await runService(); }
        const [sv, rw] = [level.service.at(-1)!, level.raw.at(-1)!];
        const c = sv.cpuMsPerCall;
        const th = sv.serviceThreadsMsPerCall!;
        progress(`round ${pass + 1}/${rounds} concurrency ${level.concurrency}: service ${sv.perSecond}/s (CPU ms/call: service ${c.service} [main thread ${th.mainThread}, other threads ${th.otherThreads}], clients ${c.clients}, facilitator+chain ${c.payments}), raw sharp ${rw.perSecond}/s (${rw.cpuMsPerCall.service} CPU ms/call)`);
      }
    }
  } finally {
    clients.send({ kind: 'stop' });
    payments.send({ kind: 'stop' });
    await service?.stop();
    await Promise.all([payments, clients].map((child) => (child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve)))));
    await rm(scratch, { recursive: true, force: true });
  }
  const median = (batches: Batch[], pick: (b: Batch) => number) => summarize(batches.map(pick)).median;
  const rows = levels.map((level) => {
    const servicePerSecond = summarize(level.service.map((b) => b.perSecond));
    const rawPerSecond = summarize(level.raw.map((b) => b.perSecond));
    const stage = (name: string) => Math.round(summarize(level.stageMsPerCall.map((s) => s[name]!)).median);
    const cpu = {
      service: median(level.service, (b) => b.cpuMsPerCall.service),
      clients: median(level.service, (b) => b.cpuMsPerCall.clients),
      payments: median(level.service, (b) => b.cpuMsPerCall.payments),
      raw: median(level.raw, (b) => b.cpuMsPerCall.service),
    };
    return {
      concurrency: level.concurrency,
      servicePerSecond, rawPerSecond,
      /** service / raw at the median: 1 means the same throughput. */
      ratio: ratio(servicePerSecond.median, rawPerSecond.median),
      serviceLatencyMs: summarize(level.service.map((b) => b.latencyMs.median)),
      rawLatencyMs: summarize(level.raw.map((b) => b.latencyMs.median)),
      cpuMsPerCall: cpu,
      /** CPU of the service process per call over raw sharp's: what the service itself adds, whoever else shares the machine. */
      serviceCpuRatio: ratio(cpu.service, cpu.raw),
      /** The service process's CPU per call by thread (clock-tick resolution, summed over the batch). */
      serviceThreadsMsPerCall: {
        mainThread: median(level.service, (b) => b.serviceThreadsMsPerCall!.mainThread),
        otherThreads: median(level.service, (b) => b.serviceThreadsMsPerCall!.otherThreads),
      },
      serviceStageMsPerCall: { verify: stage('verifyMs'), work: stage('workMs'), settle: stage('settleMs') },
      batches: { service: level.service, raw: level.raw },
    };
  });
  const file = await writeResult(args, 'throughput', {
    method: 'Three processes on one machine, as when deployed: the service (PAYMENTS=live, its default pool of '
      + `${os.availableParallelism()} workers, each running libvips with one thread), the facilitator with the local Base chain (anvil) `
      + 'in a child process, and the paying clients (the standard @x402/fetch client: upload, 402, sign, paid retry, download) in '
      + 'another. Raw sharp runs in the benchmark process with its defaults (libvips threads = cores, libuv threadpool of 4) at the '
      + `same number of calls in flight. Each batch is max(8, 4 x concurrency) calls or ${maxMs / 1000} s, whichever ends first; `
      + `${rounds} round(s) after a warm-up, sides alternating. cpuMsPerCall splits the CPU time per paid call by party `
      + '(service process, clients, facilitator + chain); serviceCpuRatio is the service process\'s CPU per call over raw sharp\'s.',
    input: '12 MP JPEG (4032x3024) to 1024 px wide WebP, quality 90',
    levels: rows,
  }, began);
  progress(`wrote ${file}`);
}

await main();

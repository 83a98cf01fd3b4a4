// Peak memory of the whole service under eight concurrent 50 MB uploads. The service runs as its
// own process (`node dist/bin/start.js`, PAYMENTS=dev with the local Base chain), and this
// process samples /proc for it and its tool subprocesses (qpdf, gs, ...) every 25 ms. The local
// chain (anvil) is a development stand-in for Base, so it is reported apart from the service.
//   node dist/bench/memory.js [--quick]  -> bench/results/memory.json
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPayer } from '../client/payer.js';
import { makePdf } from '../test/support/pdf-fixtures.js';
import { ROOT, parseStepArgs, progress, start, writeResult } from './lib/common.js';
import { form } from './lib/service.js';

const TARGET_BYTES = 1.5 * 2 ** 30;
const CONCURRENT = 8;
const SAMPLE_MS = 25;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

function commandOf(pid: number): string {
  try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { return ''; }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try { tasks = readdirSync(`/proc/${pid}/task`); } catch { return out; }
  for (const task of tasks) {
    try {
      out.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    } catch { /* the thread ended */ }
  }
  return out;
}

interface Sample { serviceKb: number; toolsKb: number; chainKb: number }

/** The service's own RSS, the sum over its tool subprocesses, and the chain's RSS, right now. */
function sample(pid: number): Sample {
  let toolsKb = 0, chainKb = 0;
  const walk = (parent: number) => {
    for (const child of childrenOf(parent)) {
      const rss = statusKb(child, 'VmRSS');
      if (commandOf(child) === 'anvil') chainKb += rss;
      else toolsKb += rss;
      walk(child);
    }
  };
  walk(pid);
  return { serviceKb: statusKb(pid, 'VmRSS'), toolsKb, chainKb };
}

class Sampler {
  peakTotalKb = 0;
  peakServiceKb = 0;
  peakToolsKb = 0;
  peakChainKb = 0;
  private timer: NodeJS.Timeout | undefined;
  constructor(private readonly pid: number) {}
  begin(): void {
    this.peakTotalKb = this.peakServiceKb = this.peakToolsKb = 0;
    this.timer = setInterval(() => {
      const s = sample(this.pid);
      this.peakTotalKb = Math.max(this.peakTotalKb, s.serviceKb + s.toolsKb);
      this.peakServiceKb = Math.max(this.peakServiceKb, s.serviceKb);
      this.peakToolsKb = Math.max(this.peakToolsKb, s.toolsKb);
      this.peakChainKb = Math.max(this.peakChainKb, s.chainKb);
    }, SAMPLE_MS);
  }
  end() {
    clearInterval(this.timer);
    const mb = (kb: number) => Math.round(kb / 1024);
    return {
      peakServicePlusToolsMB: mb(this.peakTotalKb), peakServiceProcessMB: mb(this.peakServiceKb), peakToolsMB: mb(this.peakToolsKb),
    };
  }
}

/** A 6-page PDF of about 50 MB: full-page greyscale JPEGs of noise, which no step can shrink. */
async function fiftyMegabytePdf(): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 3000, height: 2700, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 70 } } })
    .toColourspace('b-w').jpeg({ quality: 100 }).toBuffer();
  return makePdf(Array.from({ length: 6 }, () => ({ jpeg: { bytes: jpeg, width: 3000, height: 2700 } })));
}

async function main(): Promise<void> {
  const args = parseStepArgs();
  const began = start();
  const pdf = await fiftyMegabytePdf();
  const port = await freePort();
  const tmpDir = await mkdtemp(path.join('/dev/shm', 'paydoc-bench-mem-'));
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/bin/start.js')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', PORT: String(port), HOST: '127.0.0.1', PAYMENTS: 'dev', DEV_CHAINS: 'evm', TMP_DIR: tmpDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => { output += String(d); });
  child.stderr.on('data', (d) => { output += String(d); });
  const url = `http://127.0.0.1:${port}`;
  const phases: Record<string, unknown>[] = [];
  try {
    const deadline = Date.now() + 90_000;
    let payerKey: string | undefined;
    while (!payerKey) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the service did not start: ${output.slice(-500)}`);
      payerKey = /its key \(dev only\): (0x[0-9a-fA-F]{64})/.exec(output)?.[1];
      await new Promise((r) => setTimeout(r, 200));
    }
    const health = await fetch(`${url}/v1/health`);
    if (health.status !== 200) throw new Error(`health answered ${health.status}`);
    const idle = sample(child.pid!);
    const pay = wrapFetchWithPayment(fetch, await createPayer({ chain: 'base', evmKey: payerKey }));
    const sampler = new Sampler(child.pid!);
    const body = () => form([{ bytes: pdf, name: 'big.pdf', type: 'application/pdf' }], { rotate: 90 });

    const phase = async (name: string, description: string, call: () => Promise<Response>, expected: number) => {
      const errors: string[] = [];
      sampler.begin();
      const started = performance.now();
      const statuses = await Promise.all(Array.from({ length: CONCURRENT }, async () => {
        try {
          const res = await call();
          const answer = Buffer.from(await res.arrayBuffer());
          if (res.status !== expected) errors.push(`${res.status}: ${answer.subarray(0, 200).toString('utf8')}`);
          return res.status;
        } catch (err) {
          errors.push(String((err as { cause?: unknown }).cause ?? err).slice(0, 200));
          return 0;
        }
      }));
      const seconds = Math.round((performance.now() - started) / 100) / 10;
      const peaks = sampler.end();
      const ok = statuses.filter((s) => s === expected).length;
      phases.push({ name, description, concurrent: CONCURRENT, uploadBytes: pdf.length, answered: `${ok}/${CONCURRENT} with ${expected}`, statuses, errors: [...new Set(errors)], seconds, ...peaks });
      progress(`${name}: ${ok}/${CONCURRENT} answered ${expected} in ${seconds} s${errors.length ? ` (others: ${[...new Set(errors)].join('; ')})` : ''}; peak service + tools ${peaks.peakServicePlusToolsMB} MB (service process ${peaks.peakServiceProcessMB} MB, tools ${peaks.peakToolsMB} MB)`);
    };
    await phase('quotes', 'eight unpaid POST /v1/pdf/pages at once: upload, PDF checks (qpdf), 402 quote',
      () => fetch(`${url}/v1/pdf/pages`, { method: 'POST', body: body() }), 402);
    // The paid phase takes minutes on a loaded 2-core machine; the quick run keeps to the quotes.
    if (!args.quick) {
      await phase('paid', 'eight paid POST /v1/pdf/pages rotate=90 at once (each uploads twice: quote, then paid), qpdf rewrites 50 MB, 50 MB answers',
        () => pay(`${url}/v1/pdf/pages`, { method: 'POST', body: body() }), 200);
    }
    const peakTotal = Math.max(...phases.map((p) => p.peakServicePlusToolsMB as number));
    const hwm = Math.round(statusKb(child.pid!, 'VmHWM') / 1024);
    const file = await writeResult(args, 'memory', {
      method: `The service runs as its own process (node dist/bin/start.js, PAYMENTS=dev, DEV_CHAINS=evm, default workers and queue). `
        + `Every ${SAMPLE_MS} ms this benchmark adds the resident set (VmRSS) of the service process and of all its subprocesses `
        + '(the tool launchers and the qpdf, mutool, gs, ... they start) except the local chain (anvil), which stands in for Base and is reported apart. VmHWM is the kernel\'s '
        + 'own peak for the service process alone. Each upload is a 6-page PDF of full-page noise JPEGs.',
      uploadBytes: pdf.length,
      targetMB: TARGET_BYTES / 2 ** 20,
      peakServicePlusToolsMB: peakTotal,
      serviceProcessVmHWMMB: hwm,
      chainPeakMB: Math.round(sampler.peakChainKb / 1024),
      idle: { serviceMB: Math.round(idle.serviceKb / 1024), chainMB: Math.round(idle.chainKb / 1024) },
      withinTarget: peakTotal * 2 ** 20 < TARGET_BYTES,
      phases,
      // What the service printed about failed requests (warnings and errors only), for diagnosis.
      ...(phases.some((p) => (p.errors as string[]).length) ? { serviceLogTail: output.split('\n').filter((l) => !l.includes('dev only')).slice(-20) } : {}),
    }, began);
    progress(`peak ${peakTotal} MB for service + tools (target < ${TARGET_BYTES / 2 ** 20} MB); service VmHWM ${hwm} MB; wrote ${file}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => { if (child.exitCode !== null) resolve(undefined); else child.once('exit', resolve); setTimeout(resolve, 20_000); });
    if (child.exitCode === null) child.kill('SIGKILL');
    await rm(tmpDir, { recursive: true, force: true });
  }
}

await main();

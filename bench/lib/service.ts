// The real service for the benchmarks: createServer() on loopback with the local Base chain and
// its facilitator (PAYMENTS=dev), paid with the standard x402 fetch client. The payment gate's
// facilitator calls and the worker pool are timed from inside, so each paid call can be split
// into quote, verify, work and settle without changing what the service does.
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { x402Client } from '@x402/core/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createServer, type Service } from '../../server/index.js';
import type { Config } from '../../server/config.js';
import { startEvmRig, startSvmRig, type EvmRig, type EvmRigOptions, type SvmRig } from '../../devchains/index.js';
import { createPayer, type PayChain } from '../../client/payer.js';

/** Milliseconds spent in each stage, summed over the calls since the last reset. */
export interface StageTimes {
  verifyMs: number;
  settleMs: number;
  workMs: number;
}

export interface PaidResult {
  status: number;
  body: Uint8Array;
  mediaType: string;
  /**
   * Request with the unpaid quote (upload, checks, 402), signing, and the paid request (upload, checks, verify,
   * work, settle, download).
   */
  quoteMs: number;
  signMs: number;
  paidMs: number;
  verifyMs: number;
  settleMs: number;
  workMs: number;
}

export interface BenchService {
  service: Service;
  url: string;
  evm: EvmRig;
  svm?: SvmRig;
  /** One paid call with the standard client: 402, sign, paid retry. Throws unless the answer is 200. */
  paidCall(route: string, body: () => FormData, chain?: PayChain): Promise<PaidResult>;
  /** The same with another x402 client (another scheme, another payer). */
  paidCallWith(client: x402Client, route: string, body: () => FormData): Promise<PaidResult>;
  /** Stage times summed over every call since the last reset (for concurrent runs). */
  stages: StageTimes;
  resetStages(): void;
  /** Stops the service alone (a channel service claims and sweeps what it is owed), leaving the chain up to be read. */
  stopService(): Promise<void>;
  stop(): Promise<void>;
}

export interface BenchServiceOptions {
  config?: Partial<Config>;
  solana?: boolean;
  /** The local Base chain's options (a block time, the facilitator's receipt polling). */
  evm?: EvmRigOptions;
}

type AnyAsync = (...args: any[]) => Promise<any>;

/** Wraps obj[name] so that its time is added to a counter; the object keeps working as before. */
export function timeMethod(obj: Record<string, unknown>, name: string, add: (ms: number) => void): void {
  const original = obj[name] as AnyAsync;
  obj[name] = async (...args: unknown[]) => {
    const started = performance.now();
    try {
      return await original.apply(obj, args);
    } finally {
      add(performance.now() - started);
    }
  };
}

export async function startBenchService(options: BenchServiceOptions = {}): Promise<BenchService> {
  const evm = await startEvmRig(options.evm);
  const svm = options.solana ? await startSvmRig() : undefined;
  const tmpDir = await mkdtemp(path.join('/dev/shm', 'paydoc-bench-'));
  const service = await createServer({
    config: { port: 0, host: '127.0.0.1', tmpDir, logLevel: 'warn', payments: 'dev', ...options.config },
    env: {},
    rigs: { evm, ...(svm ? { svm } : {}) },
  });
  await service.server.start();
  const url = service.server.info.uri.replace('localhost', '127.0.0.1');
  service.app.config.baseUrl = url;

  const stages: StageTimes = { verifyMs: 0, settleMs: 0, workMs: 0 };
  // The gate's resource server is private; the bench reaches it only to time its two facilitator calls.
  const resourceServer = (service.app.gate as unknown as { server: Record<string, unknown> }).server;
  timeMethod(resourceServer, 'verifyPayment', (ms) => { stages.verifyMs += ms; });
  timeMethod(resourceServer, 'settlePayment', (ms) => { stages.settleMs += ms; });
  timeMethod(service.app.pool as unknown as Record<string, unknown>, 'run', (ms) => { stages.workMs += ms; });

  const payers = new Map<PayChain, Awaited<ReturnType<typeof createPayer>>>();
  payers.set('base', await createPayer({ chain: 'base', evmKey: evm.payerKey, maxUsd: '20' }));
  if (svm) payers.set('solana', await createPayer({ chain: 'solana', svmKey: svm.payerSecretKey, svmRpcUrl: svm.rpcUrl, maxUsd: '20' }));

  let serviceStopped: Promise<void> | undefined;
  const stopService = () => { serviceStopped ??= service.stop(); return serviceStopped; };
  const paidCallWith = async (client: x402Client, route: string, body: () => FormData): Promise<PaidResult> => {
    const marks: number[] = [];
    const timedFetch: typeof fetch = async (input, init) => {
      marks.push(performance.now());
      const res = await fetch(input, init);
      marks.push(performance.now());
      return res;
    };
    const before = { ...stages };
    const pay = wrapFetchWithPayment(timedFetch, client);
    const res = await pay(`${url}${route}`, { method: 'POST', body: body() });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const done = performance.now();
    if (res.status !== 200) {
      // The time tells a deadline that passed (a stall) from an answer that came at once.
      const text = Buffer.from(bytes.subarray(0, 300)).toString('utf8');
      throw new Error(`${route} answered ${res.status} ${Math.round(done - marks[0]!)} ms after the first request: ${text}`);
    }
    if (marks.length !== 4) throw new Error(`${route}: expected a quote and one paid request, saw ${marks.length / 2} requests`);
    return {
      status: res.status, body: bytes, mediaType: res.headers.get('content-type') ?? '',
      quoteMs: marks[1]! - marks[0]!, signMs: marks[2]! - marks[1]!, paidMs: done - marks[2]!,
      verifyMs: stages.verifyMs - before.verifyMs, settleMs: stages.settleMs - before.settleMs, workMs: stages.workMs - before.workMs,
    };
  };

  return {
    service, url, evm, svm, stages, paidCallWith, stopService,
    resetStages() { stages.verifyMs = 0; stages.settleMs = 0; stages.workMs = 0; },
    paidCall: (route, body, chain = 'base') => paidCallWith(payers.get(chain)!, route, body),
    async stop() {
      await stopService();
      await evm.stop();
      await svm?.stop();
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}

/** A multipart body as a browser or curl sends it. */
export function form(
  files: Array<{ bytes: Uint8Array; name: string; type: string }>, fields: Record<string, string | number> = {},
): FormData {
  const body = new FormData();
  for (const f of files) body.append('file', new Blob([f.bytes as Uint8Array<ArrayBuffer>], { type: f.type }), f.name);
  for (const [k, v] of Object.entries(fields)) body.append(k, String(v));
  return body;
}

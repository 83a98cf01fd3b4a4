// Starts the real service for a test file: real HTTP on loopback, the real worker pool, and a
// local Base chain (plus Solana when asked) with the real x402 facilitator code.
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { wrapFetchWithPayment } from '@x402/fetch';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { createServer, type Service } from '../../server/index.js';
import type { Config } from '../../server/config.js';
import { startEvmRig, startSvmRig, type DevRigs, type EvmRig, type SvmRig } from '../../devchains/index.js';
import { createPayer } from '../../client/payer.js';
import { leftoverJobDirs } from '../../server/jobdir.js';

export interface TestService {
  service: Service;
  url: string;
  rigs: DevRigs;
  evm: EvmRig;
  svm?: SvmRig;
  /** Every log line the service wrote. */
  logs: string[];
  tmpDir: string;
  /** The standard x402 fetch client paying on the chain, wrapping `base` (the global fetch unless given). */
  payFetch(chain?: 'base' | 'solana', base?: typeof fetch): Promise<typeof fetch>;
  jobDirsLeft(): Promise<string[]>;
  /** A counter value from /metrics, e.g. metric('paydoc_jobs_total', { outcome: 'started' }). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

export interface TestServiceOptions {
  config?: Partial<Config>;
  solana?: boolean;
  rigs?: { evm: EvmRig; svm?: SvmRig };
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const evm = options.rigs?.evm ?? await startEvmRig();
  const svm = options.rigs?.svm ?? (options.solana ? await startSvmRig() : undefined);
  const ownRigs = !options.rigs;
  const rigs: DevRigs = { evm, ...(svm ? { svm } : {}) };
  const tmpDir = await mkdtemp(path.join('/dev/shm', 'paydoc-test-'));
  const logs: string[] = [];
  const sink = new Writable({ write(chunk, _enc, done) { logs.push(...String(chunk).split('\n').filter(Boolean)); done(); } });
  const service = await createServer({
    config: { port: 0, host: '127.0.0.1', workers: 2, tmpDir, logLevel: 'info', payments: 'dev', ...options.config },
    env: {},
    rigs,
    logDestination: sink,
  });
  await service.server.start();
  const url = service.server.info.uri.replace('localhost', '127.0.0.1');
  service.app.config.baseUrl = url;
  return {
    service, url, rigs, evm, svm, logs, tmpDir,
    async payFetch(chain = 'base', base: typeof fetch = fetch) {
      const payer = await createPayer(chain === 'base'
        ? { chain, evmKey: evm.payerKey }
        : { chain, svmKey: svm!.payerSecretKey, svmRpcUrl: svm!.rpcUrl });
      return wrapFetchWithPayment(base, payer) as typeof fetch;
    },
    jobDirsLeft: () => leftoverJobDirs(tmpDir),
    async metric(name, labels = {}) {
      const text = await service.app.metrics.registry.metrics();
      let sum = 0;
      for (const line of text.split('\n')) {
        if (!line.startsWith(name)) continue;
        const m = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
        if (!m || m[1] !== name) continue;
        const have = Object.fromEntries((m[2] ?? '').split(',').filter(Boolean).map((kv) => { const [k, v] = kv.split('='); return [k, v.replace(/"/g, '')]; }));
        if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
      }
      return sum;
    },
    async stop() {
      await service.stop();
      if (ownRigs) { await evm.stop(); await svm?.stop(); }
      // The job root itself (each test asserts it is empty while the service runs).
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}

/** A multipart body from files and fields, as a browser or curl would send it. */
export function form(
  files: Array<Uint8Array | { bytes: Uint8Array; name?: string; type?: string }>, fields: Record<string, string | number> = {},
): FormData {
  const body = new FormData();
  for (const f of files) {
    const item = f instanceof Uint8Array ? { bytes: f } : f;
    body.append('file', new Blob([item.bytes as Uint8Array<ArrayBuffer>], item.type ? { type: item.type } : {}), item.name ?? 'upload.bin');
  }
  for (const [k, v] of Object.entries(fields)) body.append(k, String(v));
  return body;
}

/** Signs a quote's Base offer with the standard x402 client, as a paying client would. */
export async function signOnBase(pr: PaymentRequired, key: string): Promise<PaymentPayload> {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(key as `0x${string}`) });
  return client.createPaymentPayload({ ...pr, accepts: pr.accepts.filter((a) => a.network === 'eip155:8453') });
}

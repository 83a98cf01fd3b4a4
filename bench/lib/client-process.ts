// Paying clients in a process of their own, as users' programs are: the standard @x402/fetch
// client uploads a file, receives the 402, signs, retries with the payment and reads the
// result. The throughput benchmark forks this once and asks it for batches over IPC; each answer
// carries the latencies and this process's CPU time, so the client's share can be told apart.
import { readFile } from 'node:fs/promises';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPayer } from '../../client/payer.js';

export interface ClientSetup { kind: 'setup'; url: string; payerKey: string; file: string; fileType: string; fields: Record<string, string> }
export interface BatchRequest { kind: 'batch'; concurrency: number; count: number; maxMs: number }
export interface BatchAnswer { kind: 'batch'; latenciesMs: number[]; seconds: number; cpuMs: number; failures: string[] }

let call: (() => Promise<void>) | undefined;

process.on('message', async (message: ClientSetup | BatchRequest | { kind: 'stop' }) => {
  if (message.kind === 'stop') process.exit(0);
  if (message.kind === 'setup') {
    const bytes = await readFile(message.file);
    const pay = wrapFetchWithPayment(fetch, await createPayer({ chain: 'base', evmKey: message.payerKey }));
    call = async () => {
      const body = new FormData();
      body.append('file', new Blob([bytes], { type: message.fileType }), 'upload');
      for (const [name, value] of Object.entries(message.fields)) body.append(name, value);
      const res = await pay(message.url, { method: 'POST', body });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`answered ${res.status}`);
    };
    process.send!({ kind: 'setup' });
    return;
  }
  const latenciesMs: number[] = [];
  const failures: string[] = [];
  let issued = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: message.concurrency }, async () => {
    while (issued < message.count && performance.now() - started < message.maxMs) {
      issued++;
      const t = performance.now();
      try {
        await call!();
        latenciesMs.push(performance.now() - t);
      } catch (err) {
        failures.push(err instanceof Error ? err.message : String(err));
      }
    }
  }));
  const cpu = process.cpuUsage(cpuBefore);
  const answer: BatchAnswer = { kind: 'batch', latenciesMs, seconds: (performance.now() - started) / 1000, cpuMs: (cpu.user + cpu.system) / 1000, failures };
  process.send!(answer);
});
process.on('disconnect', () => process.exit(0));

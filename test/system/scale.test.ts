// Beyond one machine: two replicas on loopback sharing one redis-server and one local chain, and
// the real service process stopped with SIGTERM in the middle of a paid job.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { x402Client } from '@x402/core/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, form, signOnBase, type TestService } from '../support/service.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { startEvmRig, startSvmRig, type EvmRig, type SvmRig } from '../../devchains/index.js';
import { createSvmClientSigner, registerSvmPayer } from '../../client/svm-payer.js';
import { createPayer } from '../../client/payer.js';
import { leftoverJobDirs } from '../../server/jobdir.js';
import { paymentId } from '../../server/payment/guard.js';
import { balancesOf, errorCode, freePort, paidAt, quoteAt } from '../support/paying.js';
import { RedisProcess, connectionRefused, metricFrom, waitFor } from '../support/processes.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BASE = 'eip155:8453';
const SOLANA = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';

/** Entries in a ZIP, from its end-of-central-directory record. */
function zipEntryCount(bytes: Buffer): number {
  expect(bytes.subarray(0, 4).toString('latin1')).to.equal('PK\x03\x04');
  const eocd = bytes.lastIndexOf(Buffer.from('PK\x05\x06', 'latin1'));
  expect(eocd).to.be.above(0);
  return bytes.readUInt16LE(eocd + 10);
}

describe('replicas sharing one Redis and one chain', () => {
  let redis: RedisProcess;
  let redisDir: string;
  let evm: EvmRig;
  let svm: SvmRig;
  let a: TestService;
  let b: TestService;
  const pdf3 = makePdf(textPages(3));
  const pdf2 = makePdf(textPages(2));

  before(async () => {
    redisDir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-redis-'));
    redis = new RedisProcess(await freePort(), redisDir);
    await redis.start();
    [evm, svm] = await Promise.all([startEvmRig(), startSvmRig()]);
    const options = { rigs: { evm, svm }, config: { redisUrl: redis.url, workers: 1 } };
    a = await startTestService(options);
    b = await startTestService(options);
  });

  after(async () => {
    await a?.stop();
    await b?.stop();
    await Promise.allSettled([evm?.stop(), svm?.stop()]);
    await redis?.stop();
    if (redisDir) await rm(redisDir, { recursive: true, force: true });
  });

  const paidWith = (t: TestService, p: string, body: FormData, payload: PaymentPayload) => paidAt(`${t.url}${p}`, body, payload);
  const evmBalances = () => balancesOf(evm);
  const svmBalances = () => balancesOf(svm);
  const jobsStarted = async () => (await a.metric('paydoc_jobs_total', { outcome: 'started' })) + (await b.metric('paydoc_jobs_total', { outcome: 'started' }));

  const quote = (t: TestService, p: string, body: () => FormData): Promise<PaymentRequired> => quoteAt(`${t.url}${p}`, body());
  const signBase = (pr: PaymentRequired): Promise<PaymentPayload> => signOnBase(pr, evm.payerKey);

  async function signSolana(pr: PaymentRequired): Promise<PaymentPayload> {
    const client = registerSvmPayer(new x402Client(), await createSvmClientSigner(svm.payerSecretKey), svm.rpcUrl);
    return client.createPaymentPayload({ ...pr, accepts: pr.accepts.filter((x) => x.network === SOLANA) });
  }

  it('a quote made by replica A is paid at replica B, on Base and on Solana', async () => {
    const evmBefore = await evmBalances();
    const baseRes = await paidWith(b, '/v1/pdf/extract', form([pdf3]), await signBase(await quote(a, '/v1/pdf/extract', () => form([pdf3]))));
    expect(baseRes.status).to.equal(200);
    expect(((await baseRes.json()) as { pageCount: number }).pageCount).to.equal(3);
    expect(decodePaymentResponseHeader(baseRes.headers.get('payment-response')!)).to.include({ success: true, network: BASE });
    const evmAfter = await evmBalances();
    expect(evmBefore.payer - evmAfter.payer).to.equal(30000n);
    expect(evmAfter.payTo - evmBefore.payTo).to.equal(30000n);

    const svmBefore = await svmBalances();
    const solRes = await paidWith(b, '/v1/pdf/extract', form([pdf2]), await signSolana(await quote(a, '/v1/pdf/extract', () => form([pdf2]))));
    expect(solRes.status).to.equal(200);
    expect(((await solRes.json()) as { pageCount: number }).pageCount).to.equal(2);
    expect(decodePaymentResponseHeader(solRes.headers.get('payment-response')!)).to.include({ success: true, network: SOLANA });
    const svmAfter = await svmBalances();
    expect(svmBefore.payer - svmAfter.payer).to.equal(20000n);
    expect(svmAfter.payTo - svmBefore.payTo).to.equal(20000n);
  });

  it('a result link made by A: B answers 503 RESULT_ELSEWHERE with Retry-After while A holds it, A gives the bytes once, then both answer 410', async () => {
    const body = () => form([pdf2], { delivery: 'link' });
    const evmBefore = await evmBalances();
    const res = await paidWith(a, '/v1/pdf/extract', body(), await signBase(await quote(a, '/v1/pdf/extract', body)));
    expect(res.status).to.equal(200);
    const { result } = (await res.json()) as { result: { url: string } };
    expect(evmBefore.payer - (await evmBalances()).payer).to.equal(20000n);
    const token = result.url.split('/').pop()!;
    const atB = await fetch(`${b.url}/v1/results/${token}`);
    expect(atB.status).to.equal(503);
    expect(atB.headers.get('retry-after')).to.equal('1');
    expect(await errorCode(atB)).to.equal('RESULT_ELSEWHERE');
    const atA = await fetch(`${a.url}/v1/results/${token}`);
    expect(atA.status).to.equal(200);
    expect(((await atA.json()) as { pageCount: number }).pageCount).to.equal(2);
    // The download's end reaches the shared store once its response has finished.
    for (let i = 0; i < 50 && (await fetch(`${b.url}/v1/results/${token}`)).status !== 410; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await fetch(`${b.url}/v1/results/${token}`)).status).to.equal(410);
    expect((await fetch(`${a.url}/v1/results/${token}`)).status).to.equal(410);
  });

  it('one payment replayed at A, at B, and at both at once buys exactly one result and one transfer', async () => {
    const before = await evmBalances();
    const jobs = await jobsStarted();

    const first = await signBase(await quote(a, '/v1/pdf/extract', () => form([pdf3])));
    expect((await paidWith(a, '/v1/pdf/extract', form([pdf3]), first)).status).to.equal(200);
    // Both replicas know, through Redis, that its result was delivered: 410, never a 402.
    for (const replica of [a, b]) {
      const again = await paidWith(replica, '/v1/pdf/extract', form([pdf3]), first);
      expect(again.status).to.equal(410);
      expect(((await again.json()) as { error: { code: string } }).error.code).to.equal('RESULT_DELIVERED');
      expect(again.headers.get('payment-response')).to.be.null();
    }

    const second = await signBase(await quote(b, '/v1/pdf/extract', () => form([pdf3])));
    const concurrent = await Promise.all([a, b, a, b].map((replica) => paidWith(replica, '/v1/pdf/extract', form([pdf3]), second)));
    expect(concurrent.filter((r) => r.status === 200)).to.have.length(1);
    // The others arrived while it ran (409, retry shortly) or once it was delivered (410).
    for (const res of concurrent.filter((r) => r.status !== 200)) expect([409, 410]).to.include(res.status);

    // Only the claim shared through Redis stops the other replica from doing the work as well:
    // the chain alone would refuse the second settlement, but only after the work was done.
    expect(await jobsStarted() - jobs).to.equal(2);
    const after = await evmBalances();
    expect(before.payer - after.payer).to.equal(60000n);
    expect(after.payTo - before.payTo).to.equal(60000n);
  });

  /** A paid extract at A whose settlement answer is lost: charged, its result held by A. */
  async function resultHeldByA(): Promise<{ before: { payer: bigint; payTo: bigint }; payload: PaymentPayload }> {
    const before = await evmBalances();
    const payload = await signBase(await quote(a, '/v1/pdf/extract', () => form([pdf3])));
    evm.facilitator.faults.settle = 'lost';
    let first: Response;
    try {
      first = await paidWith(a, '/v1/pdf/extract', form([pdf3]), payload);
    } finally {
      delete evm.facilitator.faults.settle;
    }
    expect(first.status).to.equal(503);
    expect(before.payer - (await evmBalances()).payer).to.equal(30000n);
    return { before, payload };
  }

  it('a result held by replica A after a lost settlement answer: replica B neither charges again nor asks for a payment; A delivers it; then both say delivered', async () => {
    const { before, payload } = await resultHeldByA();
    // B knows through Redis that the result is held elsewhere: no work, no charge, no 402.
    const jobs = await jobsStarted();
    const atB = await paidWith(b, '/v1/pdf/extract', form([pdf3]), payload);
    expect(atB.status).to.equal(503);
    expect(((await atB.json()) as { error: { code: string } }).error.code).to.equal('SETTLEMENT_UNCONFIRMED');
    expect(await jobsStarted()).to.equal(jobs);
    const atA = await paidWith(a, '/v1/pdf/extract', form([pdf3]), payload);
    expect(atA.status).to.equal(200);
    expect(((await atA.json()) as { pageCount: number }).pageCount).to.equal(3);
    for (const replica of [a, b]) expect((await paidWith(replica, '/v1/pdf/extract', form([pdf3]), payload)).status).to.equal(410);
    const after = await evmBalances();
    expect(before.payer - after.payer).to.equal(30000n);
    expect(after.payTo - before.payTo).to.equal(30000n);
  });

  // Each replica told where the other reaches it (REPLICA_URL), for the length of one test.
  async function withReplicaUrls(run: () => Promise<void>, addressOfA: string = a.url): Promise<void> {
    a.service.app.config.replicaUrl = addressOfA;
    b.service.app.config.replicaUrl = b.url;
    try {
      await run();
    } finally {
      a.service.app.config.replicaUrl = '';
      b.service.app.config.replicaUrl = '';
    }
  }

  it('with REPLICA_URL, the retry of a result held by A sent to B is passed on to A: delivered once, charged once, no second job; then both say delivered', () => withReplicaUrls(async () => {
    const { before, payload } = await resultHeldByA();
    const jobs = await jobsStarted();
    const atB = await paidWith(b, '/v1/pdf/extract', form([pdf3]), payload);
    expect(atB.status).to.equal(200);
    expect(((await atB.json()) as { pageCount: number }).pageCount).to.equal(3);
    expect(decodePaymentResponseHeader(atB.headers.get('payment-response')!)).to.include({ success: true, network: BASE });
    expect(await jobsStarted()).to.equal(jobs);
    for (const replica of [a, b]) {
      const again = await paidWith(replica, '/v1/pdf/extract', form([pdf3]), payload);
      expect(again.status).to.equal(410);
      expect(await errorCode(again)).to.equal('RESULT_DELIVERED');
    }
    const after = await evmBalances();
    expect(before.payer - after.payer).to.equal(30000n);
    expect(after.payTo - before.payTo).to.equal(30000n);
  }));

  it('with REPLICA_URL, after Redis restarts empty, A records again the result it holds: the retry sent to B is passed on to A, delivered once, charged once', () => withReplicaUrls(async () => {
    const { before, payload } = await resultHeldByA();
    await redis.stop();
    await redis.start();
    // Waits for A to be back on the store and to have said again that it holds the result.
    await waitFor('A to record its held result again', async () => (await a.service.app.gate.guard.lookup(paymentId(payload)!).catch(() => undefined)) ?? undefined, 10_000);
    const jobs = await jobsStarted();
    const atB = await waitFor('B to reach the store again', async () => {
      const attempt = await paidWith(b, '/v1/pdf/extract', form([pdf3]), payload);
      if (attempt.status === 503 && await errorCode(attempt.clone()) === 'GUARD_UNAVAILABLE') { await attempt.arrayBuffer(); return undefined; }
      return attempt;
    }, 10_000);
    expect(atB.status).to.equal(200);
    expect(((await atB.json()) as { pageCount: number }).pageCount).to.equal(3);
    expect(await jobsStarted()).to.equal(jobs);
    const again = await paidWith(b, '/v1/pdf/extract', form([pdf3]), payload);
    expect(again.status).to.equal(410);
    expect(await errorCode(again)).to.equal('RESULT_DELIVERED');
    const after = await evmBalances();
    expect(before.payer - after.payer).to.equal(30000n);
    expect(after.payTo - before.payTo).to.equal(30000n);
  }));

  it('with REPLICA_URL, an MCP tool call retrying a result held by A, sent to B, is passed on to A: the result and its receipt, charged once, no second job', () => withReplicaUrls(async () => {
    const connect = async (replica: TestService) => {
      const client = new Client({ name: 'retrying-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${replica.url}/mcp`)));
      return client;
    };
    const [atA, atB] = [await connect(a), await connect(b)];
    try {
      const args = { file: { data: Buffer.from(pdf3).toString('base64') } };
      const quoted = await atA.callTool({ name: 'svc_pdf_extract', arguments: args });
      const payment = await signBase(quoted.structuredContent as unknown as PaymentRequired);
      const before = await evmBalances();
      evm.facilitator.faults.settle = 'lost';
      let first;
      try {
        first = await atA.callTool({ name: 'svc_pdf_extract', arguments: args, _meta: { 'x402/payment': payment } });
      } finally {
        delete evm.facilitator.faults.settle;
      }
      expect((first.structuredContent as { error: { code: string } }).error.code).to.equal('SETTLEMENT_UNCONFIRMED');
      expect(before.payer - (await evmBalances()).payer).to.equal(30000n);
      const jobs = await jobsStarted();
      const retry = await atB.callTool({ name: 'svc_pdf_extract', arguments: args, _meta: { 'x402/payment': payment } });
      expect(retry.isError).to.not.equal(true);
      expect((retry.structuredContent as { pageCount: number }).pageCount).to.equal(3);
      expect(retry._meta!['x402/payment-response']).to.include({ success: true, network: BASE });
      expect(await jobsStarted()).to.equal(jobs);
      const third = await atB.callTool({ name: 'svc_pdf_extract', arguments: args, _meta: { 'x402/payment': payment } });
      expect((third.structuredContent as { error: { code: string } }).error.code).to.equal('RESULT_DELIVERED');
      const after = await evmBalances();
      expect(before.payer - after.payer).to.equal(30000n);
      expect(after.payTo - before.payTo).to.equal(30000n);
    } finally {
      await Promise.all([atA.close(), atB.close()]);
    }
  }));

  it('with REPLICA_URL, a result link made by A downloads once from B (the bytes A holds), then both answer 410', () => withReplicaUrls(async () => {
    const body = () => form([pdf2], { delivery: 'link' });
    const evmBefore = await evmBalances();
    const res = await paidWith(a, '/v1/pdf/extract', body(), await signBase(await quote(a, '/v1/pdf/extract', body)));
    expect(res.status).to.equal(200);
    const { result } = (await res.json()) as { result: { url: string; sha256: string } };
    expect(evmBefore.payer - (await evmBalances()).payer).to.equal(20000n);
    const token = result.url.split('/').pop()!;
    const atB = await fetch(`${b.url}/v1/results/${token}`);
    expect(atB.status).to.equal(200);
    expect(atB.headers.get('cache-control')).to.equal('no-store');
    const bytes = Buffer.from(await atB.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).to.equal(result.sha256);
    expect((JSON.parse(bytes.toString('utf8')) as { pageCount: number }).pageCount).to.equal(2);
    for (let i = 0; i < 50 && (await fetch(`${a.url}/v1/results/${token}`)).status !== 410; i++) await new Promise((r) => setTimeout(r, 20));
    for (const replica of [a, b]) {
      const again = await fetch(`${replica.url}/v1/results/${token}`);
      expect(again.status).to.equal(410);
      expect(await errorCode(again)).to.equal('RESULT_GONE');
    }
    expect(evmBefore.payer - (await evmBalances()).payer).to.equal(20000n);
  }));

  it('with REPLICA_URL, a long job accepted by A and an MCP task started at A are read at B (passed on to A): the result once, charged once', () => withReplicaUrls(async () => {
    const evmBefore = await evmBalances();
    const accepted = await fetch(`${a.url}/v1/pdf/extract`, {
      method: 'POST', body: form([pdf2]),
      headers: { prefer: 'respond-async', 'payment-signature': encodePaymentSignatureHeader(await signBase(await quote(a, '/v1/pdf/extract', () => form([pdf2])))) },
    });
    expect(accepted.status).to.equal(202);
    const token = accepted.headers.get('location')!.split('/').pop()!;
    let job: { state: string; result?: { url: string } } = { state: 'running' };
    for (let i = 0; i < 300 && job.state === 'running'; i++) {
      const atB = await fetch(`${b.url}/v1/jobs/${token}`);
      expect(atB.status).to.equal(200);
      job = ((await atB.json()) as { job: typeof job }).job;
      if (job.state === 'running') await new Promise((r) => setTimeout(r, 100));
    }
    expect(job.state).to.equal('done');
    const download = await fetch(`${b.url}/v1/results/${job.result!.url.split('/').pop()!}`);
    expect(((await download.json()) as { pageCount: number }).pageCount).to.equal(2);
    expect(evmBefore.payer - (await evmBalances()).payer).to.equal(20000n);

    const args = { file: { data: pdf2.toString('base64') } };
    const connect = async (t: TestService) => {
      const client = new Client({ name: 'scale-test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
      return client;
    };
    const atA = await connect(a);
    const quoted = (await atA.callTool({ name: 'svc_pdf_extract', arguments: args })).structuredContent as unknown as PaymentRequired;
    const payment = await signBase(quoted);
    const stream = atA.experimental.tasks.callToolStream({ name: 'svc_pdf_extract', arguments: args, _meta: { 'x402/payment': payment } }, undefined, { task: {} });
    let taskId = '';
    for await (const message of stream) {
      if (message.type === 'taskCreated') { taskId = message.task.taskId; break; }
    }
    await atA.close();
    const atB = await connect(b);
    try {
      const result = await atB.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect((result.structuredContent as { pageCount: number }).pageCount).to.equal(2);
      expect((await atB.experimental.tasks.getTask(taskId)).status).to.equal('completed');
    } finally {
      await atB.close();
    }
    expect(evmBefore.payer - (await evmBalances()).payer).to.equal(40000n);
  }));

  it('with REPLICA_URL, a holder that does not answer, or a request already marked as forwarded, gets the 503 it got without it, nothing charged twice', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await withReplicaUrls(async () => {
      const body = () => form([pdf2], { delivery: 'link' });
      const res = await paidWith(a, '/v1/pdf/extract', body(), await signBase(await quote(a, '/v1/pdf/extract', body)));
      const token = ((await res.json()) as { result: { url: string } }).result.url.split('/').pop()!;
      const atB = await fetch(`${b.url}/v1/results/${token}`);
      expect(atB.status).to.equal(503);
      expect(atB.headers.get('retry-after')).to.equal('1');
      expect(await errorCode(atB)).to.equal('RESULT_ELSEWHERE');
      expect((await fetch(`${a.url}/v1/results/${token}`)).status).to.equal(200);
    }, closed);
    await withReplicaUrls(async () => {
      const before = await evmBalances();
      const payload = await signBase(await quote(a, '/v1/pdf/extract', () => form([pdf3])));
      evm.facilitator.faults.settle = 'lost';
      try {
        expect((await paidWith(a, '/v1/pdf/extract', form([pdf3]), payload)).status).to.equal(503);
      } finally {
        delete evm.facilitator.faults.settle;
      }
      const marked = await fetch(`${b.url}/v1/pdf/extract`, { method: 'POST', body: form([pdf3]), headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload), 'x-paydoc-forwarded': '1' } });
      expect(marked.status).to.equal(503);
      expect(await errorCode(marked)).to.equal('SETTLEMENT_UNCONFIRMED');
      const atA = await paidWith(a, '/v1/pdf/extract', form([pdf3]), payload);
      expect(atA.status).to.equal(200);
      expect(before.payer - (await evmBalances()).payer).to.equal(30000n);
    });
  });

  it('a Solana payment sent to both replicas at once settles once', async () => {
    const before = await svmBalances();
    const jobs = await jobsStarted();
    const payload = await signSolana(await quote(a, '/v1/pdf/extract', () => form([pdf2])));
    const results = await Promise.all([b, a, b, a].map((replica) => paidWith(replica, '/v1/pdf/extract', form([pdf2]), payload)));
    expect(results.filter((r) => r.status === 200)).to.have.length(1);
    for (const res of results.filter((r) => r.status !== 200)) expect([409, 410]).to.include(res.status);
    expect(await jobsStarted() - jobs).to.equal(1);
    const after = await svmBalances();
    expect(before.payer - after.payer).to.equal(20000n);
    expect(after.payTo - before.payTo).to.equal(20000n);
  });

  it('with Redis stopped, paid requests get 503 with nothing charged and no work; once it is back the same payment buys its result', async () => {
    await redis.stop();
    try {
      // Quotes need no guard: they still answer.
      const payload = await signBase(await quote(a, '/v1/pdf/extract', () => form([pdf3])));
      const before = await evmBalances();
      const jobs = await jobsStarted();
      for (const replica of [a, b]) {
        const res = await paidWith(replica, '/v1/pdf/extract', form([pdf3]), payload);
        expect(res.status).to.equal(503);
        expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('GUARD_UNAVAILABLE');
        expect(res.headers.get('payment-response')).to.be.null();
      }
      expect(await jobsStarted()).to.equal(jobs);
      expect(await evmBalances()).to.equal(before);

      await redis.start();
      // The client reconnects on its own (within about two seconds); until then the answer stays 503.
      const res = await waitFor('the guard to reconnect', async () => {
        const attempt = await paidWith(b, '/v1/pdf/extract', form([pdf3]), payload);
        if (attempt.status === 503) { await attempt.arrayBuffer(); return undefined; }
        return attempt;
      }, 10_000);
      expect(res.status).to.equal(200);
      const after = await evmBalances();
      expect(before.payer - after.payer).to.equal(30000n);
      expect(await jobsStarted() - jobs).to.equal(1);
    } finally {
      if (!redis.running) await redis.start();
    }
  });

  it('a replica started while Redis is unreachable boots, quotes, refuses paid requests with 503 and stops cleanly', async () => {
    const started = Date.now();
    const c = await startTestService({ rigs: { evm, svm }, config: { redisUrl: `redis://127.0.0.1:${await freePort()}`, workers: 1 } });
    try {
      expect(Date.now() - started).to.be.below(15_000);
      const before = await evmBalances();
      const payload = await signBase(await quote(c, '/v1/pdf/extract', () => form([pdf3])));
      const res = await paidWith(c, '/v1/pdf/extract', form([pdf3]), payload);
      expect(res.status).to.equal(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('GUARD_UNAVAILABLE');
      expect(await c.metric('paydoc_jobs_total', { outcome: 'started' })).to.equal(0);
      expect(await evmBalances()).to.equal(before);
    } finally {
      await c.stop();
    }
  });

  it('SIGTERM during a paid job: the job finishes and settles, new connections are refused, the process exits 0', async () => {
    const port = await freePort();
    const tmpDir = await mkdtemp(path.join('/dev/shm', 'paydoc-sigterm-'));
    const url = `http://127.0.0.1:${port}`;
    // Live mode against the test's own chain and facilitator, so balances can be read after the
    // process is gone; the SIGTERM path is the same in dev mode.
    const child = spawn(process.execPath, [path.join(projectRoot, 'dist/bin/start.js')], {
      cwd: projectRoot,
      env: {
        PATH: process.env.PATH, HOME: process.env.HOME,
        PORT: String(port), HOST: '127.0.0.1', BASE_URL: url, WORKERS: '1', TMP_DIR: tmpDir, LOG_LEVEL: 'info',
        PAYMENTS: 'live', EVM_FACILITATOR_URL: evm.facilitatorUrl, EVM_PAY_TO: evm.payTo, REDIS_URL: redis.url,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      await waitFor('the service to listen', async () => {
        if (child.exitCode !== null) throw new Error(`the service exited at start: ${output.slice(-1000)}`);
        return output.includes('"msg":"listening"') ? true : undefined;
      }, 30_000);

      const pages = 24;
      const before = await evmBalances();
      const payFetch = wrapFetchWithPayment(fetch, await createPayer({ chain: 'base', evmKey: evm.payerKey })) as typeof fetch;
      let answered = false;
      const pending = payFetch(`${url}/v1/pdf/render`, { method: 'POST', body: form([makePdf(textPages(pages))], { dpi: 300 }) })
        .finally(() => { answered = true; });
      await waitFor('the paid job to start', async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return metricFrom(text, 'paydoc_jobs_total', { outcome: 'started' }) >= 1 ? true : undefined;
      }, 20_000);

      child.kill('SIGTERM');
      await waitFor('the listener to close', async () => (await connectionRefused(port)) ? true : undefined, 5_000);
      expect(answered).to.equal(false);

      const res = await pending;
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/zip');
      expect(zipEntryCount(Buffer.from(await res.arrayBuffer()))).to.equal(pages);
      expect(decodePaymentResponseHeader(res.headers.get('payment-response')!)).to.include({ success: true, network: BASE });
      const after = await evmBalances();
      expect(before.payer - after.payer).to.equal(BigInt(pages * 10000));
      expect(after.payTo - before.payTo).to.equal(BigInt(pages * 10000));

      const [code, signal] = await exited;
      expect({ code, signal }).to.equal({ code: 0, signal: null });
      expect(output).to.contain('stopping: finishing in-flight jobs');
      expect(await leftoverJobDirs(tmpDir)).to.equal([]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited; }
      await rm(tmpDir, { recursive: true, force: true });
    }
  });
});

// Injected faults on a real service paid on the local Base chain with the standard client. Each
// fault is followed by a normal paid request that must succeed: the payer's balance moves only
// when a result was delivered, the pool recovers, and nothing is left behind.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import sharp from 'sharp';
import type { Piscina } from 'piscina';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { startTestService, form, signOnBase, type TestService } from '../support/service.js';
import { FAKE_MODEL, startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { revertNextSettlement } from '../../devchains/index.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { errorCode, freePort, paidAt, quoteAt } from '../support/paying.js';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const run = promisify(execFile);
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Processes descended from this process, with their arguments. Worker threads share its pid, and
 * each thread's tools are started by a launcher process of its own, so tools are grandchildren.
 */
async function children(): Promise<Array<{ pid: number; args: string[] }>> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // comm may hold spaces and parentheses: the fields after the last ')' are fixed.
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* exited while listed */ }
  }
  const descends = (pid: number): boolean => {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) if (p === process.pid) return true;
    return false;
  };
  const found: Array<{ pid: number; args: string[] }> = [];
  for (const pid of parents.keys()) {
    if (!descends(pid)) continue;
    try {
      const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
      found.push({ pid, args });
    } catch { /* exited while listed */ }
  }
  return found;
}

/** mutool drawing pages: the job itself (the quote's inspection runs `mutool pages`). */
const isDrawing = (c: { args: string[] }) => path.basename(c.args[0] ?? '') === 'mutool' && c.args[1] === 'draw';

async function waitForDrawing(timeoutMs = 20_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const child = (await children()).find(isDrawing);
    if (child) return child.pid;
    await delay(20);
  }
  throw new Error(`no mutool draw subprocess appeared within ${timeoutMs} ms`);
}

const isLauncher = (c: { args: string[] }) => c.args.some((a) => a.endsWith('/tools/process/launcher-process.js'));

async function launchersAtMost(count: number, timeoutMs = 10_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await children()).filter(isLauncher).length <= count) return true;
    await delay(50);
  }
  return false;
}

/** Whether `count` pages are being drawn at the same moment (each job draws in its own thread). */
async function drawingAtOnce(count: number, timeoutMs = 30_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await children()).filter(isDrawing).length >= count) return true;
    await delay(50);
  }
  return false;
}

async function noneDrawing(timeoutMs = 10_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!(await children()).some(isDrawing)) return true;
    await delay(50);
  }
  return false;
}

describe('injected faults, each followed by a normal paid request', () => {
  let t: TestService;
  let fake: FakeProvider;
  let payFetch: typeof fetch;
  const small = makePdf(textPages(2));
  // 50 A2 pages at 300 dpi (35 megapixels each, under the 50-megapixel bound) keep mutool drawing
  // for tens of seconds: long enough to hit it mid-job.
  const slow = makePdf(textPages(50).map((page) => ({ ...page, size: [1190, 1684] as [number, number] })));

  before(async () => {
    fake = await startFakeProvider(() => ({ content: 'recognised text' }));
    // A short facilitator timeout, so that a settlement that never answers is given up quickly.
    t = await startTestService({
      config: { modelBaseUrl: fake.baseUrl, modelName: FAKE_MODEL, modelDpi: 72, facilitatorTimeoutMs: 3_000 },
    });
    payFetch = await t.payFetch('base');
  });

  after(async () => {
    await t?.stop();
    await fake?.close();
  });

  const payer = () => t.evm.balanceOf(t.evm.payerAddress);
  const jobsStarted = () => t.metric('paydoc_jobs_total', { outcome: 'started' });
  const jobsEnded = (outcome: 'ok' | 'failed' | 'timeout' | 'cancelled') => t.metric('paydoc_jobs_total', { outcome });
  const post = (route: string, body: FormData) => payFetch(`${t.url}${route}`, { method: 'POST', body });
  const slowRender = () => post('/v1/pdf/render', form([slow], { dpi: 300 }));

  /** The pool is idle, nothing is left on the job tmpfs, and a normal paid request succeeds and costs exactly its price. */
  /** The job ended in 500 JOB_FAILED and the payer's balance did not move. */
  /** The payer's balance and the failed jobs, read before the job starts (its failure may be counted before the fault's caller looks). */
  async function baseline(): Promise<{ balance: bigint; failed: number }> {
    return { balance: await payer(), failed: await jobsEnded('failed') };
  }

  async function failedUncharged(pending: Promise<Response>, before: { balance: bigint; failed: number }): Promise<void> {
    const res = await pending;
    expect(res.status).to.equal(500);
    expect(await errorCode(res)).to.equal('JOB_FAILED');
    expect(await payer()).to.equal(before.balance);
    expect(await jobsEnded('failed')).to.equal(before.failed + 1);
  }

  async function recovered(): Promise<void> {
    const before = await payer();
    const ok = await jobsEnded('ok');
    const res = await post('/v1/pdf/extract', form([small]));
    expect(res.status).to.equal(200);
    expect(await jobsEnded('ok')).to.equal(ok + 1);
    expect(((await res.json()) as { pageCount: number }).pageCount).to.equal(2);
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!).success).to.be.true();
    expect(before - await payer()).to.equal(20_000n);
    expect(t.service.app.pool.busy).to.equal(0);
    expect(await t.jobDirsLeft()).to.equal([]);
  }

  it('facilitator down at verify: 502, no work, nothing charged', async () => {
    const before = await payer();
    const jobs = await jobsStarted();
    t.evm.facilitator.faults.verify = 'down';
    let res: Response;
    try {
      res = await post('/v1/pdf/extract', form([small]));
    } finally {
      delete t.evm.facilitator.faults.verify;
    }
    expect(res.status).to.equal(502);
    expect(await errorCode(res)).to.equal('FACILITATOR_UNREACHABLE');
    expect(await jobsStarted()).to.equal(jobs);
    expect(await payer()).to.equal(before);
    await recovered();
  });

  const extractUrl = () => `${t.url}/v1/pdf/extract`;
  /** A signed payment for extracting `small`, as the standard client makes it (with an idempotency key if given). */
  async function signedExtract(clientId?: string) {
    const pr = await quoteAt(extractUrl(), form([small]));
    if (clientId) appendPaymentIdentifierToExtensions(pr.extensions!, clientId);
    return signOnBase(pr, t.evm.payerKey);
  }
  const merchant = () => t.evm.balanceOf(t.evm.payTo);

  /**
   * A settle fault whose outcome the service cannot know: 503 SETTLEMENT_UNCONFIRMED (never a 402
   * saying nothing was charged), the result held; the identical retry gets it, charged exactly
   * once in all, without a second job; a third try is told it was delivered.
   */
  async function unconfirmedThenRedelivered(fault: 'down' | 'lost' | 'pending' | 'hang', chargedAtFirst: boolean): Promise<void> {
    const before = { payer: await payer(), merchant: await merchant() };
    const jobs = await jobsStarted();
    const payload = await signedExtract();
    t.evm.facilitator.faults.settle = fault;
    let res: Response;
    try {
      res = await paidAt(extractUrl(), form([small]), payload);
    } finally {
      delete t.evm.facilitator.faults.settle;
    }
    expect(res.status).to.equal(503);
    expect(res.headers.get('payment-required')).to.be.null();
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).to.equal('SETTLEMENT_UNCONFIRMED');
    expect(body.error.message).to.not.contain('nothing was charged');
    expect(await jobsStarted()).to.equal(jobs + 1);
    expect(before.payer - await payer()).to.equal(chargedAtFirst ? 20_000n : 0n);

    const retry = await paidAt(extractUrl(), form([small]), payload);
    expect(retry.status).to.equal(200);
    expect(((await retry.json()) as { pageCount: number }).pageCount).to.equal(2);
    expect(decodePaymentResponseHeader(retry.headers.get('payment-response')!).success).to.be.true();
    expect(await jobsStarted()).to.equal(jobs + 1);
    expect(before.payer - await payer()).to.equal(20_000n);
    expect(await merchant() - before.merchant).to.equal(20_000n);
    const third = await paidAt(extractUrl(), form([small]), payload);
    expect(third.status).to.equal(410);
    expect(await errorCode(third)).to.equal('RESULT_DELIVERED');
    expect(before.payer - await payer()).to.equal(20_000n);
    await recovered();
  }

  it('facilitator down at settle (nothing settled): 503 unconfirmed; the identical retry settles and gets the result, charged once', async () => {
    await unconfirmedThenRedelivered('down', false);
  });

  it('facilitator settles on chain and its answer is lost: 503 unconfirmed; the identical retry gets the result without a second charge', async () => {
    await unconfirmedThenRedelivered('lost', true);
  });

  it('facilitator answers settlement_pending (after x402\'s own retry): 503 unconfirmed; the identical retry settles and gets the result', async () => {
    await unconfirmedThenRedelivered('pending', false);
  });

  it('facilitator never answers settle (past FACILITATOR_TIMEOUT_MS): 503 unconfirmed; the identical retry settles and gets the result', async () => {
    await unconfirmedThenRedelivered('hang', false);
  });

  it('over MCP, a settlement whose answer is lost: a SETTLEMENT_UNCONFIRMED tool error, then the same payment gets the result and its receipt, charged once', async () => {
    const client = new Client({ name: 'retrying-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const args = { file: { data: Buffer.from(small).toString('base64') } };
      const quote = await client.callTool({ name: 'svc_pdf_extract', arguments: args });
      const payment = await signOnBase(quote.structuredContent as unknown as PaymentRequired, t.evm.payerKey);
      const before = await payer();
      t.evm.facilitator.faults.settle = 'lost';
      let first;
      try {
        first = await client.callTool({ name: 'svc_pdf_extract', arguments: args, _meta: { 'x402/payment': payment } });
      } finally {
        delete t.evm.facilitator.faults.settle;
      }
      expect(first.isError).to.equal(true);
      expect((first.structuredContent as { error: { code: string } }).error.code).to.equal('SETTLEMENT_UNCONFIRMED');
      expect(before - await payer()).to.equal(20_000n);
      const retry = await client.callTool({ name: 'svc_pdf_extract', arguments: args, _meta: { 'x402/payment': payment } });
      expect(retry.isError).to.not.equal(true);
      expect((retry.structuredContent as { pageCount: number }).pageCount).to.equal(2);
      expect((retry._meta!['x402/payment-response'] as { success: boolean }).success).to.equal(true);
      expect(before - await payer()).to.equal(20_000n);
      const third = await client.callTool({ name: 'svc_pdf_extract', arguments: args, _meta: { 'x402/payment': payment } });
      expect((third.structuredContent as { error: { code: string } }).error.code).to.equal('RESULT_DELIVERED');
    } finally {
      await client.close();
    }
    await recovered();
  });

  /**
   * A client leaves while its payment settles: it is charged once, the result is held, and the
   * identical retry of the same payment receives it; a third try is told it was delivered.
   */
  async function leavesDuringSettlement(surface: {
    send(): Promise<unknown>; leave(): Promise<void> | void; retry(): Promise<number>; again(): Promise<string>;
  }): Promise<void> {
    const before = await payer();
    const jobs = await jobsStarted();
    const held = await t.metric('paydoc_payments_total', { stage: 'undelivered_held' });
    const settles = t.evm.facilitator.calls.settle;
    t.evm.facilitator.faults.settleDelayMs = 1_500;
    try {
      const pending = surface.send().catch((err: unknown) => err);
      while (t.evm.facilitator.calls.settle === settles) await delay(20);
      await surface.leave();
      expect(await pending).to.be.an.error();
      expect(await metricReaches('paydoc_payments_total', { stage: 'undelivered_held' }, held + 1)).to.be.true();
    } finally {
      delete t.evm.facilitator.faults.settleDelayMs;
    }
    expect(before - await payer()).to.equal(20_000n);
    expect(await surface.retry()).to.equal(2);
    expect(await jobsStarted()).to.equal(jobs + 1);
    expect(before - await payer()).to.equal(20_000n);
    expect(await surface.again()).to.equal('RESULT_DELIVERED');
    await recovered();
  }

  it('an HTTP client (with a payment-identifier) that leaves during settlement is charged once and gets its held result by retrying the same payment', async () => {
    const payload = await signedExtract(generatePaymentId());
    const leaving = new AbortController();
    const send = (signal?: AbortSignal) => fetch(extractUrl(), { method: 'POST', body: form([small]), headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) }, ...(signal ? { signal } : {}) });
    await leavesDuringSettlement({
      send: () => send(leaving.signal),
      leave: () => leaving.abort(),
      retry: async () => {
        const res = await send();
        expect(res.status).to.equal(200);
        return ((await res.json()) as { pageCount: number }).pageCount;
      },
      again: async () => errorCode(await send()),
    });
  });

  it('an MCP client that leaves during settlement is charged once and gets its held result by calling again with the same payment', async () => {
    const connect = async () => {
      const client = new Client({ name: 'agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
      return client;
    };
    const args = { file: { data: Buffer.from(small).toString('base64') } };
    const first = await connect();
    const quote = await first.callTool({ name: 'svc_pdf_extract', arguments: args });
    const payment = await signOnBase(quote.structuredContent as unknown as PaymentRequired, t.evm.payerKey);
    const call = (client: Client) => client.callTool({ name: 'svc_pdf_extract', arguments: args, _meta: { 'x402/payment': payment } });
    const second = await connect();
    try {
      await leavesDuringSettlement({
        send: () => call(first),
        leave: () => first.close(),
        retry: async () => {
          const result = await call(second);
          expect(result.isError).to.not.equal(true);
          expect((result._meta!['x402/payment-response'] as { success: boolean }).success).to.equal(true);
          return (result.structuredContent as { pageCount: number }).pageCount;
        },
        again: async () => ((await call(second)).structuredContent as { error: { code: string } }).error.code,
      });
    } finally {
      await second.close();
    }
  });

  it('payment-identifier: the same id with another payment is 409 before any work; with the same payment after delivery, 410', async () => {
    const id = generatePaymentId();
    const first = await signedExtract(id);
    const before = await payer();
    expect((await paidAt(extractUrl(), form([small]), first)).status).to.equal(200);
    const jobs = await jobsStarted();
    const other = await signedExtract(id);
    const conflict = await paidAt(extractUrl(), form([small]), other);
    expect(conflict.status).to.equal(409);
    expect(await errorCode(conflict)).to.equal('PAYMENT_ID_CONFLICT');
    expect((await paidAt(extractUrl(), form([small]), first)).status).to.equal(410);
    expect(await jobsStarted()).to.equal(jobs);
    expect(before - await payer()).to.equal(20_000n);
    // A payment-identifier that breaks the extension's rules is refused like any invalid payment.
    const pr = await quoteAt(extractUrl(), form([small]));
    const declared = pr.extensions!['payment-identifier'] as { info: Record<string, unknown> };
    declared.info = { ...declared.info, id: 'short' };
    const bad = await signOnBase(pr, t.evm.payerKey);
    const refused = await paidAt(extractUrl(), form([small]), bad);
    expect(refused.status).to.equal(402);
    expect(decodePaymentRequiredHeader(refused.headers.get('payment-required')!).error).to.contain('payment-identifier');
  });

  it('the settlement transaction reverts on chain: 402, no result, nothing charged', async () => {
    const before = await payer();
    revertNextSettlement(t.evm);
    const res = await post('/v1/pdf/extract', form([small]));
    expect(res.status).to.equal(402);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error).to.contain('settlement failed');
    expect(await payer()).to.equal(before);
    await recovered();
  });

  it('a worker thread dies mid-job: 500 JOB_FAILED, nothing charged, its subprocess is gone, the pool runs as many jobs at once as before', async () => {
    const { workers } = t.service.app.config;
    const before = await baseline();
    const pending = slowRender();
    await waitForDrawing();
    // The pool's own piscina: terminating its threads is what a crashed thread looks like to it.
    const piscina = (t.service.app.pool as unknown as { piscina: Piscina }).piscina;
    await Promise.all(piscina.threads.map((thread) => thread.terminate()));
    await failedUncharged(pending, before);
    expect(await noneDrawing()).to.be.true();
    await recovered();
    // The dead threads' tool launchers went with them: one per live thread and one for the front end.
    expect(await launchersAtMost(workers + 1)).to.be.true();
    // Paid renders, one per configured worker, draw side by side: the dead threads were replaced
    // (piscina starts a replacement as a dead thread's exit reaches it, or else when work waits).
    // Their client then leaves: both jobs are stopped and nothing is charged for them.
    const beforeRenders = await payer();
    const cancelled = await jobsEnded('cancelled');
    const gone = await t.metric('paydoc_payments_total', { stage: 'cancelled_client_gone' });
    const leaving = new AbortController();
    const leavingFetch = await t.payFetch('base', (input, init) => fetch(input, { ...init, signal: leaving.signal }));
    const renders = Array.from({ length: workers }, () => leavingFetch(`${t.url}/v1/pdf/render`, { method: 'POST', body: form([slow], { dpi: 300 }) }).catch((err: unknown) => err));
    const together = await drawingAtOnce(workers);
    leaving.abort();
    await Promise.all(renders);
    expect(together).to.be.true();
    // Both cancellations are counted before the next test reads the counters.
    expect(await metricReaches('paydoc_jobs_total', { outcome: 'cancelled' }, cancelled + workers)).to.be.true();
    expect(await metricReaches('paydoc_payments_total', { stage: 'cancelled_client_gone' }, gone + workers)).to.be.true();
    expect(await noneDrawing()).to.be.true();
    expect(await payer()).to.equal(beforeRenders);
  });

  it('an engine killed mid-job (SIGKILL): 500 JOB_FAILED, nothing charged', async () => {
    const before = await baseline();
    const pending = slowRender();
    process.kill(await waitForDrawing(), 'SIGKILL');
    await failedUncharged(pending, before);
    await recovered();
  });

  it('a launcher killed mid-job: 500 JOB_FAILED, nothing charged, its engine gone, later jobs succeed', async () => {
    const before = await baseline();
    const pending = slowRender();
    const drawing = await waitForDrawing();
    const stat = await readFile(`/proc/${drawing}/stat`, 'utf8');
    const launcher = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    expect((await children()).find((c) => c.pid === launcher)?.args.some((a) => a.endsWith('/tools/process/launcher-process.js'))).to.be.true();
    process.kill(launcher, 'SIGKILL');
    await failedUncharged(pending, before);
    expect(await noneDrawing()).to.be.true();
    // Both workers take jobs again (the one whose launcher died starts a new one on its next tool).
    await recovered();
    await recovered();
  });

  it('a job past its deadline: 504 JOB_TIMEOUT soon after the deadline, the subprocess killed, nothing charged', async () => {
    const before = await payer();
    const config = t.service.app.config;
    const saved = config.jobTimeoutMs;
    // JOB_TIMEOUT_MS is read for each job; a tiny one makes the render overrun.
    config.jobTimeoutMs = 1_000;
    const timeouts = await jobsEnded('timeout');
    let res: Response;
    let ms: number;
    try {
      const pending = slowRender();
      await waitForDrawing();
      const drawing = performance.now();
      res = await pending;
      ms = performance.now() - drawing;
    } finally {
      config.jobTimeoutMs = saved;
    }
    expect(res.status).to.equal(504);
    expect(await errorCode(res)).to.equal('JOB_TIMEOUT');
    expect(await jobsEnded('timeout')).to.equal(timeouts + 1);
    // From the first page drawn: the 1 s deadline, the pool's 2 s grace at most, and the answer.
    expect(ms).to.be.below(5_000);
    expect(await noneDrawing(2_000)).to.be.true();
    expect(await payer()).to.equal(before);
    await recovered();
  });

  /** Waits for a counter to reach a value (the service notices a closed connection a moment later). */
  async function metricReaches(name: string, labels: Record<string, string>, value: number, timeoutMs = 10_000): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (await t.metric(name, labels) >= value) return true;
      await delay(50);
    }
    return false;
  }

  /** A client leaves mid-job: the job is stopped, nothing is settled, neither balance moves. */
  async function leavesUncharged(start: () => Promise<unknown>, leave: () => Promise<void> | void): Promise<void> {
    const before = { payer: await payer(), merchant: await t.evm.balanceOf(t.evm.payTo) };
    const gone = await t.metric('paydoc_payments_total', { stage: 'cancelled_client_gone' });
    const cancelled = await jobsEnded('cancelled');
    const settles = t.evm.facilitator.calls.settle;
    const verifies = t.evm.facilitator.calls.verify;
    // No earlier job may still be drawing: the drawing waited for below must be this call's.
    expect(await noneDrawing()).to.be.true();
    const pending = start().catch((err: unknown) => err);
    while (t.evm.facilitator.calls.verify === verifies) await delay(20);
    await waitForDrawing();
    await leave();
    const outcome = await pending;
    // The body is not printed: a result would be binary.
    expect(outcome, outcome instanceof Response ? `answered ${outcome.status} (${outcome.headers.get('content-type')})` : '').to.be.an.error();
    expect(await metricReaches('paydoc_payments_total', { stage: 'cancelled_client_gone' }, gone + 1)).to.be.true();
    expect(await jobsEnded('cancelled')).to.equal(cancelled + 1);
    // The job was stopped, not left to run to its end.
    expect(await noneDrawing(5_000)).to.be.true();
    expect(t.evm.facilitator.calls.settle).to.equal(settles);
    expect(await payer()).to.equal(before.payer);
    expect(await t.evm.balanceOf(t.evm.payTo)).to.equal(before.merchant);
    await recovered();
  }

  it('a client that leaves while its paid HTTP job runs: the job stops, nothing is settled or charged', async () => {
    const leaving = new AbortController();
    // The signal goes to the fetch that @x402/fetch wraps, not to the wrapped call: the wrapper
    // sends a clone of the Request, and undici follows a clone's signal through a weak reference,
    // so after a garbage collection an abort given to the call no longer reaches the paid request.
    const leavingFetch = await t.payFetch('base', (input, init) => fetch(input, { ...init, signal: leaving.signal }));
    await leavesUncharged(
      () => leavingFetch(`${t.url}/v1/pdf/render`, { method: 'POST', body: form([slow], { dpi: 300 }) }),
      () => leaving.abort(),
    );
  });

  it('an MCP client that leaves while its paid tool call runs: the job stops, nothing is settled or charged', async () => {
    const client = new Client({ name: 'leaving-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    const args = { file: { data: Buffer.from(slow).toString('base64') }, dpi: 300 };
    const quote = await client.callTool({ name: 'svc_pdf_render', arguments: args });
    const payment = await signOnBase(quote.structuredContent as unknown as PaymentRequired, t.evm.payerKey);
    await leavesUncharged(
      () => client.callTool({ name: 'svc_pdf_render', arguments: args, _meta: { 'x402/payment': payment } }),
      // The agent quits: its transport closes the connection the call is waiting on.
      () => client.close(),
    );
  });

  it('damaged images whose headers are intact (JPEG, PNG, WebP): quoted, then the paid job fails 422 CORRUPT_INPUT, uncharged', async () => {
    const width = 800;
    const height = 533;
    const pixels = Buffer.alloc(width * height * 3);
    for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7919 + (i >> 5) * 31) & 0xff;
    const picture = () => sharp(pixels, { raw: { width, height, channels: 3 } });
    const jpeg = await picture().jpeg({ quality: 85 }).toBuffer();
    const png = await picture().png().toBuffer();
    const webp = await picture().webp({ quality: 80 }).toBuffer();

    // JPEG: entropy-coded data cut a third of the way in, the end-of-image marker put back.
    const scan = jpeg.indexOf(Buffer.from([0xff, 0xda]));
    const jpegCut = Buffer.concat([jpeg.subarray(0, scan + Math.floor((jpeg.length - scan) / 3)), Buffer.from([0xff, 0xd9])]);
    // PNG: one byte of pixel data flipped, so its chunk's CRC no longer matches.
    const pngBadCrc = Buffer.from(png);
    pngBadCrc[png.indexOf('IDAT') + 104] ^= 0xff;
    // PNG: the pixel data cut in half inside a well-formed chunk (correct length and CRC).
    const idat = png.indexOf('IDAT');
    const half = Math.floor(png.readUInt32BE(idat - 4) / 2);
    const chunk = Buffer.alloc(12 + half);
    chunk.writeUInt32BE(half, 0);
    png.copy(chunk, 4, idat, idat + 4 + half);
    chunk.writeUInt32BE(zlib.crc32(chunk.subarray(4, 8 + half)) >>> 0, 8 + half);
    const pngShortIdat = Buffer.concat([png.subarray(0, idat - 4), chunk, png.subarray(png.indexOf('IEND') - 4)]);
    // WebP: the VP8 data cut to 60 %, with the chunk and RIFF sizes made consistent again.
    const keep = Math.floor(webp.readUInt32LE(16) * 0.6) & ~1;
    const webpCut = Buffer.concat([webp.subarray(0, 20 + keep)]);
    webpCut.writeUInt32LE(keep, 16);
    webpCut.writeUInt32LE(webpCut.length - 8, 4);

    for (const [name, bytes] of [['jpeg', jpegCut], ['png bad crc', pngBadCrc], ['png short idat', pngShortIdat], ['webp', webpCut]] as const) {
      const before = await payer();
      const failed = await jobsEnded('failed');
      const res = await post('/v1/image/resize', form([bytes], { width: 400 }));
      expect(res.status, name).to.equal(422);
      expect(await errorCode(res), name).to.equal('CORRUPT_INPUT');
      expect(res.headers.get('payment-response'), name).to.be.null();
      expect(await jobsEnded('failed'), name).to.equal(failed + 1);
      expect(await payer(), name).to.equal(before);
    }
    await recovered();
  });

  it('the job tmpfs full: uploads that cannot be stored and results that cannot be written fail uncharged', async () => {
    const mountPoint = await mkdtemp(path.join(os.tmpdir(), 'paydoc-full-'));
    // CI runs as root on Debian; a small tmpfs is the real fault (ENOSPC), not a simulation.
    await run('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0700', 'tmpfs', mountPoint]);
    const config = t.service.app.config;
    const saved = config.tmpDir;
    const jobRoot = path.join(mountPoint, 'jobs');
    await mkdir(jobRoot, { mode: 0o700 });
    try {
      config.tmpDir = jobRoot;
      const before = await payer();
      const jobs = await jobsStarted();

      // Completely full: the upload cannot be written for inspection.
      const filler = path.join(mountPoint, 'filler');
      await writeFile(filler, Buffer.alloc(256 * 1024)).catch(() => undefined);
      const full = await post('/v1/pdf/extract', form([small]));
      expect(full.status).to.equal(503);
      expect(await errorCode(full)).to.equal('UNAVAILABLE');
      expect(full.headers.get('retry-after')).to.exist();
      expect(await jobsStarted()).to.equal(jobs);

      // Room for the upload but not for 50 rendered pages: the job fails, paid for by no one.
      await rm(filler);
      const overflow = await post('/v1/pdf/render', form([slow], { dpi: 72 }));
      expect(overflow.status).to.equal(503);
      expect(await errorCode(overflow)).to.equal('UNAVAILABLE');
      expect(await jobsStarted()).to.equal(jobs + 1);
      expect(await payer()).to.equal(before);
      expect(await readdir(jobRoot)).to.equal([]);
    } finally {
      config.tmpDir = saved;
      await run('umount', [mountPoint]);
      await rm(mountPoint, { recursive: true, force: true });
    }
    await recovered();
  });

  it('the model provider down: 502 PROVIDER_FAILED after bounded retries, nothing charged', async () => {
    const before = await payer();
    // The pool's threads take their provider settings at start: a service of its own, on the same chain.
    const down = await startTestService({ rigs: { evm: t.evm }, config: { modelBaseUrl: `http://127.0.0.1:${await freePort()}/v1`, modelName: FAKE_MODEL, modelDpi: 72 } });
    let res: Response;
    try {
      res = await (await down.payFetch('base'))(`${down.url}/v1/pdf/ocr`, { method: 'POST', body: form([small]) });
    } finally {
      await down.stop();
    }
    expect(res.status).to.equal(502);
    expect(await errorCode(res)).to.equal('PROVIDER_FAILED');
    expect(await payer()).to.equal(before);
    await recovered();
    // The provider itself works again as well.
    const ocr = await post('/v1/pdf/ocr', form([small]));
    expect(ocr.status).to.equal(200);
    expect(((await ocr.json()) as { text: string }).text).to.equal('recognised text\frecognised text');
    expect(before - await payer()).to.equal(20_000n + 60_000n);
  });
});

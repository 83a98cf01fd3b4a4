// Long jobs on the real local Base chain, balances read from it: HTTP `Prefer: respond-async`
// (202, then /v1/jobs/{token}) with a client that leaves after the 202, and MCP task-augmented
// tools/call with the official SDK client (tasks/get, tasks/result). Settled only when the result
// is ready; a job that fails is never charged; an unpaid request gets the same quote as a plain one.
import http from 'node:http';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { startTestService, signOnBase, type TestService } from '../support/service.js';
import { balancesOf } from '../support/paying.js';
import { createPublicClient, http as viemHttp } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface JobAnswer {
  job: {
    url?: string;
    state: 'running' | 'failed' | 'done';
    error?: { code: string; status: number; message: string };
    result?: { url: string; mediaType: string; bytes: number; sha256: string; expiresAt: string };
    receipt?: { success: boolean; transaction: string; network: string };
    delivered?: { status: number; bytes: number; sha256: string; mediaType: string };
  };
}

/** A JPEG whose entropy-coded data is cut a third of the way in: its header reads, so it is quoted; decoding it fails. */
async function damagedJpeg(): Promise<Buffer> {
  const width = 800;
  const height = 533;
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7919 + (i >> 5) * 31) & 0xff;
  const jpeg = await sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
  const scan = jpeg.indexOf(Buffer.from([0xff, 0xda]));
  return Buffer.concat([jpeg.subarray(0, scan + Math.floor((jpeg.length - scan) / 3)), Buffer.from([0xff, 0xd9])]);
}

/**
 * Posts a JSON body with its payment and Prefer: respond-async, reads the status and headers of the
 * answer, and leaves at once: the socket is destroyed before the body is read.
 */
function postAndLeave(
  url: string, body: unknown, payload: PaymentPayload,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async', 'payment-signature': encodePaymentSignatureHeader(payload) },
    }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => { text += chunk.toString('utf8'); });
      // The first bytes of the answer are enough: the client goes away after them.
      res.once('data', () => {
        resolve({ status: res.statusCode!, headers: res.headers, body: text });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('long jobs: HTTP Prefer: respond-async and MCP tasks, on the local chain', () => {
  let t: TestService;
  let jpeg: Buffer;
  let damaged: Buffer;
  // The buyer's upload target for deliver_to: it keeps what is PUT to it.
  let origin: http.Server;
  let originUrl = '';
  const received: Buffer[] = [];

  before(async () => {
    origin = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => { received.push(Buffer.concat(chunks)); res.writeHead(201); res.end(); });
    });
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    originUrl = `http://127.0.0.1:${(origin.address() as { port: number }).port}`;
    t = await startTestService({ config: { urlFetchAllow: originUrl.slice('http://'.length) } });
    jpeg = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
    damaged = await damagedJpeg();
  });
  after(async () => { await t?.stop(); origin?.close(); });

  const balances = () => balancesOf(t.evm);
  const json = (body: unknown, headers: Record<string, string> = {}) => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

  /** Polls the job until it leaves `running` (bounded). */
  async function settled(url: string): Promise<JobAnswer['job']> {
    for (let i = 0; i < 300; i++) {
      const res = await fetch(url);
      expect(res.status).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const { job } = (await res.json()) as JobAnswer;
      if (job.state !== 'running') return job;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the job did not end');
  }

  it('an unpaid request with Prefer: respond-async gets the same 402 quote as a plain one', async () => {
    const body = { file: { data: jpeg.toString('base64') }, width: 40 };
    const plain = await fetch(`${t.url}/v1/image/resize`, json(body));
    const preferring = await fetch(`${t.url}/v1/image/resize`, json(body, { prefer: 'respond-async' }));
    expect(preferring.status).to.equal(402);
    expect(preferring.headers.get('preference-applied')).to.be.null();
    expect(preferring.headers.get('location')).to.be.null();
    expect(preferring.headers.get('payment-required')).to.equal(plain.headers.get('payment-required'));
    expect(await preferring.json()).to.equal(await plain.json());
  });

  it('a paid job: 202 with Location once verified; the client leaves; the result is fetched later by its one-time link, charged once', async () => {
    const body = { file: { data: jpeg.toString('base64') }, width: 40 };
    const quote = (await (await fetch(`${t.url}/v1/image/resize`, json(body))).json()) as PaymentRequired;
    const payload = await signOnBase(quote, t.evm.payerKey);
    const before = await balances();

    const accepted = await postAndLeave(`${t.url}/v1/image/resize`, body, payload);
    expect(accepted.status).to.equal(202);
    expect(accepted.headers['preference-applied']).to.equal('respond-async');
    expect(accepted.headers['payment-response']).to.not.exist();
    const location = accepted.headers.location!;
    expect(location).to.match(new RegExp(`^${t.url}/v1/jobs/[A-Za-z0-9_-]{43}$`));
    const answered = JSON.parse(accepted.body) as JobAnswer;
    expect(answered.job).to.equal({ url: location, state: 'running' });

    const job = await settled(location);
    expect(job.state).to.equal('done');
    expect(job.error).to.not.exist();
    const result = job.result!;
    expect(result.mediaType).to.equal('image/jpeg');
    expect(job.receipt).to.include({ success: true, network: 'eip155:8453' });
    expect(job.receipt!.transaction).to.match(/^0x[0-9a-f]{64}$/);
    const after = await balances();
    expect(before.payer - after.payer).to.equal(5000n);
    expect(after.payTo - before.payTo).to.equal(5000n);

    // Reading the job again spends nothing; the link gives the bytes once.
    expect((await settled(location)).result).to.equal(result);
    const download = await fetch(result.url);
    expect(download.status).to.equal(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).to.equal(result.bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).to.equal(result.sha256);
    expect((await sharp(bytes).metadata()).width).to.equal(40);
    expect((await fetch(result.url)).status).to.equal(410);
    // The same payment again: it bought this job's result already, nothing more is charged.
    const again = await fetch(`${t.url}/v1/image/resize`, json(body, { prefer: 'respond-async', 'payment-signature': encodePaymentSignatureHeader(payload) }));
    expect(again.status).to.equal(410);
    expect((await balances()).payer).to.equal(after.payer);
  });

  it('a paid job that fails: state failed with the error the synchronous call answers, nothing charged', async () => {
    const body = { file: { data: damaged.toString('base64') }, width: 400 };
    const plain = await fetch(`${t.url}/v1/image/resize`, json(body));
    expect(plain.status).to.equal(402);
    const payload = await signOnBase((await plain.json()) as PaymentRequired, t.evm.payerKey);
    const before = await balances();
    const accepted = await postAndLeave(`${t.url}/v1/image/resize`, body, payload);
    expect(accepted.status).to.equal(202);
    const job = await settled(accepted.headers.location!);
    expect(job.state).to.equal('failed');
    expect(job.result).to.not.exist();
    expect(job.receipt).to.not.exist();
    expect(job.error!.code).to.equal('CORRUPT_INPUT');
    expect(job.error!.status).to.equal(422);
    expect(await balances()).to.equal(before);
    // The same payment, unspent, buys the same refusal synchronously: the job's error is that answer.
    const sync = await fetch(`${t.url}/v1/image/resize`, json(body, { 'payment-signature': encodePaymentSignatureHeader(payload) }));
    expect(sync.status).to.equal(422);
    expect(((await sync.json()) as { error: unknown }).error).to.equal(job.error);
    expect(await balances()).to.equal(before);
  });

  it('with deliver_to, the job PUTs the result there and its done state carries the receipt of the push instead of a link', async () => {
    const body = { file: { data: jpeg.toString('base64') }, width: 36, deliver_to: `${originUrl}/out.jpg` };
    const pay = await t.payFetch();
    const before = await balances();
    const accepted = await pay(`${t.url}/v1/image/resize`, json(body, { prefer: 'respond-async' }));
    expect(accepted.status).to.equal(202);
    const job = await settled(accepted.headers.get('location')!);
    expect(job.state).to.equal('done');
    expect(job.result).to.not.exist();
    expect(job.delivered).to.include({ status: 201, mediaType: 'image/jpeg' });
    const pushed = received.at(-1)!;
    expect(createHash('sha256').update(pushed).digest('hex')).to.equal(job.delivered!.sha256);
    expect((await sharp(pushed).metadata()).width).to.equal(36);
    expect(before.payer - (await balances()).payer).to.equal(5000n);
  });

  it('with the job store full, a paid request with Prefer is refused 503 with Retry-After before its payment is verified; nothing charged', async () => {
    const body = { file: { data: jpeg.toString('base64') }, width: 44 };
    const quote = (await (await fetch(`${t.url}/v1/image/resize`, json(body))).json()) as PaymentRequired;
    const payload = await signOnBase(quote, t.evm.payerKey);
    // A payment that already bought its job.
    const spent = await signOnBase(quote, t.evm.payerKey);
    const bought = await fetch(`${t.url}/v1/image/resize`, json(body, { prefer: 'respond-async', 'payment-signature': encodePaymentSignatureHeader(spent) }));
    expect(bought.status).to.equal(202);
    expect((await settled(bought.headers.get('location')!)).state).to.equal('done');
    // The store filled to its bound by jobs that run on, as long jobs do.
    const jobs = t.service.app.jobs;
    const release: Array<() => void> = [];
    while (jobs.hasRoom()) {
      await jobs.start((accepted) => { accepted(); return new Promise<string>((resolve) => release.push(() => resolve('x'))); }, () => ({ state: 'running' }), 60);
    }
    try {
      const before = await balances();
      const verified = await t.metric('paydoc_payments_total', { stage: 'verified' });
      const refused = await fetch(`${t.url}/v1/image/resize`, json(body, { prefer: 'respond-async', 'payment-signature': encodePaymentSignatureHeader(payload) }));
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('60');
      expect(refused.headers.get('location')).to.be.null();
      const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).to.equal('UNAVAILABLE');
      expect(error.message).to.include('nothing was charged');
      expect(await t.metric('paydoc_payments_total', { stage: 'verified' })).to.equal(verified);
      expect(await balances()).to.equal(before);
      // The payment that bought its job is told so (410), as with room: the full store is no answer to it.
      const again = await fetch(`${t.url}/v1/image/resize`, json(body, { prefer: 'respond-async', 'payment-signature': encodePaymentSignatureHeader(spent) }));
      expect(again.status).to.equal(410);
      expect(await balances()).to.equal(before);
      // Bad input is still named first, and an unpaid request still gets its quote.
      expect((await fetch(`${t.url}/v1/image/resize`, json({ ...body, width: 'wide' }, { prefer: 'respond-async' }))).status).to.equal(422);
      expect((await fetch(`${t.url}/v1/image/resize`, json(body, { prefer: 'respond-async' }))).status).to.equal(402);
    } finally {
      release.forEach((end) => end());
      await new Promise((r) => setImmediate(r));
      jobs.clear();
    }
    // With room again, the same payment, unspent, buys its job.
    const accepted = await fetch(`${t.url}/v1/image/resize`, json(body, { prefer: 'respond-async', 'payment-signature': encodePaymentSignatureHeader(payload) }));
    expect(accepted.status).to.equal(202);
    expect((await settled(accepted.headers.get('location')!)).state).to.equal('done');
  });

  it('bad input with Prefer is refused before payment as without it; an unknown or malformed job token is 404', async () => {
    const bad = await fetch(`${t.url}/v1/image/resize`, json({ file: { data: jpeg.toString('base64') }, width: 'wide' }, { prefer: 'respond-async' }));
    expect(bad.status).to.equal(422);
    for (const token of ['A'.repeat(43), 'short', '../results']) {
      const res = await fetch(`${t.url}/v1/jobs/${token}`);
      expect(res.status, token).to.equal(404);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).to.equal('NOT_FOUND');
    }
    const res = await fetch(`${t.url}/v1/jobs/${'A'.repeat(43)}`);
    expect(((await res.json()) as { error: { message: string } }).error.message).to.include('jobs are kept');
  });

  it('the OpenAPI document declares the Prefer header, the 202 with its Location, and /v1/jobs/{token}', async () => {
    type Response = { headers?: Record<string, unknown>; content?: unknown };
    type Doc = {
      paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
      components: { parameters: Record<string, { name: string }> };
    };
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as Doc;
    const accepted = doc.paths['/v1/image/resize'].post.responses['202'];
    expect(Object.keys(accepted.headers!)).to.equal(['Location', 'Preference-Applied']);
    expect(accepted.content).to.equal({ 'application/json': { schema: { $ref: '#/components/schemas/Job' } } });
    expect(Object.keys(doc.paths['/v1/jobs/{token}'].get.responses)).to.equal(['200', '404', '503']);
    expect(doc.components.parameters.Prefer.name).to.equal('Prefer');
    expect(await (await fetch(`${t.url}/llms.txt`)).text()).to.include(`Prefer: respond-async\` to the paid request and it is answered 202`);
  });

  it('through a payment channel (batch-settlement): a failed job commits no charge, a done one commits its price once', async () => {
    const signer = toClientEvmSigner(privateKeyToAccount(t.evm.payerKey), createPublicClient({ transport: viemHttp(t.evm.rpcUrl) }));
    const scheme = new BatchSettlementEvmScheme(signer, { depositStrategy: () => 30n * 5000n });
    const client = new x402Client().register('eip155:8453', scheme);
    // Only the channel is offered to this buyer, as a buyer that prefers channels picks it.
    const channelOnly: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (res.status !== 402) return res;
      const required = (await res.json()) as PaymentRequired;
      const offer = { ...required, accepts: required.accepts.filter((a) => a.scheme === 'batch-settlement') };
      return new Response(JSON.stringify(offer), { status: 402, headers: { 'content-type': 'application/json', 'payment-required': Buffer.from(JSON.stringify(offer)).toString('base64') } });
    };
    const pay = wrapFetchWithPayment(channelOnly, client) as typeof fetch;
    const before = await balances();

    const failing = await pay(`${t.url}/v1/image/resize`, json({ file: { data: damaged.toString('base64') }, width: 400 }, { prefer: 'respond-async' }));
    expect(failing.status).to.equal(202);
    const failed = await settled(failing.headers.get('location')!);
    expect(failed.state).to.equal('failed');
    expect(failed.error!.code).to.equal('CORRUPT_INPUT');
    // Nothing was settled: no deposit, no charge.
    expect(await balances()).to.equal(before);

    const accepted = await pay(`${t.url}/v1/image/resize`, json({ file: { data: jpeg.toString('base64') }, width: 30 }, { prefer: 'respond-async' }));
    expect(accepted.status).to.equal(202);
    const job = await settled(accepted.headers.get('location')!);
    expect(job.state).to.equal('done');
    const channel = (job.receipt as unknown as { extra: { channelState: { chargedCumulativeAmount: string } } }).extra.channelState;
    expect(channel.chargedCumulativeAmount).to.equal('5000');
    expect((await sharp(Buffer.from(await (await fetch(job.result!.url)).arrayBuffer())).metadata()).width).to.equal(30);
  });

  describe('MCP tasks with the official SDK client', () => {
    const connect = async () => {
      const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
      return client;
    };

    /** Starts a task-augmented call and returns its task id, as the SDK's stream reports it. */
    async function startTask(client: Client, args: Record<string, unknown>, payment?: PaymentPayload): Promise<string> {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'svc_image_resize', arguments: args, ...(payment ? { _meta: { 'x402/payment': payment } } : {}) },
        CallToolResultSchema, { task: { ttl: 60_000 } },
      );
      for await (const message of stream) {
        if (message.type === 'taskCreated') return message.task.taskId;
        throw new Error(`expected the task first, got ${message.type}`);
      }
      throw new Error('no task');
    }

    async function finished(client: Client, taskId: string) {
      for (let i = 0; i < 300; i++) {
        const task = await client.experimental.tasks.getTask(taskId);
        if (task.status !== 'working') return task;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('the task did not end');
    }

    it('the server declares task-augmented tools/call, and every tool may run as a task', async () => {
      const client = await connect();
      try {
        expect(client.getServerCapabilities()?.tasks).to.equal({ requests: { tools: { call: {} } } });
        const { tools } = await client.listTools();
        expect(tools.every((tool) => tool.execution?.taskSupport === 'optional')).to.be.true();
      } finally {
        await client.close();
      }
    });

    it('an unpaid task gets the same quote as a plain call, as its result', async () => {
      const client = await connect();
      try {
        const args = { file: { data: jpeg.toString('base64') }, width: 40 };
        const plain = await client.callTool({ name: 'svc_image_resize', arguments: args });
        const taskId = await startTask(client, args);
        const task = await finished(client, taskId);
        expect(task.status).to.equal('failed');
        expect(task.statusMessage).to.include('payment required');
        const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect(result.isError).to.be.true();
        expect(result.structuredContent).to.equal(plain.structuredContent as Record<string, unknown>);
        expect((result.structuredContent as unknown as PaymentRequired).accepts[0].amount).to.equal('5000');
      } finally {
        await client.close();
      }
    });

    it('a paid task: the client leaves after the task is created, another connection reads the result; charged once', async () => {
      const args = { file: { data: jpeg.toString('base64') }, width: 48 };
      const first = await connect();
      const quote = (await first.callTool({ name: 'svc_image_resize', arguments: args })).structuredContent as unknown as PaymentRequired;
      const payment = await signOnBase(quote, t.evm.payerKey);
      const before = await balances();
      const taskId = await startTask(first, args, payment);
      expect(taskId).to.match(/^[A-Za-z0-9_-]{43}$/);
      await first.close();

      const second = await connect();
      try {
        const task = await finished(second, taskId);
        expect(task.status).to.equal('completed');
        expect(task.ttl!).to.be.above(60_000);
        const result = await second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect(result.isError).to.not.be.true();
        const image = result.content.find((c) => c.type === 'image') as { data: string; mimeType: string };
        expect(image.mimeType).to.equal('image/jpeg');
        expect((await sharp(Buffer.from(image.data, 'base64')).metadata()).width).to.equal(48);
        expect(result._meta?.['x402/payment-response']).to.exist();
        expect(result._meta?.['io.modelcontextprotocol/related-task']).to.equal({ taskId });
        const after = await balances();
        expect(before.payer - after.payer).to.equal(5000n);
        expect(after.payTo - before.payTo).to.equal(5000n);
        // Read again, the same result; nothing more is charged.
        expect((await second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).content).to.equal(result.content);
        expect((await balances()).payer).to.equal(after.payer);
        // No task is listed (ids are the only key, without sessions), none can be cancelled, an unknown id is -32602.
        expect((await second.experimental.tasks.listTasks()).tasks).to.equal([]);
        const cancel = await second.experimental.tasks.cancelTask(taskId).then(() => undefined, (err: unknown) => err);
        expect(cancel).to.be.an.instanceof(McpError);
        const unknown = await second.experimental.tasks.getTask('A'.repeat(43)).then(() => undefined, (err: unknown) => err);
        expect((unknown as McpError).code).to.equal(-32602);
      } finally {
        await second.close();
      }
    });

    it('a paid task that fails: failed, its result the plain call\'s error, nothing charged', async () => {
      const client = await connect();
      try {
        const args = { file: { data: damaged.toString('base64') }, width: 400 };
        const quote = (await client.callTool({ name: 'svc_image_resize', arguments: args })).structuredContent as unknown as PaymentRequired;
        const payment = await signOnBase(quote, t.evm.payerKey);
        const before = await balances();
        const taskId = await startTask(client, args, payment);
        const task = await finished(client, taskId);
        expect(task.status).to.equal('failed');
        expect(task.statusMessage!).to.startWith('CORRUPT_INPUT: ');
        const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect(result.isError).to.be.true();
        expect((result.structuredContent as { error: { code: string } }).error.code).to.equal('CORRUPT_INPUT');
        expect(await balances()).to.equal(before);
      } finally {
        await client.close();
      }
    });

    it('a host that asks for no task keeps the plain call', async () => {
      const client = await connect();
      try {
        const args = { file: { data: jpeg.toString('base64') }, width: 24 };
        const quote = (await client.callTool({ name: 'svc_image_resize', arguments: args })).structuredContent as unknown as PaymentRequired;
        const payment = await signOnBase(quote, t.evm.payerKey);
        const result = await client.callTool({ name: 'svc_image_resize', arguments: args, _meta: { 'x402/payment': payment } });
        expect(result.isError).to.not.be.true();
        expect((result.content as Array<{ type: string }>)[0].type).to.equal('image');
      } finally {
        await client.close();
      }
    });
  });
});

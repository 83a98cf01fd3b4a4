// Files in and out the way agents hold them, on the real local chain: JSON request bodies, files
// given by URL (fetched from loopback origins named in URL_FETCH_ALLOW), results by one-time link
// and pushed to the buyer's URL, and the limit of each surface, with balances read from the chain.
import http from 'node:http';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { startTestService, form, signOnBase, type TestService } from '../support/service.js';
import { balancesOf, errorCode, paidAt, quoteAt, signShortLived } from '../support/paying.js';
import { startSvmRig } from '../../devchains/index.js';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { makePdf, textPages } from '../support/pdf-fixtures.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface Origin {
  url: string;
  hostPort: string;
  /** Requests received, with their method, path and headers. */
  requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders; body: Buffer }>;
  /** What the next requests are answered with (the last entry repeats). */
  answers: Array<{ status: number; body?: Buffer; type?: string; delayMs?: number }>;
  close(): Promise<void>;
}

/** A loopback HTTP server standing for the buyer's storage: it serves inputs and takes PUTs. */
async function startOrigin(): Promise<Origin> {
  const origin: Origin = { url: '', hostPort: '', requests: [], answers: [{ status: 200 }], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      origin.requests.push({ method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
      const answer = origin.answers.length > 1 ? origin.answers.shift()! : origin.answers[0];
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(answer.status, answer.type ? { 'content-type': answer.type } : {});
        res.end(answer.body ?? '');
      }, answer.delayMs ?? 0);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  origin.hostPort = `127.0.0.1:${port}`;
  origin.url = `http://${origin.hostPort}`;
  origin.close = async () => { server.closeAllConnections(); server.close(); };
  return origin;
}

type ToolResult = {
  isError?: boolean; content: Array<{ type: string; uri?: string; mimeType?: string; data?: string }>;
  structuredContent?: Record<string, unknown>;
};

describe('files in and out: JSON bodies, URL inputs, links and pushes', () => {
  let t: TestService;
  let origin: Origin;
  let jpeg: Buffer;
  const pdf1 = makePdf(textPages(1));
  const pdf3 = makePdf(textPages(3));

  before(async () => {
    origin = await startOrigin();
    t = await startTestService({ config: { urlFetchAllow: origin.hostPort, resultLinkTtlS: 2, mcpInlineMaxBytes: 4096 } });
    jpeg = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
  });
  after(async () => { await t?.stop(); await origin?.close(); });

  const balances = () => balancesOf(t.evm);
  const json = (body: unknown) => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

  it('a JSON body is quoted like the multipart form and paid end to end with the unmodified @x402/fetch', async () => {
    const body = { file: { data: jpeg.toString('base64') }, width: 32 };
    const quote = await fetch(`${t.url}/v1/image/resize`, json(body));
    expect(quote.status).to.equal(402);
    expect(((await quote.json()) as PaymentRequired).accepts[0].amount).to.equal('5000');
    const before = await balances();
    const res = await (await t.payFetch())(`${t.url}/v1/image/resize`, json(body));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/jpeg');
    expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).to.equal(32);
    expect(before.payer - (await balances()).payer).to.equal(5000n);
  });

  it('a bad JSON body is a precise 4xx before any 402', async () => {
    const cases: Array<[unknown, number, string, string]> = [
      [{ file: { data: '@@@@' }, width: 32 }, 422, 'FIELD_INVALID', 'file.data is not standard base64'],
      [{ file: 'abc', width: 32 }, 422, 'FIELD_INVALID', '{ "url": "https://…" }'],
      [[1, 2], 422, 'MALFORMED_BODY', 'must be an object'],
      [{ file: { data: jpeg.toString('base64') }, width: 32, delivery: 'carrier-pigeon' }, 422, 'FIELD_INVALID', '"delivery" must be one of'],
      [{ file: { data: jpeg.toString('base64') }, width: 32, delivery: 'link', deliver_to: `${origin.url}/x` }, 422, 'FIELD_INVALID', 'cannot be combined'],
    ];
    for (const [body, status, code, words] of cases) {
      const res = await fetch(`${t.url}/v1/image/resize`, json(body));
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(res.status, JSON.stringify(body).slice(0, 60)).to.equal(status);
      expect(error.code).to.equal(code);
      expect(error.message).to.include(words);
    }
    const broken = await fetch(`${t.url}/v1/image/resize`, { method: 'POST', body: '{"file": ', headers: { 'content-type': 'application/json' } });
    expect(broken.status).to.equal(422);
    expect(await errorCode(broken)).to.equal('MALFORMED_BODY');
  });

  it('a file given by URL is fetched for the quote and again for the paid retry, priced from its bytes', async () => {
    origin.requests.length = 0;
    origin.answers = [{ status: 200, body: pdf3, type: 'application/pdf' }];
    const fileUrl = `${origin.url}/docs/report.pdf?X-Amz-Signature=secret`;
    const quote = await quoteAt(`${t.url}/v1/pdf/extract`, (() => { const f = new FormData(); f.append('file_url', fileUrl); return f; })());
    expect(quote.accepts[0].amount).to.equal('30000');
    const before = await balances();
    const res = await (await t.payFetch())(`${t.url}/v1/pdf/extract`, json({ file: { url: fileUrl } }));
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { text: string }).text).to.include('Page 3');
    expect(before.payer - (await balances()).payer).to.equal(30000n);
    // The JSON body's own quote and its paid retry: two fetches, plus the form's quote.
    expect(origin.requests.length).to.equal(3);
    for (const request of origin.requests) {
      expect(request.path).to.equal('/docs/report.pdf?X-Amz-Signature=secret');
      expect(request.headers.cookie).to.not.exist();
      expect(request.headers.authorization).to.not.exist();
    }
    // The URL is a secret: its path and query are in no log line.
    expect(t.logs.join('\n')).to.not.include('X-Amz-Signature');
    expect(t.logs.join('\n')).to.not.include('report.pdf');
  });

  it('a merge takes URLs and uploads together, in order', async () => {
    origin.answers = [{ status: 200, body: pdf3, type: 'application/pdf' }];
    const body = new FormData();
    body.append('file', new Blob([new Uint8Array(pdf1)]), 'one.pdf');
    body.append('file_url', `${origin.url}/three.pdf`);
    const quote = await quoteAt(`${t.url}/v1/pdf/merge`, body);
    expect(quote.accepts[0].amount).to.equal(String(4 * 5000));
  });

  it('bytes that changed between the quote and the paid retry are re-priced: a 402, nothing charged', async () => {
    origin.answers = [{ status: 200, body: pdf1, type: 'application/pdf' }, { status: 200, body: pdf3, type: 'application/pdf' }];
    const body = json({ file: { url: `${origin.url}/changing.pdf` } });
    const quote = await fetch(`${t.url}/v1/pdf/extract`, body);
    const required = await quote.json() as PaymentRequired;
    expect(required.accepts[0].amount).to.equal('10000');
    const payload = await signOnBase(required, t.evm.payerKey);
    const before = await balances();
    const res = await fetch(`${t.url}/v1/pdf/extract`, { ...body, headers: { ...body.headers, 'payment-signature': Buffer.from(JSON.stringify(payload)).toString('base64') } });
    expect(res.status).to.equal(402);
    expect(((await res.json()) as PaymentRequired).accepts[0].amount).to.equal('30000');
    expect(await balances()).to.equal(before);
  });

  it('an origin that fails, a refused address and URL inputs turned off are 4xx before any 402', async () => {
    origin.answers = [{ status: 404 }];
    const missing = await fetch(`${t.url}/v1/pdf/extract`, json({ file: { url: `${origin.url}/gone.pdf` } }));
    expect(missing.status).to.equal(422);
    const body = (await missing.json()) as { error: { code: string; message: string; field: string } };
    expect(body.error.code).to.equal('URL_FETCH_FAILED');
    expect(body.error.message).to.include('404');
    expect(body.error.field).to.equal('file.url');

    const trap = await startOrigin();
    try {
      const refused = await fetch(`${t.url}/v1/pdf/extract`, json({ file: { url: `${trap.url}/x.pdf` } }));
      expect(refused.status).to.equal(422);
      expect(await errorCode(refused)).to.equal('URL_REFUSED');
      const push = await fetch(`${t.url}/v1/pdf/extract`, json({ file: { data: pdf1.toString('base64') }, deliver_to: `${trap.url}/out` }));
      expect(push.status).to.equal(422);
      expect(await errorCode(push)).to.equal('URL_REFUSED');
      expect(trap.requests.length).to.equal(0);
    } finally {
      await trap.close();
    }

    const off = await startTestService({ config: { urlInputs: 'off', urlFetchAllow: origin.hostPort }, rigs: { evm: t.evm } });
    try {
      const res = await fetch(`${off.url}/v1/pdf/extract`, json({ file: { url: `${origin.url}/x.pdf` } }));
      expect(res.status).to.equal(422);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).to.equal('URL_REFUSED');
      expect(error.message).to.include('URL_INPUTS');
    } finally {
      await off.stop();
    }
  });

  it('an input past the operation\'s limit at the URL is cut: 413 before any 402', async () => {
    origin.answers = [{ status: 200, body: Buffer.alloc(2 * 1024 * 1024, 0x61), type: 'text/markdown' }];
    const res = await fetch(`${t.url}/v1/pdf/from-markdown`, json({ file: { url: `${origin.url}/huge.md` } }));
    expect(res.status).to.equal(413);
    expect(await errorCode(res)).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('delivery=link: the answer is a link that gives the bytes once, then 410; an unused link expires', async () => {
    const before = await balances();
    const res = await (await t.payFetch())(`${t.url}/v1/image/resize`, json({ file: { data: jpeg.toString('base64') }, width: 40, delivery: 'link' }));
    expect(res.status).to.equal(200);
    type Link = { url: string; mediaType: string; bytes: number; sha256: string; expiresAt: string };
    const { result } = (await res.json()) as { result: Link };
    expect(result.url.startsWith(`${t.url}/v1/results/`)).to.equal(true);
    expect(result.mediaType).to.equal('image/jpeg');
    expect(Date.parse(result.expiresAt) - Date.now()).to.be.within(0, 2000);
    expect(before.payer - (await balances()).payer).to.equal(5000n);
    const download = await fetch(result.url);
    expect(download.status).to.equal(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).to.equal(result.bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).to.equal(result.sha256);
    expect((await sharp(bytes).metadata()).width).to.equal(40);
    const again = await fetch(result.url);
    expect(again.status).to.equal(410);
    expect(await errorCode(again)).to.equal('RESULT_GONE');
    expect(t.logs.join('\n')).to.not.include(result.url.split('/').pop()!);

    const multipart = form([jpeg], { width: 20, delivery: 'link' });
    const unused = await (await t.payFetch())(`${t.url}/v1/image/resize`, { method: 'POST', body: multipart });
    const link = ((await unused.json()) as { result: { url: string } }).result.url;
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect((await fetch(link)).status).to.equal(410);
  });

  it('delivery=link: a HEAD and a Range request spend nothing; the full GET after them gets the whole body, then 410', async () => {
    const res = await (await t.payFetch())(`${t.url}/v1/image/resize`, json({ file: { data: jpeg.toString('base64') }, width: 48, delivery: 'link' }));
    expect(res.status).to.equal(200);
    const { result } = (await res.json()) as { result: { url: string; bytes: number; sha256: string } };
    const head = await fetch(result.url, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(head.headers.get('content-length')).to.equal(String(result.bytes));
    expect((await head.arrayBuffer()).byteLength).to.equal(0);
    const range = await fetch(result.url, { headers: { range: 'bytes=0-9' } });
    expect(range.status).to.equal(206);
    expect((await range.arrayBuffer()).byteLength).to.equal(10);
    const tail = await fetch(result.url, { headers: { range: `bytes=${result.bytes - 5}-` } });
    expect(tail.status).to.equal(206);
    expect((await tail.arrayBuffer()).byteLength).to.equal(5);
    const full = await fetch(result.url);
    expect(full.status).to.equal(200);
    const bytes = Buffer.from(await full.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).to.equal(result.sha256);
    const again = await fetch(result.url);
    expect(again.status).to.equal(410);
    expect(await errorCode(again)).to.equal('RESULT_GONE');
  });

  it('deliver_to: the result is PUT to the buyer\'s URL with its media type, settled after the 2xx; a refused PUT charges nothing', async () => {
    origin.requests.length = 0;
    origin.answers = [{ status: 201 }];
    const before = await balances();
    const res = await (await t.payFetch())(`${t.url}/v1/image/resize`, json({ file: { data: jpeg.toString('base64') }, width: 24, deliver_to: `${origin.url}/bucket/out.jpg?sig=abc` }));
    expect(res.status).to.equal(200);
    const { delivered } = (await res.json()) as { delivered: { status: number; bytes: number; sha256: string; mediaType: string } };
    expect(delivered.status).to.equal(201);
    expect(delivered.mediaType).to.equal('image/jpeg');
    const put = origin.requests.find((r) => r.method === 'PUT')!;
    expect(put.path).to.equal('/bucket/out.jpg?sig=abc');
    expect(put.headers['content-type']).to.equal('image/jpeg');
    expect(put.body.length).to.equal(delivered.bytes);
    expect(createHash('sha256').update(put.body).digest('hex')).to.equal(delivered.sha256);
    expect((await sharp(put.body).metadata()).width).to.equal(24);
    expect(before.payer - (await balances()).payer).to.equal(5000n);

    origin.answers = [{ status: 500 }];
    const mid = await balances();
    const refused = await (await t.payFetch())(`${t.url}/v1/image/resize`, json({ file: { data: jpeg.toString('base64') }, width: 24, deliver_to: `${origin.url}/bucket/out.jpg` }));
    expect(refused.status).to.equal(502);
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).to.equal('DELIVERY_FAILED');
    expect(error.message).to.include('500');
    expect(await balances()).to.equal(mid);
  });

  it('deliver_to with a payment that expires before the work and the push can end: a 402 naming the time it needs, before the work; the target sees nothing', async () => {
    origin.requests.length = 0;
    origin.answers = [{ status: 200, delayMs: 5000 }];
    const url = `${t.url}/v1/image/resize`;
    const body = () => form([jpeg], { width: 24, deliver_to: `${origin.url}/bucket/short.jpg` });
    const pr = await quoteAt(url, body());
    const { payload } = await signShortLived(pr, t.evm.payerKey, 9);
    const before = await balances();
    const jobs = await t.metric('paydoc_jobs_total', { outcome: 'started' });
    const res = await paidAt(url, body(), payload);
    expect(res.status).to.equal(402);
    const reason = decodePaymentRequiredHeader(res.headers.get('payment-required')!).error!;
    expect(reason).to.match(/expires in [0-9] s .* needs it valid for at least \d+ s/);
    expect(reason).to.contain('the push to deliver_to (20 s)');
    expect(reason).to.contain('nothing was charged');
    expect(origin.requests.filter((r) => r.method === 'PUT')).to.have.length(0);
    expect(await t.metric('paydoc_jobs_total', { outcome: 'started' })).to.equal(jobs);
    expect(await balances()).to.equal(before);
    // Signed for the standard client's 300 s, the same request is pushed and charged once.
    origin.answers = [{ status: 200 }];
    const paid = await paidAt(url, body(), await signOnBase(pr, t.evm.payerKey));
    expect(paid.status).to.equal(200);
    expect(origin.requests.filter((r) => r.method === 'PUT')).to.have.length(1);
    expect(before.payer - (await balances()).payer).to.equal(5000n);
  });

  it('deliver_to paid on Solana is refused before the work (its transaction lives about a minute); link delivery on Solana is paid as usual', async () => {
    const svm = await startSvmRig();
    const withSolana = await startTestService({ rigs: { evm: t.evm, svm }, config: { urlFetchAllow: origin.hostPort } });
    try {
      origin.requests.length = 0;
      const pay = await withSolana.payFetch('solana');
      const before = await svm.balanceOf(svm.payerAddress);
      const pushed = await pay(`${withSolana.url}/v1/image/resize`, json({ file: { data: jpeg.toString('base64') }, width: 24, deliver_to: `${origin.url}/bucket/sol.jpg` }));
      expect(pushed.status).to.equal(402);
      const reason = decodePaymentRequiredHeader(pushed.headers.get('payment-required')!).error!;
      expect(reason).to.contain('pay on Base (eip155:8453) for deliver_to, or ask for delivery=link');
      expect(origin.requests.filter((r) => r.method === 'PUT')).to.have.length(0);
      expect(await svm.balanceOf(svm.payerAddress)).to.equal(before);
      const linked = await pay(`${withSolana.url}/v1/image/resize`, json({ file: { data: jpeg.toString('base64') }, width: 24, delivery: 'link' }));
      expect(linked.status).to.equal(200);
      expect(before - await svm.balanceOf(svm.payerAddress)).to.equal(5000n);
    } finally {
      await withSolana.stop();
      await svm.stop();
    }
  });

  it('MCP: a result past the inline limit is refused uncharged (413), and the same call with delivery link gets a resource_link', async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      // Noise: its PNG cannot shrink under the 4 KB inline limit this service is given.
      const noisy = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg().toBuffer();
      const args = { file: { data: noisy.toString('base64') }, width: 300, format: 'png' };
      const quote = await client.callTool({ name: 'svc_image_resize', arguments: args }) as ToolResult;
      const payment = await signOnBase(quote.structuredContent as unknown as PaymentRequired, t.evm.payerKey);
      const before = await balances();
      const tooLarge = await client.callTool({ name: 'svc_image_resize', arguments: args, _meta: { 'x402/payment': payment } }) as ToolResult;
      expect(tooLarge.isError).to.equal(true);
      expect((tooLarge.structuredContent as { error: { code: string; status: number; message: string } }).error).to.include({ code: 'RESULT_TOO_LARGE', status: 413 });
      expect(await balances()).to.equal(before);

      // The same payment, unspent, buys the result by link.
      const linked = await client.callTool({ name: 'svc_image_resize', arguments: { ...args, delivery: 'link' }, _meta: { 'x402/payment': payment } }) as ToolResult;
      expect(linked.isError).to.not.exist();
      expect(linked.content[0].type).to.equal('resource_link');
      expect(linked.content[0].mimeType).to.equal('image/png');
      const bytes = Buffer.from(await (await fetch(linked.content[0].uri!)).arrayBuffer());
      expect((await sharp(bytes).metadata()).width).to.equal(300);
      expect(before.payer - (await balances()).payer).to.equal(5000n);
    } finally {
      await client.close();
    }
  });

  it('a client that leaves while its result is being pushed is not charged: the push is abandoned unanswered', async () => {
    origin.requests.length = 0;
    origin.answers = [{ status: 201, delayMs: 3000 }];
    const before = await balances();
    const leaving = new AbortController();
    const call = (await t.payFetch('base', ((url: string, init?: RequestInit) => fetch(url, { ...init, signal: leaving.signal })) as typeof fetch))(`${t.url}/v1/image/resize`, json({ file: { data: jpeg.toString('base64') }, width: 24, deliver_to: `${origin.url}/slow` }));
    for (let i = 0; i < 200 && !origin.requests.some((r) => r.method === 'PUT'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(origin.requests.some((r) => r.method === 'PUT')).to.equal(true);
    leaving.abort();
    await call.catch(() => undefined);
    for (let i = 0; i < 100 && (await t.metric('paydoc_payments_total', { stage: 'cancelled_client_gone' })) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    expect(await balances()).to.equal(before);
  });

  it('HTTP paid retry with the same payment after a refused delivery: the payment is still unspent', async () => {
    origin.answers = [{ status: 503 }];
    const body = form([jpeg], { width: 16, deliver_to: `${origin.url}/again` });
    const quote = await quoteAt(`${t.url}/v1/image/resize`, body);
    const payload = await signOnBase(quote, t.evm.payerKey);
    const first = await paidAt(`${t.url}/v1/image/resize`, form([jpeg], { width: 16, deliver_to: `${origin.url}/again` }), payload);
    expect(first.status).to.equal(502);
    origin.answers = [{ status: 200 }];
    const before = await balances();
    const second = await paidAt(`${t.url}/v1/image/resize`, form([jpeg], { width: 16, deliver_to: `${origin.url}/again` }), payload);
    expect(second.status).to.equal(200);
    expect(before.payer - (await balances()).payer).to.equal(5000n);
  });
});

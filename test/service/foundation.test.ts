// The foundation: the table and the routes agree, errors have one shape and the right status,
// checks come before payment, back-pressure, configuration, and logs that carry no file names or
// contents. (Running a tool is tested in test/unit/tools/process/.)
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { operations } from '../../operations/index.js';
import { workFunctionFor } from '../../workers/work-functions.js';
import { ERROR_CATALOG, ServiceError, type ErrorCode } from '../../core/errors.js';
import { loadConfig, ConfigError, ENVIRONMENT_VARIABLES } from '../../server/config.js';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { LazyJobDir, SYNC_BYTES } from '../../server/jobdir.js';
import { startTestService, form, type TestService } from '../support/service.js';
import { makePdf, photographedPage, textPages } from '../support/pdf-fixtures.js';
import { quoteAt } from '../support/paying.js';
import Hapi from '@hapi/hapi';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { BodyBuffers, streamedPayload, withBody } from '../../server/plugins/body.js';
import { decodePaymentRequiredHeader } from '@x402/core/http';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('the operation table', () => {
  it('declares 35 operations, 6 image, 28 PDF and 1 Office, with unique paths and svc_ tool names', async () => {
    expect(operations.length).to.equal(35);
    expect(operations.filter((op) => op.path.startsWith('/v1/image/')).length).to.equal(6);
    expect(operations.filter((op) => op.path.startsWith('/v1/pdf/')).length).to.equal(28);
    expect(operations.filter((op) => op.path.startsWith('/v1/office/')).length).to.equal(1);
    expect(new Set(operations.map((op) => op.path)).size).to.equal(35);
    expect(new Set(operations.map((op) => op.tool)).size).to.equal(35);
    for (const op of operations) {
      expect(op.tool).to.match(/^svc_[a-z_]+$/);
      expect(op.price.rate).to.be.above(0);
      expect(await workFunctionFor(op.id)(), `${op.id} has no work function`).to.be.a.function();
    }
    // Derived from the id and the price: what the specification lists.
    const byId = (id: string) => operations.find((o) => o.id === id)!;
    expect([byId('pdf.merge-compress').path, byId('pdf.merge-compress').tool]).to.equal(['/v1/pdf/merge-compress', 'svc_pdf_merge_compress']);
    expect([byId('image.ocr').path, byId('image.ocr').tool]).to.equal(['/v1/image/ocr', 'svc_image_ocr']);
    expect(Object.fromEntries(operations.filter((o) => o.maxAmount !== undefined).map((o) => [o.id, o.maxAmount]))).to.equal({
      'pdf.redact': 10000000, 'pdf.render': 500000, 'pdf.ocr': 900000, 'pdf.searchable': 1000000, 'pdf.tables': 900000, 'pdf.structured': 1200000,
      'pdf.from-images': 500000,
    });
  });

  it('treats password, schema, direction and angle as required', () => {
    const required = (id: string, name: string) => operations.find((o) => o.id === id)!.fields.find((f) => f.name === name)!.required;
    expect(required('pdf.protect', 'password')).to.equal(true);
    expect(required('pdf.unlock', 'password')).to.equal(true);
    expect(required('pdf.structured', 'schema')).to.equal(true);
    expect(required('image.flip', 'direction')).to.equal(true);
    expect(required('image.rotate', 'angle')).to.equal(true);
  });
});

describe('errors', () => {
  it('every code maps to its status and the one body shape', () => {
    for (const code of Object.keys(ERROR_CATALOG) as ErrorCode[]) {
      const err = new ServiceError(code, 'a message', { field: 'x' });
      expect(err.status).to.equal(ERROR_CATALOG[code].status);
      expect(err.body()).to.equal({ error: { code, status: ERROR_CATALOG[code].status, message: 'a message', field: 'x' } });
    }
    expect(new ServiceError('PAYLOAD_TOO_LARGE').status).to.equal(413);
    expect(new ServiceError('FIELD_INVALID').status).to.equal(422);
    expect(new ServiceError('NOT_IMPLEMENTED').status).to.equal(501);
    expect(new ServiceError('QUEUE_FULL').status).to.equal(503);
    expect(new ServiceError('FACILITATOR_UNREACHABLE').status).to.equal(502);
  });
});

describe('configuration', () => {
  it('stops the boot with a message naming the setting', () => {
    expect(() => loadConfig({}, { PORT: 'eighty' })).to.throw(ConfigError, /PORT/);
    expect(() => loadConfig({}, { PAYMENTS: 'sometimes' })).to.throw(ConfigError, /PAYMENTS/);
    expect(() => loadConfig({}, { OCR_ENGINE: 'magic' })).to.throw(ConfigError, /OCR_ENGINE/);
    expect(() => loadConfig({}, { PAYMENTS: 'live' })).to.throw(ConfigError, /EVM_FACILITATOR_URL or SVM_FACILITATOR_URL/);
    expect(() => loadConfig({}, { PAYMENTS: 'live', EVM_FACILITATOR_URL: 'http://x' })).to.throw(ConfigError, /EVM_PAY_TO/);
    const ok = loadConfig({}, { PORT: '9000', WORKERS: '3' });
    expect(ENVIRONMENT_VARIABLES.length).to.be.above(25);
    expect(ok.port).to.equal(9000);
    expect(ok.workers).to.equal(3);
    expect(ok.baseUrl).to.equal('http://localhost:9000');
  });
});

describe('the README', () => {
  // The configuration table is held to the schema by test/docs-configuration.test.ts.
  it('gives the two Quick start commands', async () => {
    const readme = await readFile(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../README.md'), 'utf8');
    const start = readme.indexOf('## Quick start');
    const quick = readme.slice(start, readme.indexOf('\n## ', start + 1));
    expect(quick.match(/^npm \w+/gm)).to.equal(['npm start', 'npm test']);
  });
});

describe('job directories', () => {
  let root: string;
  before(async () => { root = await mkdtemp(path.join('/dev/shm', 'paydoc-jobdir-test-')); });
  after(() => rm(root, { recursive: true, force: true }));

  // Small requests take the synchronous calls, larger ones the async ones: both must end the same.
  for (const [label, size] of [['a small upload (synchronous calls)', 24 * 1024], ['an upload over the synchronous limit (async calls)', SYNC_BYTES + 1]] as const) {
    it(`writes ${label} privately and removes the whole directory, once`, async () => {
      const jobs = path.join(root, `jobs-${size}`);
      const dir = new LazyJobDir(jobs);
      await dir.remove();
      expect(await readdir(root)).to.not.include(`jobs-${size}`);
      const bytes = new Uint8Array(size).map((_, i) => i % 251);
      const file = await dir.write('input-1.pdf', bytes);
      expect(path.dirname(file)).to.equal(dir.path());
      expect(statSync(dir.path()).mode & 0o777).to.equal(0o700);
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      expect(new Uint8Array(readFileSync(file))).to.equal(bytes);
      // What a worker may have left (a scratch directory) goes too.
      mkdirSync(path.join(dir.path(), 'work-x', 'deep'), { recursive: true });
      await dir.remove();
      expect(await readdir(jobs)).to.equal([]);
      await dir.remove();
      expect(await readdir(jobs)).to.equal([]);
    });
  }

  it('keeps every file of a request whose uploads cross the synchronous limit together', async () => {
    const jobs = path.join(root, 'jobs-several');
    const dir = new LazyJobDir(jobs);
    const parts = [1, 2, 3].map((n) => new Uint8Array(Math.ceil(SYNC_BYTES * 0.6)).fill(n));
    const files = [];
    for (const [i, bytes] of parts.entries()) files.push(await dir.write(`input-${i + 1}.pdf`, bytes));
    for (const [i, file] of files.entries()) expect(new Uint8Array(readFileSync(file))).to.equal(parts[i]);
    await dir.remove();
    expect(await readdir(jobs)).to.equal([]);
  });
});

describe('the HTTP front end', () => {
  let t: TestService;
  let jpeg: Buffer;
  before(async () => {
    t = await startTestService({ config: { workers: 1, queueMax: 0 } });
    jpeg = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#884422' } }).jpeg().toBuffer();
  });
  after(async () => { await t?.stop(); });

  it('registers one POST route per operation, and the free endpoints', () => {
    const routes = t.service.server.table().map((r) => `${r.method.toUpperCase()} ${r.path}`);
    for (const op of operations) expect(routes).to.include(`POST ${op.path}`);
    for (const free of ['GET /v1/health', 'GET /openapi.json', 'GET /v1/openapi.json', 'GET /v1/discovery', 'GET /metrics', 'POST /mcp', 'GET /mcp', 'DELETE /mcp']) {
      expect(routes).to.include(free);
    }
  });

  it('health reports the version and the engines (binaries), and 503 when one is missing', async () => {
    const res = await fetch(`${t.url}/v1/health`);
    expect(res.status).to.equal(200);
    const body = await res.json() as { status: string; version: string; binaries: Record<string, boolean> };
    expect(body.status).to.equal('ok');
    expect(body.version).to.equal('0.1.0');
    expect(body.binaries).to.include({ qpdf: true, mutool: true, gs: true });
    t.service.app.engines.qpdf = false;
    try {
      const degraded = await fetch(`${t.url}/v1/health`);
      expect(degraded.status).to.equal(503);
      expect(((await degraded.json()) as { missing: string[] }).missing).to.equal(['qpdf']);
    } finally {
      t.service.app.engines.qpdf = true;
    }
  });

  it('an over-limit upload gets 413 and a bad field 422, with no payment asked', async () => {
    const big = new Uint8Array(51 * 1024 * 1024);
    const res = await fetch(`${t.url}/v1/image/compress`, { method: 'POST', body: form([big]) });
    expect(res.status).to.equal(413);
    expect(res.headers.get('payment-required')).to.be.null();
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('PAYLOAD_TOO_LARGE');

    const bad = await fetch(`${t.url}/v1/image/compress`, { method: 'POST', body: form([jpeg], { quality: 101 }) });
    expect(bad.status).to.equal(422);
    expect(bad.headers.get('payment-required')).to.be.null();
    const body = await bad.json() as { error: { code: string; field: string; message: string } };
    expect(body.error).to.include({ code: 'FIELD_INVALID', field: 'quality' });
    expect(body.error.message).to.equal('"quality" must be an integer from 1 to 100; received 101');
  });

  it('unpaid bodies share reused buffers without mixing: interleaved quotes of PDFs of the same size class each get their own page count, and a chunked upload without Content-Length is read too', { timeout: 60_000 }, async () => {
    // Two large pages and a small third: both documents in the same size class.
    const pages = await Promise.all([photographedPage(700, 900), photographedPage(720, 920), photographedPage(200, 260)]);
    const pdfOf = (n: number) => makePdf(pages.slice(0, n).map((p) => ({ jpeg: p })));
    const [two, three] = [pdfOf(2), pdfOf(3)];
    // Same power-of-two size class, above the smallest lent size: the second may reuse the first's buffer.
    expect(Math.ceil(Math.log2(two.length))).to.equal(Math.ceil(Math.log2(three.length)));
    expect(two.length).to.be.above(64 * 1024);
    const op = operations.find((o) => o.path === '/v1/pdf/compress')!;
    const quoted = async (pdf: Uint8Array) => BigInt((await quoteAt(`${t.url}${op.path}`, form([pdf]))).accepts[0]!.amount);
    const rate = BigInt(op.price.rate);
    const order = [three, two, two, three, two, three, three, two];
    const amounts = await Promise.all(order.map((pdf) => quoted(pdf)));
    expect(amounts).to.equal(order.map((pdf) => (pdf === three ? 3n : 2n) * rate));
    for (const pdf of order) expect(await quoted(pdf)).to.equal((pdf === three ? 3n : 2n) * rate);

    // A streamed body (chunked transfer encoding, no Content-Length) is read whole as well.
    const multipart = new Response(form([three]));
    const type = multipart.headers.get('content-type')!;
    const bytes = new Uint8Array(await multipart.arrayBuffer());
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < bytes.length; i += 10_000) c.enqueue(bytes.subarray(i, i + 10_000));
        c.close();
      },
    });
    const res = await fetch(`${t.url}${op.path}`, { method: 'POST', body: stream, headers: { 'content-type': type }, duplex: 'half' } as RequestInit);
    expect(res.status).to.equal(402);
    expect(BigInt(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts[0]!.amount)).to.equal(3n * rate);
  });

  it('a body buffer given back keeps nothing of the body it held, and one handed on to a worker is not kept', () => {
    const buffers = new BodyBuffers(1024 * 1024, 2);
    const first = buffers.take(70_000);
    expect(first.length).to.equal(128 * 1024);
    first.fill(0x41, 0, 70_000);
    buffers.give(first, 70_000);
    const again = buffers.take(100_000);
    expect(again.buffer).to.shallow.equal(first.buffer);
    expect(again.subarray(0, 70_000).every((b) => b === 0)).to.be.true();
    // A transfer detaches the buffer: it cannot come back.
    structuredClone(again.buffer, { transfer: [again.buffer as ArrayBuffer] });
    buffers.give(again, 100_000);
    expect(buffers.take(100_000).buffer).to.not.shallow.equal(first.buffer);
  });

  it('a lent body buffer serves one body at a time: a body still in use keeps its bytes while others of its size class are read, and is reused after', async () => {
    const server = Hapi.server({ port: 0, host: '127.0.0.1' });
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const arrivals: Array<() => void> = [];
    const arrived = (n: number) => new Promise<void>((r) => { arrivals[n] = r; });
    server.route({
      method: 'POST', path: '/{n}', options: { payload: streamedPayload(['application/octet-stream'], 1024 * 1024) },
      handler: (request) => withBody(request, 10_000, true, async (body) => {
        const n = Number(request.params.n);
        arrivals[n]?.();
        // The first body is held while the second is read into a buffer of the same class.
        if (n === 0) await held;
        return { n, sum: createHash('sha256').update(body).digest('hex'), length: body.length };
      }),
    });
    await server.start();
    try {
      const bodies = [Buffer.alloc(200_000, 1), Buffer.alloc(150_000, 2), Buffer.alloc(180_000, 3)];
      const post = (n: number) => fetch(`${server.info.uri}/${n}`, { method: 'POST', body: bodies[n], headers: { 'content-type': 'application/octet-stream' } }).then((r) => r.json());
      const firstIn = arrived(0);
      const first = post(0);
      await firstIn;
      const second = await post(1);
      release();
      const third = await post(2);
      const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      expect(await first).to.equal({ n: 0, sum: digest(bodies[0]!), length: 200_000 });
      expect(second).to.equal({ n: 1, sum: digest(bodies[1]!), length: 150_000 });
      expect(third).to.equal({ n: 2, sum: digest(bodies[2]!), length: 180_000 });
    } finally {
      await server.stop();
    }
  });

  it('a gzip-encoded upload is decoded, checked and paid like any other: the result is right and the price moves on the chain once', { timeout: 60_000 }, async () => {
    const photo = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#336699' } }).jpeg().toBuffer();
    const multipart = new Response(form([photo], { width: 300 }));
    const type = multipart.headers.get('content-type')!;
    const body = gzipSync(Buffer.from(await multipart.arrayBuffer()));
    const before = await t.evm.balanceOf(t.evm.payerAddress);
    const payFetch = await t.payFetch('base');
    const res = await payFetch(`${t.url}/v1/image/resize`, { method: 'POST', body, headers: { 'content-type': type, 'content-encoding': 'gzip' } });
    expect(res.status).to.equal(200);
    expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).to.equal(300);
    const rate = BigInt(operations.find((o) => o.path === '/v1/image/resize')!.price.rate);
    expect(before - await t.evm.balanceOf(t.evm.payerAddress)).to.equal(rate);
  });

  it('compresses large bodies for clients that accept gzip, but not a quote\'s few kilobytes', async () => {
    const openapi = await fetch(`${t.url}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } });
    expect(openapi.headers.get('content-encoding')).to.equal('gzip');
    expect((await openapi.json() as { openapi: string }).openapi).to.match(/^3\./);
    const quote = await fetch(`${t.url}/v1/image/compress`, { method: 'POST', body: form([jpeg]), headers: { 'accept-encoding': 'gzip' } });
    expect(quote.status).to.equal(402);
    expect(quote.headers.get('content-encoding')).to.be.null();
    expect((await quote.json() as { x402Version: number }).x402Version).to.equal(2);
  });

  it('a full queue answers 503 with Retry-After before any payment', async () => {
    const heavy = makePdf(textPages(40));
    const payFetch = await t.payFetch('base');
    const busy = payFetch(`${t.url}/v1/pdf/render`, { method: 'POST', body: form([heavy], { dpi: 300 }) });
    // Wait until the paid job holds the only worker.
    for (let i = 0; i < 200 && t.service.app.pool.busy === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(t.service.app.pool.busy).to.equal(1);
    const res = await fetch(`${t.url}/v1/image/compress`, { method: 'POST', body: form([jpeg]) });
    expect(res.status).to.equal(503);
    expect(res.headers.get('retry-after')).to.equal('5');
    expect(res.headers.get('payment-required')).to.be.null();
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('QUEUE_FULL');
    expect((await busy).status).to.equal(200);
  });

  it('logs one line per request with sizes and timings, never file names, contents or passwords', async () => {
    const name = 'Zanzibar-confidential-contract-7781.pdf';
    const secretText = 'QUOKKA-SECRET-PAYLOAD-4242';
    const pdf = makePdf([{ text: secretText }]);
    const payFetch = await t.payFetch('base');
    const res = await payFetch(`${t.url}/v1/pdf/protect`, { method: 'POST', body: form([{ bytes: pdf, name }], { password: 'hunter2-PASSWORD-xyz' }) });
    expect(res.status).to.equal(200);
    const extract = await payFetch(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form([{ bytes: pdf, name }]) });
    expect(((await extract.json()) as { text: string }).text).to.contain(secretText);
    const all = t.logs.join('\n');
    expect(all).to.contain('"operation":"pdf.protect"');
    expect(all).to.contain('"status":200');
    for (const secret of ['Zanzibar', secretText, 'hunter2', 'QUOKKA']) expect(all).to.not.contain(secret);
  });

  it('the CORS preflight of a paid retry from another origin allows the headers the standard x402 clients send', async () => {
    // @x402/fetch and @x402/axios add Access-Control-Expose-Headers to the paid retry.
    const res = await fetch(`${t.url}/v1/image/resize`, {
      method: 'OPTIONS',
      headers: { origin: 'https://buyer.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'payment-signature,access-control-expose-headers,content-type' },
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('access-control-allow-origin')).to.equal('https://buyer.example');
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',').map((h) => h.trim());
    for (const header of ['payment-signature', 'access-control-expose-headers', 'content-type']) expect(allowed).to.include(header);
  });

  it('GET and DELETE on /mcp answer 405', async () => {
    expect((await fetch(`${t.url}/mcp`)).status).to.equal(405);
    expect((await fetch(`${t.url}/mcp`, { method: 'DELETE' })).status).to.equal(405);
  });

  it('unknown paths get 404 in the one error shape', async () => {
    const res = await fetch(`${t.url}/v1/pdf/nothing`, { method: 'POST' });
    expect(res.status).to.equal(404);
    expect(await res.json()).to.equal({ error: { code: 'NOT_FOUND', status: 404, message: 'no such resource' } });
  });

  it('leaves the job directory empty', async () => {
    expect(await readdir(t.tmpDir)).to.equal([]);
  });
});

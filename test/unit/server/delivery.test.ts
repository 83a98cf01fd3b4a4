// The limits of each way a result leaves (server/delivery.ts), met before settlement: a result
// the surface cannot carry inline or cannot encode, a link store that is full or too small; what
// a link records for the other replicas (never its token), and a push's receipt from a real
// origin on loopback.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import http from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { ResultLinks, endLink, linkHolder, linkRegistryKey, prepareDelivery, type Surface } from '../../../server/delivery.js';
import { MemoryGuard } from '../../../server/payment/guard.js';
import { RedisGuard } from '../../../server/payment/redis-guard.js';
import { outboundRules } from '../../../server/outbound/fetcher.js';
import { loadConfig } from '../../../server/config.js';
import { ServiceError } from '../../../core/errors.js';
import type { JobOutput } from '../../../core/job.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const output = (bytes: number): JobOutput => ({ body: new Uint8Array(bytes), mediaType: 'application/zip' });
const surface = (maxInlineBytes: number, encode: Surface<string>['encode'] = (o) => Buffer.from(o.body).toString('base64')): Surface<string> => ({ maxInlineBytes, linkHint: 'ask for a link', encode, heldBytesOf: (o) => Math.ceil(o.body.byteLength / 3) * 4 });
const context = (links = new ResultLinks(60_000)) => ({ links, outbound: outboundRules(loadConfig({}, {})), baseUrl: 'https://paydoc.example' });

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).to.be.an.instanceof(ServiceError);
  return err as ServiceError;
}

describe('delivery limits', () => {
  it('inline: a result over the surface\'s limit is 413 RESULT_TOO_LARGE naming both sizes and the way out', async () => {
    const err = await refusal(prepareDelivery(output(2048), { kind: 'inline' }, undefined, surface(1024), context()));
    expect(err.code).to.equal('RESULT_TOO_LARGE');
    expect(err.status).to.equal(413);
    expect(err.message).to.include('2048 bytes');
    expect(err.message).to.include('nothing was charged: ask for a link');
    const ok = await prepareDelivery(output(1024), { kind: 'inline' }, undefined, surface(1024), context());
    expect(ok.kind).to.equal('inline');
    // Held for a retry, it counts what the surface's encoding keeps: 1024 bytes as base64.
    expect(ok.heldBytes).to.equal(1368);
  });

  it('inline: a result the runtime cannot encode (past V8\'s string limit) is the same 413, never an error after payment', async () => {
    const err = await refusal(prepareDelivery(output(16), { kind: 'inline' }, undefined, surface(1024, () => { throw new RangeError('Invalid string length'); }), context()));
    expect(err.code).to.equal('RESULT_TOO_LARGE');
  });

  it('link: a result larger than the store is 413, a full store 503 with nothing kept; a discarded link is gone', async () => {
    const links = new ResultLinks(60_000, { maxBytes: 1000, maxCount: 2 });
    const tooLarge = await refusal(prepareDelivery(output(1001), { kind: 'link' }, undefined, surface(0), context(links)));
    expect(tooLarge.code).to.equal('RESULT_TOO_LARGE');
    const first = await prepareDelivery(output(600), { kind: 'link' }, undefined, surface(0), context(links));
    const full = await refusal(prepareDelivery(output(600), { kind: 'link' }, undefined, surface(0), context(links)));
    expect(full.code).to.equal('UNAVAILABLE');
    expect(full.status).to.equal(503);
    expect(links.size).to.equal({ count: 1, bytes: 600 });
    expect(first.kind).to.equal('link');
    if (first.kind !== 'link') return;
    expect(first.result.url).to.match(/^https:\/\/paydoc\.example\/v1\/results\/[A-Za-z0-9_-]{43}$/);
    const token = first.result.url.split('/').pop()!;
    expect(links.get(token)?.body.byteLength).to.equal(600);
    first.discard();
    expect(links.get(token)).to.not.exist();
    expect(links.size).to.equal({ count: 0, bytes: 0 });
  });

  it('link: an expired link is gone and its memory freed', async () => {
    const links = new ResultLinks(20);
    const made = await prepareDelivery(output(10), { kind: 'link' }, undefined, surface(0), context(links));
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(links.get((made as { result: { url: string } }).result.url.split('/').pop()!)).to.not.exist();
    expect(links.size.bytes).to.equal(0);
  });
});

const tokenOf = (url: string) => url.split('/').pop()!;
const hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('result links', () => {
  it('each link is its own 256-bit token; a link gives its bytes until dropped, expiry and drop free its memory', () => {
    const links = new ResultLinks(60_000, { maxBytes: 10_000, maxCount: 10 });
    const made = Array.from({ length: 5 }, (_, i) => links.keep({ body: new Uint8Array(i + 1).fill(i), mediaType: 'text/plain' }));
    expect(new Set(made.map((m) => m.token)).size).to.equal(5);
    for (const { token } of made) expect(Buffer.from(token, 'base64url').length).to.equal(32);
    expect(links.size).to.equal({ count: 5, bytes: 15 });
    expect(Array.from(links.get(made[2].token)!.body)).to.equal([2, 2, 2]);
    expect(links.get(`${made[2].token.slice(0, -1)}A`)).to.not.exist();
    links.drop(made[2].token);
    links.drop(made[2].token);
    links.drop('never-made');
    expect(links.size).to.equal({ count: 4, bytes: 12 });
    links.clear();
    expect([links.size, links.get(made[0].token)]).to.equal([{ count: 0, bytes: 0 }, undefined]);
  });

  it('a full store counts links too, and an expired link frees its place for the next one', async () => {
    const links = new ResultLinks(50, { maxBytes: 10_000, maxCount: 2 });
    links.keep(output(1));
    links.keep(output(1));
    const err = expect(() => links.keep(output(1))).to.throw(ServiceError) as ServiceError;
    expect([err.code, err.status, err.extra.retryAfterSeconds]).to.equal(['UNAVAILABLE', 503, 60]);
    expect(err.message).to.equal('the service holds as many results for links as it can right now; retry in a minute, or ask for the result inline; nothing was charged');
    await new Promise((resolve) => setTimeout(resolve, 70));
    const next = links.keep(output(3));
    expect(links.size).to.equal({ count: 1, bytes: 3 });
    expect(links.get(next.token)?.body.byteLength).to.equal(3);
  });

  it('the registry records a link under its hash with the replica\'s address while the link lives; discard ends it everywhere', async () => {
    const registry = new MemoryGuard();
    const links = new ResultLinks(90_500);
    const body = new Uint8Array([1, 2, 3, 4]);
    const ready = await prepareDelivery({ body, mediaType: 'image/png', report: { pages: 2 } }, { kind: 'link' }, undefined, surface(0),
      { ...context(links), registry, replicaUrl: 'http://10.0.0.7:8080' });
    if (ready.kind !== 'link') throw new Error('not a link');
    const token = tokenOf(ready.result.url);
    const key = linkRegistryKey(token);
    expect(key).to.equal(`result-link:${createHash('sha256').update(token).digest('base64url')}`);
    expect(key).to.not.include(token);
    expect(await registry.lookup(key)).to.equal('held http://10.0.0.7:8080');
    expect(await linkHolder(registry, token)).to.equal({ address: 'http://10.0.0.7:8080' });
    expect(ready.result).to.equal({
      url: `https://paydoc.example/v1/results/${token}`, mediaType: 'image/png', bytes: 4, sha256: hex(body), expiresAt: ready.result.expiresAt,
    });
    expect(Date.parse(ready.result.expiresAt) - Date.now()).to.be.within(89_000, 90_500);
    expect([ready.heldBytes, ready.report]).to.equal([0, { pages: 2 }]);
    ready.discard();
    await new Promise((resolve) => setImmediate(resolve));
    expect(links.get(token)).to.not.exist();
    expect(await registry.lookup(key)).to.equal('ended');
    expect(await linkHolder(registry, token)).to.be.undefined();
  });

  it('linkHolder: held with or without an address, ended, never made, or a registry that fails', async () => {
    const registry = new MemoryGuard();
    await registry.record(linkRegistryKey('a'), 'held', 60);
    await registry.record(linkRegistryKey('b'), 'held https://replica-2.internal', 60);
    await registry.record(linkRegistryKey('c'), 'ended', 60);
    await registry.record(linkRegistryKey('d'), 'helden', 60);
    expect(await linkHolder(registry, 'a')).to.equal({});
    expect(await linkHolder(registry, 'b')).to.equal({ address: 'https://replica-2.internal' });
    expect(await linkHolder(registry, 'c')).to.be.undefined();
    expect(await linkHolder(registry, 'd')).to.be.undefined();
    expect(await linkHolder(registry, 'e')).to.be.undefined();
    const withoutAddress = await prepareDelivery(output(3), { kind: 'link' }, undefined, surface(0), { ...context(), registry });
    expect(await registry.lookup(linkRegistryKey(tokenOf((withoutAddress as { result: { url: string } }).result.url)))).to.equal('held');
  });

  describe('with a registry that cannot be reached (Redis on a closed port)', () => {
    let unreachable: RedisGuard;

    before(async () => {
      const server = http.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      await new Promise((resolve) => server.close(resolve));
      unreachable = await RedisGuard.connect(`redis://127.0.0.1:${port}`);
    });

    after(() => unreachable.close());

    it('a link still works on this instance, linkHolder says "not held", and ending it does not throw', async () => {
      const links = new ResultLinks(60_000);
      const ready = await prepareDelivery(output(7), { kind: 'link' }, undefined, surface(0), { ...context(links), registry: unreachable });
      const token = tokenOf((ready as { result: { url: string } }).result.url);
      expect(links.get(token)?.body.byteLength).to.equal(7);
      expect(await linkHolder(unreachable, token)).to.be.undefined();
      await endLink({ links, registry: unreachable }, token, 60);
      expect(links.size).to.equal({ count: 0, bytes: 0 });
    });
  });
});

describe('pushing a result', () => {
  let server: http.Server;
  let base: string;
  const received: { headers: http.IncomingHttpHeaders; body: Buffer }[] = [];

  before(async () => {
    server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(req.url === '/refuse' ? 403 : 204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise((resolve) => server.close(resolve)));

  const pushContext = () => ({ ...context(), outbound: outboundRules(loadConfig({}, { URL_FETCH_ALLOW: base.slice('http://'.length) })) });

  it('the receipt names the buyer\'s server\'s status and what was sent; the report goes with it; nothing is kept', async () => {
    const body = new Uint8Array(Array.from({ length: 3000 }, (_, i) => i % 256));
    const ctx = pushContext();
    const result = { body, mediaType: 'application/pdf', report: { redactions: 3 } };
    const ready = await prepareDelivery(result, { kind: 'push', url: `${base}/in` }, new URL(`${base}/in`), surface(0), ctx);
    expect(ready).to.equal({
      kind: 'pushed', heldBytes: 0, received: true,
      delivered: { status: 204, bytes: 3000, sha256: hex(body), mediaType: 'application/pdf' }, report: { redactions: 3 },
    });
    expect(received.at(-1)!.body.equals(Buffer.from(body))).to.be.true();
    expect(received.at(-1)!.headers['content-type']).to.equal('application/pdf');
    expect(ctx.links.size).to.equal({ count: 0, bytes: 0 });
  });

  it('a push the buyer\'s server refuses is thrown (502 DELIVERY_FAILED), so nothing is settled', async () => {
    const refused = `${base}/refuse`;
    const err = await refusal(prepareDelivery(output(10), { kind: 'push', url: refused }, new URL(refused), surface(0), pushContext()));
    expect([err.code, err.status, err.message]).to.equal(['DELIVERY_FAILED', 502, 'deliver_to: the URL answered 403; the result was not delivered']);
  });
});

// The limits of each way a result leaves (server/delivery.ts), met before settlement: a result
// the surface cannot carry inline or cannot encode, a link store that is full or too small.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { ResultLinks, prepareDelivery, type Surface } from '../../../server/delivery.js';
import { outboundRules } from '../../../server/outbound/fetcher.js';
import { loadConfig } from '../../../server/config.js';
import { ServiceError } from '../../../core/errors.js';
import type { JobOutput } from '../../../core/job.js';

export const lab = Lab.script();
const { describe, it } = lab;
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

// server/derive/delivery-schemas.ts: the JSON a paid call answers instead of the bytes. The
// receipts server/delivery.ts makes (a link kept in a real store, a push to a real origin on
// loopback) satisfy the published schemas, and answers they do not describe are refused.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv } from 'ajv';
import { LINK_RESULT_SCHEMA, PUSH_RESULT_SCHEMA } from '../../../../server/derive/delivery-schemas.js';
import { ResultLinks, prepareDelivery, type Surface } from '../../../../server/delivery.js';
import { outboundRules } from '../../../../server/outbound/fetcher.js';
import { loadConfig } from '../../../../server/config.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ajv = new Ajv({ strict: false, validateFormats: false });
const linkAnswer = ajv.compile(LINK_RESULT_SCHEMA);
const pushAnswer = ajv.compile(PUSH_RESULT_SCHEMA);
const surface: Surface<Uint8Array> = { maxInlineBytes: 0, linkHint: 'ask for a link', encode: (o) => o.body, heldBytesOf: (o) => o.body.byteLength };
const output = { body: new TextEncoder().encode('%PDF-1.7 a result'), mediaType: 'application/pdf' };

describe('server/derive/delivery-schemas', () => {
  let server: http.Server;
  let base: string;

  before(async () => {
    server = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(201).end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise((resolve) => server.close(resolve)));

  it('a link answer as the service makes it is described; one without its digest or with a digest in capitals is not', async () => {
    const context = { links: new ResultLinks(60_000), outbound: outboundRules(loadConfig({}, {})), baseUrl: 'https://paydoc.example' };
    const ready = await prepareDelivery(output, { kind: 'link' }, undefined, surface, context);
    if (ready.kind !== 'link') throw new Error('not a link');
    expect(linkAnswer({ result: ready.result }), ajv.errorsText(linkAnswer.errors)).to.be.true();
    const { sha256, ...withoutDigest } = ready.result;
    expect(linkAnswer({ result: withoutDigest })).to.be.false();
    expect(linkAnswer({ result: { ...ready.result, sha256: sha256.toUpperCase() } })).to.be.false();
    expect(linkAnswer({ delivered: ready.result })).to.be.false();
  });

  it('a push receipt as the service makes it is described; a redirect status is not a delivery', async () => {
    const context = { links: new ResultLinks(60_000), outbound: outboundRules(loadConfig({ urlFetchAllow: base.slice('http://'.length) }, {})), baseUrl: 'https://paydoc.example' };
    const ready = await prepareDelivery(output, { kind: 'push', url: `${base}/put` }, new URL(`${base}/put`), surface, context);
    if (ready.kind !== 'pushed') throw new Error('not pushed');
    expect(pushAnswer({ delivered: ready.delivered }), ajv.errorsText(pushAnswer.errors)).to.be.true();
    expect(ready.delivered.status).to.equal(201);
    expect(pushAnswer({ delivered: { ...ready.delivered, status: 302 } })).to.be.false();
    expect(pushAnswer({ delivered: { ...ready.delivered, bytes: -1 } })).to.be.false();
  });
});

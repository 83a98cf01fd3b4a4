// server/plugins/results.ts: the one-time download of a result link, on hapi servers holding real
// link stores and sharing one registry (the in-memory guard, as replicas share Redis). What the
// delivery service test cannot pin down: a download cut short spends nothing, a malformed or expired
// token, and a link held by another replica: passed on to it when it said where, never back to
// this replica itself nor twice, else 503 RESULT_ELSEWHERE.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import http from 'node:http';
import pino from 'pino';
import { resultsPlugin } from '../../../../server/plugins/results.js';
import { errorsPlugin } from '../../../../server/plugins/errors.js';
import { ResultLinks, linkRegistryKey } from '../../../../server/delivery.js';
import { MemoryGuard } from '../../../../server/payment/guard.js';
import { FORWARDED_HEADER } from '../../../../server/replica-forward.js';
import { loadConfig, type Config } from '../../../../server/config.js';
import type { App } from '../../../../server/app.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface Replica { server: Hapi.Server; links: ResultLinks; url: string }

/** A replica with the parts the route reads: its settings, its link store, the shared registry. */
async function startReplica(registry: MemoryGuard, settings: Partial<Config> = {}): Promise<Replica> {
  const links = new ResultLinks(60_000);
  const server = Hapi.server({ host: '127.0.0.1', port: 0 });
  const config = loadConfig({ facilitatorTimeoutMs: 2000, ...settings }, {});
  const app = { config, links, gate: { guard: registry }, logger: pino({ enabled: false }) } as unknown as App;
  await server.register([{ plugin: errorsPlugin, options: { app } }, { plugin: resultsPlugin, options: { app } }]);
  await server.start();
  return { server, links, url: server.info.uri };
}

/** Keeps a link on this replica and records it as the pipeline does; the token. */
async function keepLink(replica: Replica, registry: MemoryGuard, body: Uint8Array, holderAddress?: string): Promise<string> {
  const { token } = replica.links.keep({ body, mediaType: 'application/zip' });
  await registry.record(linkRegistryKey(token), holderAddress ? `held ${holderAddress}` : 'held', 60);
  return token;
}

/** Reads the first chunk of a large download, then drops the connection. */
function cutDownload(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, (res) => {
      res.once('data', (chunk: Buffer) => {
        request.destroy();
        resolve(res.statusCode === 200 ? chunk.length : -1);
      });
    });
    request.on('error', (err) => (request.destroyed ? undefined : reject(err)));
  });
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('server/plugins/results', () => {
  const registry = new MemoryGuard();
  let here: Replica;
  let holder: Replica;

  before(async () => {
    here = await startReplica(registry, { replicaUrl: 'http://127.0.0.1:1' });
    holder = await startReplica(registry);
  });

  after(async () => {
    await here.server.stop();
    await holder.server.stop();
  });

  it('a download cut short spends nothing: the full GET after it gets every byte, then the link is gone', async () => {
    const body = new Uint8Array(48 * 1024 * 1024).fill(7);
    const token = await keepLink(here, registry, body);
    const url = `${here.url}/v1/results/${token}`;
    expect(await cutDownload(url)).to.be.above(0);
    await settle();
    expect(here.links.size).to.equal({ count: 1, bytes: body.byteLength });
    const full = await fetch(url);
    expect([full.status, full.headers.get('content-type'), full.headers.get('cache-control'), full.headers.get('referrer-policy')])
      .to.equal([200, 'application/zip', 'no-store', 'no-referrer']);
    expect((await full.arrayBuffer()).byteLength).to.equal(body.byteLength);
    await settle();
    expect(here.links.size).to.equal({ count: 0, bytes: 0 });
    expect(await registry.lookup(linkRegistryKey(token))).to.equal('ended');
    const again = await fetch(url);
    expect([again.status, (await again.json()).error.code]).to.equal([410, 'RESULT_GONE']);
  });

  it('a token of the wrong form, one never made and one ended are the same 410', async () => {
    for (const token of ['short', `${'a'.repeat(42)}!`, 'b'.repeat(43)]) {
      const answer = await fetch(`${here.url}/v1/results/${encodeURIComponent(token)}`);
      expect([answer.status, await answer.json()], token).to.equal([410, { error: {
        code: 'RESULT_GONE', status: 410,
        message: 'this result link was already downloaded, has expired, or was never made on this instance; results are not kept',
      } }]);
    }
  });

  it('a link held by a replica that said where is passed on to it: its bytes once, then 410 on every replica', async () => {
    const body = new TextEncoder().encode('PK a zip held by the other replica');
    const token = await keepLink(holder, registry, body, holder.url);
    const relayed = await fetch(`${here.url}/v1/results/${token}`);
    expect([relayed.status, relayed.headers.get('content-type'), await relayed.text()])
      .to.equal([200, 'application/zip', 'PK a zip held by the other replica']);
    await settle();
    expect(holder.links.size.count).to.equal(0);
    for (const replica of [here, holder]) {
      const gone = await fetch(`${replica.url}/v1/results/${token}`);
      expect(gone.status, replica.url).to.equal(410);
    }
  });

  it('held elsewhere with no address, at this replica\'s own, or asked by a replica already: 503 RESULT_ELSEWHERE, Retry-After 1', async () => {
    const elsewhere = new ResultLinks(60_000);
    const cases: [string, Record<string, string>][] = [
      [await keepLink({ ...holder, links: elsewhere }, registry, new Uint8Array(3)), {}],
      [await keepLink({ ...holder, links: elsewhere }, registry, new Uint8Array(3), 'http://127.0.0.1:1'), {}],
      [await keepLink(holder, registry, new Uint8Array(3), holder.url), { [FORWARDED_HEADER]: '1' }],
    ];
    for (const [token, headers] of cases) {
      const answer = await fetch(`${here.url}/v1/results/${token}`, { headers });
      expect([answer.status, answer.headers.get('retry-after'), (await answer.json()).error.code]).to.equal([503, '1', 'RESULT_ELSEWHERE']);
    }
    // The forwarded request did not reach the holder: its link is still there.
    expect(holder.links.size.count).to.equal(1);
  });

  it('a holder that cannot be reached: 503 RESULT_ELSEWHERE, as without forwarding', async () => {
    const token = await keepLink({ ...holder, links: new ResultLinks(60_000) }, registry, new Uint8Array(3), 'http://127.0.0.1:9');
    const answer = await fetch(`${here.url}/v1/results/${token}`);
    expect([answer.status, (await answer.json()).error.code]).to.equal([503, 'RESULT_ELSEWHERE']);
  });
});

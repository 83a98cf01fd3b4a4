// A page's fetch channel: the worker's client (core/page-fetch.ts) and the front end's answers
// (server/outbound/page-fetches.ts) over a real MessageChannel, against an origin on loopback
// named in the allow-list; a refused address is never connected to, and the budget holds.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MessageChannel } from 'node:worker_threads';
import { PageFetchClient } from '../../../../core/page-fetch.js';
import { outboundRules } from '../../../../server/outbound/fetcher.js';
import { servePageFetches } from '../../../../server/outbound/page-fetches.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

async function listening(handler: http.RequestListener): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = http.createServer(handler);
  server.on('connection', () => { connections += 1; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

describe('a page\'s fetch channel', () => {
  let site: Awaited<ReturnType<typeof listening>>;
  let trap: Awaited<ReturnType<typeof listening>>;

  before(async () => {
    site = await listening((req, res) => {
      if (req.url === '/big') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(3000));
      else if (req.url === '/missing') res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<p>hello</p>');
    });
    trap = await listening((_req, res) => res.end('trapped'));
  });

  after(async () => {
    await site.close();
    await trap.close();
  });

  function channel(budget: { requests: number; totalBytes: number }) {
    const { port1, port2 } = new MessageChannel();
    const rules = outboundRules({ urlInputs: 'on', urlFetchAllow: `site.test:${site.port}`, urlFetchTimeoutMs: 3000 });
    const end = new AbortController();
    const stats = servePageFetches(port1, { ...rules, resolve: async () => ['127.0.0.1'] }, { ...budget, field: 'url' }, end.signal);
    const client = new PageFetchClient(port2);
    return { client, stats, done: () => { client.close(); end.abort(); } };
  }

  it('answers with the fetched body and media type; refuses a loopback address without connecting, naming why', async () => {
    const { client, stats, done } = channel({ requests: 10, totalBytes: 10_000 });
    try {
      const page = await client.fetch(`http://site.test:${site.port}/`);
      expect(page.ok && Buffer.from(page.body).toString()).to.equal('<p>hello</p>');
      expect(page.ok && page.mediaType).to.equal('text/html');
      const refused = await client.fetch(`https://127.0.0.1:${trap.port}/x.png`);
      const why = 'url: 127.0.0.1 is a loopback address; only public addresses are reached';
      expect(refused).to.equal({ ok: false, code: 'URL_REFUSED', message: why });
      const plain = await client.fetch(`http://127.0.0.1:${trap.port}/x.js`);
      expect(plain).to.equal({ ok: false, code: 'URL_REFUSED', message: 'url must be an https URL, not http' });
      const missing = await client.fetch(`http://site.test:${site.port}/missing`);
      expect(missing).to.equal({ ok: false, code: 'URL_FETCH_FAILED', message: 'url: the URL answered 404' });
      expect(trap.connections()).to.equal(0);
      expect(stats()).to.equal({ fetched: 1, refused: 3, bytes: 12 });
    } finally {
      done();
    }
  });

  it('holds the budget: requests beyond the count, and bytes beyond the total, are refused', async () => {
    const { client, stats, done } = channel({ requests: 3, totalBytes: 4000 });
    try {
      expect((await client.fetch(`http://site.test:${site.port}/big`)).ok).to.be.true();
      const tooBig = await client.fetch(`http://site.test:${site.port}/big`);
      expect(tooBig).to.equal({ ok: false, code: 'PAYLOAD_TOO_LARGE', message: 'url is more than 1000 bytes; the limit is 1000 bytes' });
      expect((await client.fetch(`http://site.test:${site.port}/`)).ok).to.be.true();
      const fourth = await client.fetch(`http://site.test:${site.port}/`);
      const why = 'url: the page made more than 3 requests; the rest were refused';
      expect(fourth).to.equal({ ok: false, code: 'LIMIT_EXCEEDED', message: why });
      expect(stats()).to.equal({ fetched: 2, refused: 2, bytes: 3012 });
    } finally {
      done();
    }
  });

  it('a closed channel refuses what is still pending', async () => {
    const { port2 } = new MessageChannel();
    const client = new PageFetchClient(port2);
    const pending = client.fetch('https://site.test/never');
    client.close();
    expect(await pending).to.equal({ ok: false, code: 'URL_FETCH_FAILED', message: 'the job ended before the answer came' });
  });
});

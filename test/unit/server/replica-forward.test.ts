// server/replica-forward.ts: a request passed on to the replica that holds its result, against a
// real holder on loopback. What the scale test cannot pin down: which headers go each way, that a
// body read here goes with its own length, that a holder that is down or silent gives "undefined"
// (the caller answers as without forwarding) within its time, and which addresses are ever used.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { FORWARDED_HEADER, forwardTo, relayToHolder, replicaOrigin, wasForwarded, type Relayed } from '../../../server/replica-forward.js';

export const lab = Lab.script();
const { describe, it, before, after, beforeEach } = lab;
const { expect } = Code;

interface Seen { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }

/** The holder: records each request; /answer answers with headers it relays and headers it must not. */
async function startHolder() {
  const seen: Seen[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
    if (req.url!.startsWith('/silent')) return;
    const body = `held result for ${req.method} ${req.url}`;
    res.writeHead(req.url!.startsWith('/gone') ? 410 : 200, {
      'content-type': 'application/pdf', 'content-length': Buffer.byteLength(body),
      'content-disposition': 'attachment; filename="result.pdf"',
      'cache-control': 'no-store', 'payment-response': 'eyJzdWNjZXNzIjp0cnVlfQ==', 'retry-after': '1',
      'set-cookie': 'holder=1', 'x-holder-internal': 'secret', 'access-control-allow-origin': '*',
    }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  };
  return { seen, origin: new URL(`http://127.0.0.1:${port}`), close };
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function text(relayed: Relayed): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of relayed.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('replica forwarding: the holder\'s address', () => {
  it('only an http(s) origin without credentials is used, its path and query dropped', () => {
    expect(replicaOrigin('http://10.0.0.7:8080')?.href).to.equal('http://10.0.0.7:8080/');
    expect(replicaOrigin('https://replica-2.internal/some/path?q=1#x')?.href).to.equal('https://replica-2.internal/');
    const refused = [undefined, '', 'not a url', '10.0.0.7:8080', 'ftp://10.0.0.7', 'file:///etc/passwd', 'http://user:pw@10.0.0.7', 'https://token@10.0.0.7'];
    for (const address of refused) {
      expect(replicaOrigin(address), String(address)).to.be.undefined();
    }
  });

  it('a request carrying the forwarded header, whatever its value, was forwarded already', () => {
    expect(FORWARDED_HEADER).to.equal('x-paydoc-forwarded');
    expect(wasForwarded({ 'x-paydoc-forwarded': '1' })).to.be.true();
    expect(wasForwarded({ 'x-paydoc-forwarded': '' })).to.be.true();
    expect(wasForwarded({ 'x-forwarded-for': '1.2.3.4' })).to.be.false();
  });
});

describe('replica forwarding: forwardTo a holder on loopback', () => {
  let holder: Awaited<ReturnType<typeof startHolder>>;

  before(async () => {
    holder = await startHolder();
  });

  after(() => holder.close());

  beforeEach(() => {
    holder.seen.length = 0;
  });

  it('passes the request on marked forwarded, without connection headers, host or encodings; relays only the result\'s headers', async () => {
    const relayed = await forwardTo(holder.origin, {
      method: 'GET', path: '/v1/results/tok?x=1', idleTimeoutMs: 2000,
      headers: {
        host: 'paydoc.example', connection: 'keep-alive', 'keep-alive': 'timeout=5', 'accept-encoding': 'gzip', te: 'trailers',
        upgrade: 'h2c',
        'proxy-authorization': 'Basic eA==', expect: '100-continue', [FORWARDED_HEADER]: 'spoofed', range: 'bytes=0-9',
        'payment-signature': 'c2lnbmVk', 'user-agent': 'buyer/1.0', 'x-forwarded-for': '203.0.113.9',
      },
    });
    expect(relayed).to.exist();
    expect(relayed!.status).to.equal(200);
    expect(relayed!.headers).to.equal({
      'content-type': 'application/pdf', 'content-length': String('held result for GET /v1/results/tok?x=1'.length),
      'content-disposition': 'attachment; filename="result.pdf"', 'cache-control': 'no-store',
      'payment-response': 'eyJzdWNjZXNzIjp0cnVlfQ==', 'retry-after': '1',
    });
    expect(await text(relayed!)).to.equal('held result for GET /v1/results/tok?x=1');
    const [seen] = holder.seen;
    expect([seen.method, seen.url]).to.equal(['GET', '/v1/results/tok?x=1']);
    expect(seen.headers).to.equal({
      [FORWARDED_HEADER]: '1', host: holder.origin.host, connection: 'close', range: 'bytes=0-9',
      'payment-signature': 'c2lnbmVk', 'user-agent': 'buyer/1.0', 'x-forwarded-for': '203.0.113.9',
    });
  });

  it('a body read here goes with its own length; an encoded body\'s declared length is dropped and it is streamed', async () => {
    const read = Buffer.from('{"file":{"data":"UGF5ZG9j"}}');
    await forwardTo(holder.origin, {
      method: 'POST', path: '/mcp', idleTimeoutMs: 2000, body: read,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': '19' },
    });
    const streamed = Readable.from([Buffer.from('part one, '), Buffer.from('part two')]);
    await forwardTo(holder.origin, {
      method: 'POST', path: '/v1/pdf/split', idleTimeoutMs: 2000, body: streamed,
      headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-encoding': 'gzip', 'content-length': '7' },
    });
    const sent = holder.seen.map((s) => [s.method, s.url, s.body, s.headers['content-length'], s.headers['transfer-encoding'], s.headers['content-encoding']]);
    expect(sent).to.equal([
      ['POST', '/mcp', read.toString(), String(read.byteLength), undefined, undefined],
      ['POST', '/v1/pdf/split', 'part one, part two', undefined, 'chunked', undefined],
    ]);
  });

  it('the holder\'s own status is relayed as it is (a 410 stays a 410)', async () => {
    const relayed = await forwardTo(holder.origin, { method: 'GET', path: '/gone', headers: {}, idleTimeoutMs: 2000 });
    expect([relayed!.status, await text(relayed!)]).to.equal([410, 'held result for GET /gone']);
  });

  it('a holder that is down, silent past the idle time, or a client that left: undefined, promptly', async () => {
    const down = new URL(`http://127.0.0.1:${await closedPort()}`);
    let started = Date.now();
    expect(await forwardTo(down, { method: 'GET', path: '/v1/results/tok', headers: {}, idleTimeoutMs: 2000 })).to.be.undefined();
    expect(Date.now() - started).to.be.below(1000);

    started = Date.now();
    expect(await forwardTo(holder.origin, { method: 'GET', path: '/silent', headers: {}, idleTimeoutMs: 200 })).to.be.undefined();
    expect(Date.now() - started).to.be.within(150, 1500);

    const left = new AbortController();
    setTimeout(() => left.abort(), 100);
    started = Date.now();
    const abandoned = { method: 'GET', path: '/silent/2', headers: {}, idleTimeoutMs: 10_000, signal: left.signal };
    expect(await forwardTo(holder.origin, abandoned)).to.be.undefined();
    expect(Date.now() - started).to.be.below(1000);
    expect(holder.seen.map((s) => s.url)).to.equal(['/silent', '/silent/2']);
  });
});

describe('replica forwarding: relayToHolder between two hapi servers', () => {
  // The holder is a hapi server as a real replica is: it answers ranges itself and sends a report header.
  let holder: Hapi.Server;
  let front: Hapi.Server;
  let holderFor: URL;
  const posted: string[] = [];
  const RESULT = Buffer.from('0123456789abcdefghij');

  before(async () => {
    holder = Hapi.server({ host: '127.0.0.1', port: 0 });
    holder.route({ method: 'GET', path: '/v1/results/{token}', handler: (request, h) => {
      if (request.headers[FORWARDED_HEADER] !== '1') return h.response('not forwarded').code(400);
      return h.response(RESULT).type('application/pdf').header('paydoc-redactions', '{"count":2}').header('cache-control', 'no-store');
    } });
    holder.route({ method: 'POST', path: '/mcp', handler: (request) => {
      posted.push(`${request.headers['content-length']} ${JSON.stringify(request.payload)}`);
      return { jsonrpc: '2.0', id: 1, result: {} };
    } });
    await holder.start();
    front = Hapi.server({ host: '127.0.0.1', port: 0 });
    const relay = async (request: Hapi.Request, h: Hapi.ResponseToolkit) => {
      const body = request.payload ? Buffer.from(JSON.stringify(request.payload)) : undefined;
      const relayed = await relayToHolder(request, h, holderFor, 2000, body);
      return relayed ?? h.response({ answeredHere: true }).code(503);
    };
    front.route({ method: 'GET', path: '/v1/results/{token}', handler: relay });
    front.route({ method: 'POST', path: '/mcp', handler: relay });
    await front.start();
  });

  after(async () => {
    await front.stop();
    await holder.stop();
  });

  it('answers with the holder\'s status, body and headers (the report header included), for the same path', async () => {
    holderFor = new URL(holder.info.uri);
    const answer = await fetch(`${front.info.uri}/v1/results/tok?probe=1`);
    const headers = ['content-type', 'paydoc-redactions', 'cache-control'].map((name) => answer.headers.get(name));
    expect([answer.status, ...headers])
      .to.equal([200, 'application/pdf', '{"count":2}', 'no-store']);
    expect(await answer.text()).to.equal(RESULT.toString());
    const rpc = await fetch(`${front.info.uri}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":1}' });
    expect([rpc.status, await rpc.json()]).to.equal([200, { jsonrpc: '2.0', id: 1, result: {} }]);
    expect(posted).to.equal(['8 {"id":1}']);
  });

  it('a range is answered by the holder once, not cut again here: 206 with the holder\'s Content-Range', async () => {
    holderFor = new URL(holder.info.uri);
    const ranges = [['bytes=0-3', 'bytes 0-3/20', '0123'], ['bytes=10-13', 'bytes 10-13/20', 'abcd'], ['bytes=15-', 'bytes 15-19/20', 'fghij']];
    for (const [range, contentRange, body] of ranges) {
      const answer = await fetch(`${front.info.uri}/v1/results/tok`, { headers: { range } });
      expect([answer.status, answer.headers.get('content-range'), await answer.text()], range).to.equal([206, contentRange, body]);
    }
  });

  it('a holder that cannot be reached leaves the answer to the caller', async () => {
    holderFor = new URL(`http://127.0.0.1:${await closedPort()}`);
    const answer = await fetch(`${front.info.uri}/v1/results/tok`);
    expect([answer.status, await answer.json()]).to.equal([503, { answeredHere: true }]);
  });
});

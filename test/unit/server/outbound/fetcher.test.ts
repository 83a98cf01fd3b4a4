// The outbound fetcher: the URL it accepts, and real fetches and pushes against origins on
// loopback (the address classes it refuses are in address.test.ts). This machine sends nothing to
// any other address: names are resolved by a stub (or /etc/hosts for "localhost"), and refused
// addresses are aimed at loopback "traps" that count connections and must see none.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { ServiceError } from '../../../../core/errors.js';
import { ConfigError } from '../../../../server/config.js';
import { VERSION } from '../../../../core/version.js';
import { fetchBuyerUrl, outboundRules, parseBuyerUrl, pushToBuyerUrl, vetBuyerUrl, MAX_URL_LENGTH, type OutboundRules } from '../../../../server/outbound/fetcher.js';

export const lab = Lab.script();
const { describe, it, before, after, beforeEach } = lab;
const { expect } = Code;

const FIELD = 'file_url';

function rules(allow: readonly string[], overrides: Partial<OutboundRules> = {}): OutboundRules {
  return { ...outboundRules({ urlInputs: 'on', urlFetchAllow: allow.join(','), urlFetchTimeoutMs: 3000 }), ...overrides };
}

async function fetchOf(url: string, with_: OutboundRules, maxBytes = 1_000_000) {
  return fetchBuyerUrl(parseBuyerUrl(url, FIELD, with_), { field: FIELD, maxBytes, rules: with_ });
}

async function refusal(work: Promise<unknown> | (() => unknown)): Promise<ServiceError> {
  const err = typeof work === 'function' ? expect(work).to.throw(ServiceError) : await expect(work).to.reject(ServiceError);
  return err as ServiceError;
}

async function listen(server: net.Server, host: string, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

async function close(server: net.Server): Promise<void> {
  (server as http.Server).closeAllConnections?.();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Servers on 127.0.0.1 and ::1, on one port, that count connections and close them. */
async function startTrap(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let count = 0;
  const sockets = new Set<net.Socket>();
  const make = () => net.createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.destroy();
  });
  for (let attempt = 0; ; attempt++) {
    const v4 = make();
    const v6 = make();
    const port = await listen(v4, '127.0.0.1');
    try {
      await listen(v6, '::1', port);
      return {
        port,
        connections: () => count,
        close: async () => {
          for (const socket of sockets) socket.destroy();
          await Promise.all([close(v4), close(v6)]);
        },
      };
    } catch (err) {
      await close(v4);
      if (attempt === 5) throw err;
    }
  }
}

const FILE = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

interface Seen { path: string; headers: http.IncomingHttpHeaders; method: string; body: Buffer }

/** An origin on 127.0.0.1 whose paths play the parts the tests need; it records every request. */
async function startOrigin() {
  const seen: Seen[] = [];
  const closes: { path: string; sent: number; at: number }[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url!, 'http://origin');
    seen.push({ path: url.pathname, headers: req.headers, method: req.method!, body: Buffer.concat(chunks) });
    const [, route, arg] = url.pathname.split('/');
    let sent = 0;
    res.on('close', () => closes.push({ path: url.pathname, sent, at: Date.now() }));
    switch (route) {
      case 'file':
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': FILE.length }).end(FILE);
        return;
      case 'small':
        res.writeHead(200, { 'content-type': 'Text/Plain; charset=utf-8', 'content-length': 5 }).end('hello');
        return;
      case 'chunked':
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.write(FILE.subarray(0, 1000));
        setTimeout(() => res.end(FILE.subarray(1000)), 20);
        return;
      case 'hops': {
        const left = Number(arg);
        if (left === 0) res.writeHead(200, { 'content-type': 'text/plain' }).end('arrived');
        else res.writeHead(302, { location: `/hops/${left - 1}` }).end();
        return;
      }
      case 'slow-hops': {
        const left = Number(arg);
        setTimeout(() => {
          if (left === 0) res.writeHead(200).end('arrived');
          else res.writeHead(302, { location: `/slow-hops/${left - 1}` }).end();
        }, 120);
        return;
      }
      case 'to':
        res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('location')! }).end();
        return;
      case 'cookie':
        res.writeHead(302, { location: '/small', 'set-cookie': 'session=abc123; Path=/' }).end();
        return;
      case 'status':
        res.writeHead(Number(arg), { 'content-type': 'text/plain' }).end('an error page');
        return;
      case 'declared-huge':
        res.writeHead(200, { 'content-length': 50_000_000 });
        res.write(Buffer.alloc(1024));
        sent = 1024;
        return; // and then nothing: the client must not wait for the rest
      case 'endless': {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 7);
        const pump = () => {
          while (!res.destroyed && sent < 256 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end();
        };
        pump();
        return;
      }
      case 'trickle': {
        res.writeHead(200);
        const timer = setInterval(() => { sent++; res.write('x'); }, 50);
        res.on('close', () => clearInterval(timer));
        return;
      }
      case 'silent':
        return; // never answers
      case 'cut':
        res.writeHead(200, { 'content-length': 1000 });
        res.write(Buffer.alloc(10));
        setTimeout(() => req.socket.destroy(), 20);
        return;
      case 'hang-up':
        req.socket.destroy();
        return;
      case 'put':
        res.writeHead(Number(arg), arg.startsWith('3') ? { location: url.searchParams.get('location')! } : {}).end();
        return;
      default:
        res.writeHead(404).end();
    }
  });
  const port = await listen(server, '127.0.0.1');
  return { port, base: `http://127.0.0.1:${port}`, seen, closes, close: () => close(server) };
}

describe('outbound: the URL itself', () => {
  const open = rules([]);

  it('takes https URLs only, without credentials; refuses the rest before any lookup, naming the field', async () => {
    const url = parseBuyerUrl('https://Example.COM/a/b.pdf?sig=1#part', 'files[2].url', open);
    expect(url.href).to.equal('https://example.com/a/b.pdf?sig=1');
    const cases: [unknown, string][] = [
      ['http://example.com/a.pdf', 'files[2].url must be an https URL, not http'],
      ['ftp://example.com/a.pdf', 'files[2].url must be an https URL, not ftp'],
      ['file:///etc/passwd', 'files[2].url must be an https URL, not file'],
      ['data:application/pdf;base64,JVBERi0=', 'files[2].url must be an https URL, not data'],
      ['javascript:alert(1)', 'files[2].url must be an https URL, not javascript'],
      ['https://user:secret@example.com/a.pdf', 'files[2].url carries credentials (user:password@); URLs with credentials are refused'],
      ['https://token@example.com/a.pdf', 'files[2].url carries credentials (user:password@); URLs with credentials are refused'],
      ['example.com/a.pdf', 'files[2].url is not a URL'],
      ['https://exa mple.com/', 'files[2].url is not a URL'],
      ['', 'files[2].url must be an https URL'],
      [42, 'files[2].url must be an https URL'],
      [`https://example.com/${'a'.repeat(MAX_URL_LENGTH)}`, `files[2].url is ${MAX_URL_LENGTH + 20} characters long; the limit is ${MAX_URL_LENGTH}`],
    ];
    for (const [raw, message] of cases) {
      const err = await refusal(() => parseBuyerUrl(raw, 'files[2].url', open));
      expect([err.code, err.status, err.message, err.extra.field], String(raw)).to.equal(['URL_REFUSED', 422, message, 'files[2].url']);
    }
  });

  it('URL_INPUTS=off refuses every URL, to fetch or to push to, naming the setting', async () => {
    const off = outboundRules({ urlInputs: 'off', urlFetchAllow: '', urlFetchTimeoutMs: 1000 });
    const url = new URL('https://example.com/a.pdf');
    const errors = [
      await refusal(() => parseBuyerUrl('https://example.com/a.pdf', FIELD, off)),
      await refusal(fetchBuyerUrl(url, { field: FIELD, maxBytes: 10, rules: off })),
      await refusal(vetBuyerUrl(url, 'deliver_to', off)),
      await refusal(pushToBuyerUrl(url, Buffer.from('x'), 'text/plain', { field: 'deliver_to', rules: off })),
    ];
    expect(errors.map((e) => [e.code, e.status])).to.equal(Array(4).fill(['URL_REFUSED', 422]));
    expect(errors[0].message).to.equal('file_url: URLs are turned off on this deployment (URL_INPUTS=off)');
    expect(errors[3].message).to.equal('deliver_to: URLs are turned off on this deployment (URL_INPUTS=off)');
  });

  it('URL_FETCH_ALLOW takes host:port entries, written as the URL parser writes hosts; anything else stops the boot', () => {
    const allowed = outboundRules({ urlInputs: 'on', urlFetchAllow: ' LocalHost:8080, 127.1:9000,[0:0::1]:443 ,files.internal:80', urlFetchTimeoutMs: 1 });
    expect([...allowed.allow]).to.equal(['localhost:8080', '127.0.0.1:9000', '[::1]:443', 'files.internal:80']);
    for (const bad of ['localhost', 'localhost:0', 'localhost:70000', 'http://localhost:80', 'user@host:80', 'host/path:80', ':80']) {
      expect(() => outboundRules({ urlInputs: 'on', urlFetchAllow: bad, urlFetchTimeoutMs: 1 }), bad).to.throw(ConfigError, new RegExp(`^invalid configuration: URL_FETCH_ALLOW \\(urlFetchAllow\\): ".*" is not host:port$`));
    }
  });
});

describe('outbound: fetching', () => {
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  let trap: Awaited<ReturnType<typeof startTrap>>;
  let allowed: OutboundRules;

  before(async () => {
    origin = await startOrigin();
    trap = await startTrap();
    allowed = rules([`127.0.0.1:${origin.port}`]);
  });

  after(async () => {
    await origin.close();
    await trap.close();
  });

  beforeEach(() => {
    origin.seen.length = 0;
    origin.closes.length = 0;
  });

  it('fetches an allowed origin: its bytes and media type, in a Buffer that owns its memory, with and without Content-Length', async () => {
    for (const [route, bytes, mediaType] of [['file', FILE, 'image/png'], ['chunked', FILE, 'application/pdf'], ['small', Buffer.from('hello'), 'text/plain']] as const) {
      const fetched = await fetchOf(`${origin.base}/${route}`, allowed);
      expect(fetched.bytes.equals(bytes), route).to.be.true();
      expect(fetched.mediaType, route).to.equal(mediaType);
      expect([fetched.bytes.byteOffset, fetched.bytes.buffer.byteLength], route).to.equal([0, bytes.length]);
    }
  });

  it('refuses every loopback form when it is not in the allow list, and the trap sees no connection', async () => {
    const forms = ['localhost', '127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '[0:0:0:0:0:ffff:7f00:1]', '2130706433', '0177.0.0.1', '0x7f.0.0.1', '0x7f.1', '127.1', '0', '[::]'];
    const strict = rules([`127.0.0.1:${origin.port}`]);
    for (const form of forms) {
      const url = `https://${form}:${trap.port}/doc.pdf`;
      const err = await refusal(fetchOf(url, strict));
      expect([err.code, err.status, err.extra.field], form).to.equal(['URL_REFUSED', 422, FIELD]);
      expect(err.message, form).to.match(/^file_url: \S+ (is|resolves to [0-9a-f.:]+,) (a|an|the) .*(loopback|unspecified).*; only public addresses are reached$/);
      expect((await refusal(vetBuyerUrl(new URL(url), 'deliver_to', strict))).code, form).to.equal('URL_REFUSED');
      expect((await refusal(pushToBuyerUrl(new URL(url), Buffer.from('x'), 'text/plain', { field: 'deliver_to', rules: strict }))).code, form).to.equal('URL_REFUSED');
    }
    expect((await refusal(fetchOf(`https://localhost:${trap.port}/`, strict))).message).to.equal('file_url: localhost resolves to 127.0.0.1, a loopback address; only public addresses are reached');
    expect((await refusal(fetchOf(`https://0x7f.1:${trap.port}/`, strict))).message).to.equal('file_url: 127.0.0.1 is a loopback address; only public addresses are reached');
    expect((await refusal(fetchOf(`https://[::ffff:127.0.0.1]:${trap.port}/`, strict))).message).to.equal('file_url: [::ffff:7f00:1] is an IPv4-mapped form of 127.0.0.1, a loopback address; only public addresses are reached');
    expect(trap.connections()).to.equal(0);
  });

  it('refuses plain http to a host:port not in the allow list, even another port of an allowed host', async () => {
    for (const url of [`http://127.0.0.1:${trap.port}/`, `http://localhost:${origin.port}/file`, `http://[::1]:${trap.port}/`]) {
      const err = await refusal(fetchOf(url, allowed));
      expect([err.code, err.message], url).to.equal(['URL_REFUSED', 'file_url must be an https URL, not http']);
    }
    expect(trap.connections()).to.equal(0);
    expect(origin.seen).to.equal([]);
  });

  it('vets a name\'s every address from one lookup: one public and one private address is refused, naming the private one', async () => {
    const lookups: string[] = [];
    const stub = rules([], { resolve: async (host) => { lookups.push(host); return ['93.184.216.34', '10.0.0.5']; } });
    const url = new URL(`https://files.example:${trap.port}/a.pdf`);
    const message = 'file_url: files.example resolves to 10.0.0.5, a private address (RFC 1918); only public addresses are reached';
    expect((await refusal(fetchBuyerUrl(url, { field: FIELD, maxBytes: 100, rules: stub }))).message).to.equal(message);
    expect((await refusal(vetBuyerUrl(url, FIELD, stub))).message).to.equal(message);
    expect(lookups).to.equal(['files.example', 'files.example']);
  });

  it('refuses a name that resolves to a loopback or metadata address; the loopback trap sees no connection', async () => {
    for (const answer of [['127.0.0.1'], ['::1'], ['::ffff:127.0.0.1'], ['169.254.169.254'], ['0.0.0.0']]) {
      const stub = rules([], { resolve: async () => answer });
      const err = await refusal(fetchOf(`https://rebind.example:${trap.port}/a.pdf`, stub));
      expect([err.code, err.message.startsWith(`file_url: rebind.example resolves to ${answer[0]}, `)], answer[0]).to.equal(['URL_REFUSED', true]);
    }
    expect(trap.connections()).to.equal(0);
  });

  it('connects to the address it looked up, looking up once: a name only the stub knows is fetched', async () => {
    const lookups: string[] = [];
    // A second lookup would get an address nothing listens on, and the system resolver knows no such name.
    const stub = rules([`pinned.test:${origin.port}`], { resolve: async (host) => (lookups.push(host) === 1 ? ['127.0.0.1'] : ['127.0.0.2']) });
    const fetched = await fetchOf(`http://pinned.test:${origin.port}/small`, stub);
    expect(fetched.bytes.toString()).to.equal('hello');
    expect(lookups).to.equal(['pinned.test']);
    expect(origin.seen[0].headers.host).to.equal(`pinned.test:${origin.port}`);
  });

  it('refuses a redirect to a refused address, to plain http or with credentials; the trap sees nothing', async () => {
    const stub = rules([`127.0.0.1:${origin.port}`], { resolve: async (host) => (host === 'private.example' ? ['10.0.0.5'] : []) });
    const cases: [string, string][] = [
      [`https://127.0.0.1:${trap.port}/`, "file_url's redirect 1: 127.0.0.1 is a loopback address; only public addresses are reached"],
      [`https://[::ffff:7f00:1]:${trap.port}/`, "file_url's redirect 1: [::ffff:7f00:1] is an IPv4-mapped form of 127.0.0.1, a loopback address; only public addresses are reached"],
      [`https://2130706433:${trap.port}/`, "file_url's redirect 1: 127.0.0.1 is a loopback address; only public addresses are reached"],
      ['https://169.254.169.254/latest/meta-data/', "file_url's redirect 1: 169.254.169.254 is a link-local address (169.254.0.0/16, where cloud metadata services answer); only public addresses are reached"],
      ['https://private.example/a.pdf', "file_url's redirect 1: private.example resolves to 10.0.0.5, a private address (RFC 1918); only public addresses are reached"],
      [`http://127.0.0.1:${trap.port}/`, "file_url's redirect 1 must be an https URL, not http"],
      ['file:///etc/passwd', "file_url's redirect 1 must be an https URL, not file"],
      ['https://user:pw@example.com/', "file_url's redirect 1 carries credentials (user:password@); URLs with credentials are refused"],
    ];
    for (const [location, message] of cases) {
      const err = await refusal(fetchOf(`${origin.base}/to?location=${encodeURIComponent(location)}`, stub));
      expect([err.code, err.status, err.message], location).to.equal(['URL_REFUSED', 422, message]);
    }
    // Every redirect status is vetted the same way.
    for (const status of [301, 303, 307, 308]) {
      const err = await refusal(fetchOf(`${origin.base}/to?status=${status}&location=${encodeURIComponent(`https://127.0.0.1:${trap.port}/`)}`, stub));
      expect(err.code, String(status)).to.equal('URL_REFUSED');
    }
    expect(trap.connections()).to.equal(0);
  });

  it('follows 3 redirects, and refuses a 4th, which is never requested', async () => {
    expect((await fetchOf(`${origin.base}/hops/3`, allowed)).bytes.toString()).to.equal('arrived');
    expect(origin.seen.map((s) => s.path)).to.equal(['/hops/3', '/hops/2', '/hops/1', '/hops/0']);
    origin.seen.length = 0;
    const err = await refusal(fetchOf(`${origin.base}/hops/4`, allowed));
    expect([err.code, err.status, err.message]).to.equal(['URL_FETCH_FAILED', 422, 'file_url redirected more than 3 times; at most 3 redirects are followed']);
    expect(origin.seen.map((s) => s.path)).to.equal(['/hops/4', '/hops/3', '/hops/2', '/hops/1']);
  });

  it('sends only its own headers: no cookie (not even one the origin set on a redirect), no authorization', async () => {
    await fetchOf(`${origin.base}/cookie`, allowed);
    expect(origin.seen.map((s) => s.path)).to.equal(['/cookie', '/small']);
    for (const { headers } of origin.seen) {
      expect(headers).to.equal({ 'user-agent': `paydoc/${VERSION}`, accept: '*/*', host: `127.0.0.1:${origin.port}`, connection: 'close' });
    }
  });

  it('refuses at once a Content-Length over the limit, naming it, and closes the connection', async () => {
    const started = Date.now();
    const err = await refusal(fetchOf(`${origin.base}/declared-huge`, allowed, 1_000_000));
    expect([err.code, err.status, err.message, err.extra.field]).to.equal(['PAYLOAD_TOO_LARGE', 413, 'file_url is 50000000 bytes (its Content-Length); the limit is 1000000 bytes', FIELD]);
    await until(() => origin.closes.length === 1);
    expect(origin.closes[0].at - started).to.be.below(1000);
  });

  it('stops reading a body streamed past the limit: 413 naming the limit, the origin\'s socket closed long before it sent everything', async () => {
    const err = await refusal(fetchOf(`${origin.base}/endless`, allowed, 100_000));
    expect([err.code, err.status, err.message]).to.equal(['PAYLOAD_TOO_LARGE', 413, 'file_url is more than 100000 bytes; the limit is 100000 bytes']);
    await until(() => origin.closes.length === 1);
    // It meant to send 256 MB; the kernel's socket buffers take a few MB before the client stops.
    expect(origin.closes[0].sent).to.be.below(32 * 1024 * 1024);
  });

  it('has one deadline for the whole fetch, redirects included: URL_FETCH_FAILED naming it', async () => {
    const quick = rules([`127.0.0.1:${origin.port}`], { timeoutMs: 300 });
    for (const route of ['silent', 'trickle', 'slow-hops/3']) {
      const started = Date.now();
      const err = await refusal(fetchOf(`${origin.base}/${route}`, quick));
      expect([err.code, err.status, err.message], route).to.equal(['URL_FETCH_FAILED', 422, `file_url: fetching from 127.0.0.1:${origin.port} did not finish within 300 ms (URL_FETCH_TIMEOUT_MS)`]);
      expect(Date.now() - started, route).to.be.below(1000);
    }
    // Each hop of slow-hops takes 120 ms: well within 300 ms alone, not four of them.
    expect(origin.seen.filter((s) => s.path.startsWith('/slow-hops')).length).to.be.below(4);
    await until(() => origin.closes.some((c) => c.path === '/trickle'));
  });

  it('answers the origin\'s status and connection failures with a 4xx naming them', async () => {
    // It reads what it is sent (so it sees the client close) and answers with something else than HTTP.
    const notHttp = net.createServer((socket) => socket.resume().end('NOT HTTP AT ALL\r\n\r\n'));
    const notHttpPort = await listen(notHttp, '127.0.0.1');
    const broad = rules([`127.0.0.1:${origin.port}`, `127.0.0.1:${notHttpPort}`]);
    const cases: [string, string][] = [
      [`${origin.base}/status/404`, 'file_url: the URL answered 404'],
      [`${origin.base}/status/500`, 'file_url: the URL answered 500'],
      [`${origin.base}/status/503`, 'file_url: the URL answered 503'],
      [`${origin.base}/status/304`, 'file_url: the URL answered 304'],
      [`${origin.base}/to?status=302&location=`, 'file_url: the URL answered 302 without a Location to follow'],
      [`${origin.base}/cut`, `file_url: fetching from 127.0.0.1:${origin.port} failed: the connection was reset or closed before the answer was complete (ECONNRESET)`],
      [`${origin.base}/hang-up`, `file_url: fetching from 127.0.0.1:${origin.port} failed: the connection was reset or closed before the answer was complete (ECONNRESET)`],
      [`http://127.0.0.1:${notHttpPort}/`, `file_url: fetching from 127.0.0.1:${notHttpPort} failed: the answer is not valid HTTP (HPE_INVALID_CONSTANT)`],
    ];
    for (const [url, message] of cases) {
      const err = await refusal(fetchOf(url, broad));
      expect([err.code, err.status, err.message], url).to.equal(['URL_FETCH_FAILED', 422, message]);
    }
    const noResolve = rules([], { resolve: async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }); } });
    const unknown = new URL('https://nowhere.example/a.pdf');
    expect((await refusal(fetchBuyerUrl(unknown, { field: FIELD, maxBytes: 1, rules: noResolve }))).message).to.equal('file_url: fetching from nowhere.example failed: the host name does not resolve (ENOTFOUND)');
    const vetErr = await refusal(vetBuyerUrl(unknown, 'deliver_to', noResolve));
    expect([vetErr.code, vetErr.message]).to.equal(['URL_REFUSED', 'deliver_to: looking up nowhere.example failed: the host name does not resolve (ENOTFOUND)']);
    await close(notHttp);
  });

  it('names a refused connection', async () => {
    const server = net.createServer();
    const port = await listen(server, '127.0.0.1');
    await close(server);
    const err = await refusal(fetchOf(`http://127.0.0.1:${port}/`, rules([`127.0.0.1:${port}`])));
    expect([err.code, err.message]).to.equal(['URL_FETCH_FAILED', `file_url: fetching from 127.0.0.1:${port} failed: the connection was refused (ECONNREFUSED)`]);
  });

  it('never puts the URL\'s path or query in a message', async () => {
    const secret = 'private-path-4711/report.pdf?X-Amz-Signature=deadbeef&token=s3cr3t';
    const quick = rules([`127.0.0.1:${origin.port}`], { timeoutMs: 200 });
    const urls = [
      `${origin.base}/status/404/${secret}`, `${origin.base}/silent/${secret}`, `${origin.base}/declared-huge/${secret}`,
      `${origin.base}/endless/${secret}`, `${origin.base}/cut/${secret}`, `${origin.base}/hops/9/${secret}`,
      `https://127.0.0.1:${trap.port}/${secret}`, `http://127.0.0.1:${trap.port}/${secret}`,
    ];
    for (const url of urls) {
      const err = await refusal(fetchOf(url, quick, 100_000));
      expect(err.message, url).to.not.include(['private-path', 'Signature', 'deadbeef', 's3cr3t', 'token']);
    }
    const push = await refusal(pushToBuyerUrl(new URL(`${origin.base}/put/500/${secret}`), Buffer.from('x'), 'text/plain', { field: 'deliver_to', rules: quick }));
    expect(push.message).to.not.include(['private-path', 'Signature', 's3cr3t']);
    expect(trap.connections()).to.equal(0);
  });

  it('stops at once when the caller\'s signal aborts, throwing its reason', async () => {
    const controller = new AbortController();
    const reason = new ServiceError('CLIENT_GONE');
    setTimeout(() => controller.abort(reason), 100);
    const started = Date.now();
    const url = parseBuyerUrl(`${origin.base}/silent`, FIELD, allowed);
    const fetched = fetchBuyerUrl(url, { field: FIELD, maxBytes: 10, rules: allowed, signal: controller.signal });
    await expect(fetched).to.reject(ServiceError, reason.message);
    expect(Date.now() - started).to.be.below(1000);
    await until(() => origin.closes.some((c) => c.path === '/silent'));
  });

  it('a caller\'s signal that has already aborted stops it before any connection, throwing its reason', async () => {
    const controller = new AbortController();
    const reason = new ServiceError('CLIENT_GONE');
    controller.abort(reason);
    const url = parseBuyerUrl(`${origin.base}/small`, FIELD, allowed);
    await expect(fetchBuyerUrl(url, { field: FIELD, maxBytes: 10, rules: allowed, signal: controller.signal }))
      .to.reject(ServiceError, reason.message);
    await expect(pushToBuyerUrl(url, Buffer.from('x'), 'text/plain', { field: 'deliver_to', rules: allowed, signal: controller.signal }))
      .to.reject(ServiceError, reason.message);
    expect(origin.seen).to.equal([]);
  });

  it('a Location that is not a URL is URL_FETCH_FAILED naming the status', async () => {
    const err = await refusal(fetchOf(`${origin.base}/to?status=301&location=${encodeURIComponent('http://[not-an-address')}`, allowed));
    expect([err.code, err.status, err.message]).to.equal(['URL_FETCH_FAILED', 422, 'file_url: the URL answered 301 with a Location that is not a URL']);
    expect(origin.seen.map((s) => s.path)).to.equal(['/to']);
  });
});

describe('outbound: vetting deliver_to before payment', () => {
  it('passes a name whose every address is public, without connecting to any', async () => {
    const lookups: string[] = [];
    const stub = rules([], { resolve: async (host) => { lookups.push(host); return ['93.184.216.34', '2606:4700:4700::1111']; } });
    await expect(vetBuyerUrl(new URL('https://bucket.example/upload?sig=1'), 'deliver_to', stub)).to.not.reject();
    expect(lookups).to.equal(['bucket.example']);
  });

  it('a name with no addresses, or a lookup past the deadline, is URL_REFUSED naming what failed', async () => {
    const empty = rules([], { resolve: async () => [] });
    const none = await refusal(vetBuyerUrl(new URL('https://empty.example/'), 'deliver_to', empty));
    expect([none.code, none.status, none.message, none.extra.field])
      .to.equal(['URL_REFUSED', 422, 'deliver_to: looking up empty.example failed: the host name does not resolve (ENODATA)', 'deliver_to']);
    const stuck = rules([], { timeoutMs: 150, resolve: () => new Promise<string[]>(() => undefined) });
    const started = Date.now();
    const late = await refusal(vetBuyerUrl(new URL('https://stuck.example/'), 'deliver_to', stuck));
    expect([late.code, late.message]).to.equal(['URL_REFUSED', 'deliver_to: looking up stuck.example did not finish within 150 ms (URL_FETCH_TIMEOUT_MS)']);
    expect(Date.now() - started).to.be.below(1000);
  });

  it('an allow-list entry whose host the URL parser refuses stops the boot', () => {
    for (const bad of ['[not-ipv6]:80', 'a%zz:80']) {
      expect(() => outboundRules({ urlInputs: 'on', urlFetchAllow: bad, urlFetchTimeoutMs: 1 }), bad)
        .to.throw(ConfigError, `invalid configuration: URL_FETCH_ALLOW (urlFetchAllow): "${bad}" is not host:port`);
    }
  });
});

// The test certificate is made by the openssl command (test-packages.txt installs it).
describe('outbound: TLS on a pinned connection', () => {
  let server: https.Server;
  let port: number;
  let cert: string;
  let plain: Awaited<ReturnType<typeof startOrigin>>;

  before(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'paydoc-tls-'));
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
        '-subj', '/CN=files.test', '-addext', 'subjectAltName=DNS:files.test', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore', timeout: 10_000 });
      cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
      server = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert }, (_req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.7 over TLS'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    port = await listen(server, '127.0.0.1');
    plain = await startOrigin();
  });

  after(async () => {
    await close(server);
    await plain.close();
  });

  it('checks the certificate against the URL\'s host name: the right name is fetched; another name, an untrusted certificate and plain HTTP fail naming TLS', async () => {
    const resolve = async () => ['127.0.0.1'];
    const trusting = rules([`files.test:${port}`, `other.test:${port}`, `files.test:${plain.port}`], { resolve, ca: cert });
    const fetched = await fetchOf(`https://files.test:${port}/a.pdf`, trusting);
    expect([fetched.bytes.toString(), fetched.mediaType]).to.equal(['%PDF-1.7 over TLS', 'application/pdf']);
    const cases: [string, OutboundRules, string][] = [
      [`https://other.test:${port}/a.pdf`, trusting, `file_url: fetching from other.test:${port} failed: TLS failed (ERR_TLS_CERT_ALTNAME_INVALID)`],
      [`https://files.test:${port}/a.pdf`, rules([`files.test:${port}`], { resolve }), `file_url: fetching from files.test:${port} failed: TLS failed (DEPTH_ZERO_SELF_SIGNED_CERT)`],
      [`https://files.test:${plain.port}/small`, trusting, `file_url: fetching from files.test:${plain.port} failed: TLS failed (EPROTO)`],
    ];
    for (const [url, with_, message] of cases) {
      const err = await refusal(fetchOf(url, with_));
      expect([err.code, err.status, err.message], url).to.equal(['URL_FETCH_FAILED', 422, message]);
    }
  });
});

describe('outbound: pushing to deliver_to', () => {
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  let trap: Awaited<ReturnType<typeof startTrap>>;
  let allowed: OutboundRules;
  const push = (url: string, with_ = allowed, body: Uint8Array = FILE) =>
    pushToBuyerUrl(parseBuyerUrl(url, 'deliver_to', with_), body, 'image/png', { field: 'deliver_to', rules: with_ });

  before(async () => {
    origin = await startOrigin();
    trap = await startTrap();
    allowed = rules([`127.0.0.1:${origin.port}`]);
  });

  after(async () => {
    await origin.close();
    await trap.close();
  });

  it('PUTs the bytes with their media type and only its own headers; a 2xx is the receipt', async () => {
    expect(await push(`${origin.base}/put/201?sig=abc`)).to.equal({ status: 201 });
    expect(origin.seen.length).to.equal(1);
    const [seen] = origin.seen;
    expect(seen.method).to.equal('PUT');
    expect(seen.body.equals(FILE)).to.be.true();
    expect(seen.headers).to.equal({
      'user-agent': `paydoc/${VERSION}`, accept: '*/*', 'content-type': 'image/png', 'content-length': String(FILE.length),
      host: `127.0.0.1:${origin.port}`, connection: 'close',
    });
  });

  it('a non-2xx answer is DELIVERY_FAILED naming it; a redirect is not followed', async () => {
    origin.seen.length = 0;
    const failed = await refusal(push(`${origin.base}/put/500`));
    expect([failed.code, failed.status, failed.message, failed.extra.field]).to.equal(['DELIVERY_FAILED', 502, 'deliver_to: the URL answered 500; the result was not delivered', 'deliver_to']);
    const moved = await refusal(push(`${origin.base}/put/302?location=${encodeURIComponent(`${origin.base}/put/201`)}`));
    expect([moved.code, moved.status, moved.message]).to.equal(['DELIVERY_FAILED', 502, 'deliver_to: the URL answered 302, a redirect; a push follows no redirects, so the result was not delivered']);
    expect(origin.seen.map((s) => s.path)).to.equal(['/put/500', '/put/302']);
  });

  it('a refused address is URL_REFUSED; a refused connection and the deadline are DELIVERY_FAILED naming them', async () => {
    const refused = await refusal(push(`https://127.0.0.1:${trap.port}/put`));
    expect([refused.code, refused.status, refused.message]).to.equal(['URL_REFUSED', 422, 'deliver_to: 127.0.0.1 is a loopback address; only public addresses are reached']);
    const stub = rules([], { resolve: async () => ['203.0.113.4', '192.168.0.10'] });
    expect((await refusal(push('https://bucket.example/upload', stub))).message).to.equal('deliver_to: bucket.example resolves to 203.0.113.4, a documentation address (203.0.113.0/24); only public addresses are reached');
    expect(trap.connections()).to.equal(0);

    const server = net.createServer();
    const port = await listen(server, '127.0.0.1');
    await close(server);
    const down = await refusal(push(`http://127.0.0.1:${port}/`, rules([`127.0.0.1:${port}`])));
    expect([down.code, down.message]).to.equal(['DELIVERY_FAILED', `deliver_to: pushing to 127.0.0.1:${port} failed: the connection was refused (ECONNREFUSED)`]);

    // The origin reads the body, then never answers.
    const slow = await refusal(push(`${origin.base}/silent`, rules([`127.0.0.1:${origin.port}`], { timeoutMs: 300 })));
    expect([slow.code, slow.message]).to.equal(['DELIVERY_FAILED', `deliver_to: pushing to 127.0.0.1:${origin.port} did not finish within 300 ms (URL_FETCH_TIMEOUT_MS)`]);
  });
});

async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('the condition did not become true in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

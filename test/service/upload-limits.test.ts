// Declared body sizes and `Expect: 100-continue`, spoken over a raw socket as an attacker would:
// a length over the route's limit (or a type it refuses) is answered at once, without
// `100 Continue`, and a body that never comes gets 408 UPLOAD_TIMEOUT at UPLOAD_TIMEOUT_MS; never a
// 5xx, and never a request left hanging until the route's own timeout.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import net from 'node:net';
import sharp from 'sharp';
import { startTestService, type TestService } from '../support/service.js';
import { DRAIN_MAX_BYTES } from '../../server/plugins/body.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const MCP_HEADERS = 'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n';
const MULTIPART_HEADERS = 'Content-Type: multipart/form-data; boundary=xYz\r\n';

interface Exchange {
  /** Everything the server sent, in order. */
  reply: string;
  /** When the first byte of a final (non-100) answer arrived, in ms from the request. */
  answeredAt: number;
  /** Whether the server closed the connection before `waitMs`. */
  closed: boolean;
}

/**
 * Sends a request head (and, once `100 Continue` arrives, `body` if given) and collects what comes
 * back until the server closes the connection or `waitMs` passes.
 */
function exchange(port: number, head: string, waitMs: number, body?: Buffer): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = performance.now();
    let reply = '';
    let answeredAt = -1;
    let sentBody = false;
    const done = (closed: boolean) => { clearTimeout(timer); socket.destroy(); resolve({ reply, answeredAt, closed }); };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      const finalAnswer = reply.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
      if (answeredAt < 0 && finalAnswer.startsWith('HTTP/1.1 ')) answeredAt = performance.now() - started;
      if (body && !sentBody && reply.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) { sentBody = true; socket.write(body); }
    });
    socket.on('close', () => done(true));
    socket.on('error', (err) => { clearTimeout(timer); reject(err); });
    socket.write(head);
  });
}

interface Streamed extends Exchange {
  /** Body bytes the client had written when it stopped (the answer came, or the connection closed). */
  sent: number;
}

/**
 * Sends a chunked body of `bodyBytes` (Infinity: until the server closes), writing at the pace the
 * connection takes it and reading whatever comes back meanwhile, as a client that reads while it
 * sends does; stops sending when an answer has arrived.
 */
function streamChunked(port: number, head: string, bodyBytes: number, waitMs: number): Promise<Streamed> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = performance.now();
    const chunk = Buffer.concat([Buffer.from(`${(64 * 1024).toString(16)}\r\n`), Buffer.alloc(64 * 1024, 'a'), Buffer.from('\r\n')]);
    let reply = '';
    let answeredAt = -1;
    let sent = 0;
    let finished = false;
    const done = (closed: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ reply, answeredAt, closed, sent });
    };
    const timer = setTimeout(() => done(false), waitMs);
    const pump = () => {
      while (!finished && answeredAt < 0 && !socket.destroyed) {
        if (sent >= bodyBytes) return void socket.write('0\r\n\r\n');
        sent += 64 * 1024;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
    };
    socket.on('data', (data) => {
      reply += data.toString('latin1');
      if (answeredAt < 0) answeredAt = performance.now() - started;
    });
    // A reset after the answer was read still counts as read: the reply holds what came.
    socket.on('error', () => done(true));
    socket.on('close', () => done(true));
    socket.write(head);
    pump();
  });
}

/**
 * A client that sends its whole body before it reads the answer, as many do (Python's http.client,
 * a shell pipe): it writes `chunkBytes` every `everyMs` for `sendMs`, then reads until the server
 * closes or `waitMs` more pass. Its socket reads nothing while it sends.
 */
function sendThenRead(
  port: number, head: string, chunkBytes: number, everyMs: number, sendMs: number, waitMs: number,
): Promise<{ reply: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    let reply = '';
    let error: string | undefined;
    const finish = () => { clearInterval(writer); clearTimeout(timer); socket.destroy(); resolve({ reply, ...(error ? { error } : {}) }); };
    const timer = setTimeout(finish, sendMs + waitMs);
    const started = performance.now();
    const writer = setInterval(() => {
      if (performance.now() - started < sendMs) return void socket.write(Buffer.alloc(chunkBytes, 'a'));
      clearInterval(writer);
      socket.resume();
    }, everyMs);
    socket.on('data', (chunk) => { reply += chunk.toString('latin1'); });
    socket.on('error', (err: NodeJS.ErrnoException) => { error = err.code; finish(); });
    socket.on('close', finish);
    socket.write(head);
  });
}

function head(path: string, headers: string, length: number, expectContinue: boolean): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Content-Length: ${length}\r\n${expectContinue ? 'Expect: 100-continue\r\n' : ''}\r\n`;
}

function errorOf(reply: string): { code: string; status: number; message: string } {
  const final = reply.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
  return (JSON.parse(final.slice(final.indexOf('\r\n\r\n') + 4)) as { error: { code: string; status: number; message: string } }).error;
}

describe('declared body sizes and Expect: 100-continue (UPLOAD_TIMEOUT_MS 1.5 s)', () => {
  let t: TestService;
  let port: number;
  before(async () => {
    t = await startTestService({ config: { uploadTimeoutMs: 1_500 } });
    port = Number(new URL(t.url).port);
  });
  after(async () => { await t?.stop(); });

  it('/v1/image/rotate: Content-Length 80000000 with Expect: 100-continue gets 413 at once, no 100 Continue, its connection closed', async () => {
    const { reply, answeredAt, closed } = await exchange(port, head('/v1/image/rotate', MULTIPART_HEADERS, 80_000_000, true), 5_000);
    expect(reply).to.match(/^HTTP\/1\.1 413 /);
    expect(reply).to.not.contain('100 Continue');
    expect(errorOf(reply)).to.include({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    // The route takes a JSON body of its largest file in base64 too: 50 MB is 68 MB of base64.
    expect(errorOf(reply).message).to.contain('68 MB');
    expect(answeredAt).to.be.below(1_000);
    expect(closed).to.equal(true);
  });

  it('/v1/image/rotate: Content-Length 80000000 without Expect and no body gets 413 at once, not after the body', async () => {
    const { reply, answeredAt, closed } = await exchange(port, head('/v1/image/rotate', MULTIPART_HEADERS, 80_000_000, false), 5_000);
    expect(reply).to.match(/^HTTP\/1\.1 413 /);
    expect(errorOf(reply).code).to.equal('PAYLOAD_TOO_LARGE');
    expect(answeredAt).to.be.below(1_000);
    expect(closed).to.equal(true);
  });

  it('/mcp: a declared length over its limit with Expect: 100-continue gets 413 at once, no 100 Continue', async () => {
    const { reply, answeredAt, closed } = await exchange(port, head('/mcp', MCP_HEADERS, 200_000_000, true), 5_000);
    expect(reply).to.match(/^HTTP\/1\.1 413 /);
    expect(reply).to.not.contain('100 Continue');
    expect(errorOf(reply).code).to.equal('PAYLOAD_TOO_LARGE');
    expect(answeredAt).to.be.below(1_000);
    expect(closed).to.equal(true);
  });

  it('a type the route refuses, with Expect: 100-continue, is refused at once without 100 Continue (not after waiting for the body)', async () => {
    const { reply, answeredAt } = await exchange(port, head('/v1/image/rotate', 'Content-Type: text/plain\r\n', 1000, true), 5_000);
    expect(reply).to.not.contain('100 Continue');
    expect(errorOf(reply)).to.include({ code: 'UNSUPPORTED_MEDIA', status: 422 });
    expect(answeredAt).to.be.below(1_000);
  });

  for (const [route, headers, length] of [['/v1/image/rotate', MULTIPART_HEADERS, 100_000], ['/v1/image/rotate', MULTIPART_HEADERS, 50_000_000], ['/mcp', MCP_HEADERS, 80_000_000]] as const) {
    it(`${route}: Content-Length ${length} within the limit, Expect: 100-continue, no body: 100 Continue, then 408 UPLOAD_TIMEOUT at the limit, never a 5xx`, async () => {
      const { reply, answeredAt, closed } = await exchange(port, head(route, headers, length, true), 8_000);
      expect(reply).to.startWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 408 ');
      expect(errorOf(reply)).to.include({ code: 'UPLOAD_TIMEOUT', status: 408 });
      expect(answeredAt).to.be.within(1_400, 5_000);
      expect(closed).to.equal(true);
    });
  }

  it('/v1/pdf/from-markdown: a chunked body (no Content-Length) found past the limit while it arrives: the client reads 413 naming the limit', async () => {
    const chunkedHead = `POST /v1/pdf/from-markdown HTTP/1.1\r\nHost: 127.0.0.1\r\n${MULTIPART_HEADERS}Transfer-Encoding: chunked\r\n\r\n`;
    const { reply, closed, sent } = await streamChunked(port, chunkedHead, 8 * 1024 * 1024, 10_000);
    expect(reply, `after ${sent} bytes`).to.match(/^HTTP\/1\.1 413 /);
    expect(errorOf(reply)).to.include({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    // Markdown's 1 MB, or its base64 in a JSON body, plus the multipart slack.
    expect(errorOf(reply).message).to.contain('larger than the 2 MB this endpoint accepts');
    // The whole body was read before the answer: the client sent all of it.
    expect(sent).to.equal(8 * 1024 * 1024);
    expect(closed).to.equal(true);
  });

  it(`a chunked body that never ends is dropped for at most UPLOAD_TIMEOUT_MS (or ${DRAIN_MAX_BYTES / 1024 / 1024} MB), then closed`, async () => {
    const chunkedHead = `POST /v1/pdf/from-markdown HTTP/1.1\r\nHost: 127.0.0.1\r\n${MULTIPART_HEADERS}Transfer-Encoding: chunked\r\n\r\n`;
    const started = performance.now();
    const { closed, sent } = await streamChunked(port, chunkedHead, Infinity, 15_000);
    expect(closed).to.equal(true);
    expect(performance.now() - started).to.be.below(10_000);
    expect(sent).to.be.below(2.5 * 1024 * 1024 + DRAIN_MAX_BYTES + 16 * 1024 * 1024);
  });

  it('a slow upload answered 408 while its client still sends: a client that reads only once it has sent its body reads the 408', async () => {
    // 16 KB every 50 ms for 3 s: past UPLOAD_TIMEOUT_MS (1.5 s), far short of the declared 10 MB.
    const { reply, error } = await sendThenRead(port, head('/v1/image/rotate', MULTIPART_HEADERS, 10_000_000, false), 16 * 1024, 50, 3_000, 5_000);
    expect(error, reply).to.not.exist();
    expect(reply).to.match(/^HTTP\/1\.1 408 /);
    expect(reply.toLowerCase()).to.contain('\r\nconnection: close\r\n');
    expect(errorOf(reply)).to.include({ code: 'UPLOAD_TIMEOUT', status: 408 });
  });

  it('a body within the limit sent after 100 Continue is read as usual: a quote (402)', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#3a6' } }).png().toBuffer();
    const body = Buffer.concat([
      Buffer.from('--xYz\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n'),
      png,
      Buffer.from('\r\n--xYz\r\nContent-Disposition: form-data; name="angle"\r\n\r\n90\r\n--xYz--\r\n'),
    ]);
    const { reply } = await exchange(port, head('/v1/image/rotate', `${MULTIPART_HEADERS}Connection: close\r\n`, body.length, true), 5_000, body);
    expect(reply).to.startWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 402 ');
    expect(reply.toLowerCase()).to.contain('payment-required: ');
  });
});

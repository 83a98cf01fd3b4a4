// Twelve 40 MB uploads at once, on a machine kept busy, each sent whole by a client that writes its
// body before it reads any answer (as Node's http client, curl or requests do): every client reads
// an HTTP status. Half go to an image operation and get its quote (402); half go to the Markdown
// operation, whose limit is 1 MB, and get 413 PAYLOAD_TOO_LARGE. That refusal is ready from the
// declared length while the body is still coming; the service used to send it and close the
// connection under the upload, so those clients saw EPIPE or ECONNRESET and never the status
// (issue 42, item 7).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import sharp from 'sharp';
import { startTestService, type TestService } from '../support/service.js';
import { pngChunk } from '../support/image-fixtures.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const MB = 1024 * 1024;
const UPLOADS = 12;
const UPLOAD_BYTES = 40 * MB;
/** Every answer is due well within this; a client still waiting then counts as a failure. */
const CLIENT_LIMIT_MS = 90_000;
/** The busy machine: processes spinning on the CPU while the uploads run, each ending by itself. */
const BUSY_PROCESSES = 2;
const BUSY_MS = 60_000;

interface Outcome { status?: number; retryAfter?: string; code?: string; error?: string }

/** One multipart upload written whole before its answer is read (in 1 MB writes, as a client streams a file). */
function upload(port: number, path: string, body: Buffer, boundary: string): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: Outcome) => { if (!settled) { settled = true; clearTimeout(timer); resolve(outcome); } };
    const request = http.request({
      host: '127.0.0.1', port, path, method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
    });
    const timer = setTimeout(() => { request.destroy(); done({ error: `no answer within ${CLIENT_LIMIT_MS} ms` }); }, CLIENT_LIMIT_MS);
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => { text += chunk; });
      response.on('end', () => {
        let code: string | undefined;
        try { code = (JSON.parse(text) as { error?: { code?: string } }).error?.code; } catch { code = undefined; }
        done({ status: response.statusCode, retryAfter: response.headers['retry-after'], code });
      });
      response.on('error', (err: NodeJS.ErrnoException) => done({ status: response.statusCode, error: err.code ?? err.message }));
    });
    request.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
    let offset = 0;
    const write = () => {
      while (offset < body.length) {
        const piece = body.subarray(offset, offset + MB);
        offset += piece.length;
        if (!request.write(piece)) { request.once('drain', write); return; }
      }
      request.end();
    };
    write();
  });
}

function multipart(boundary: string, file: Buffer, fields: Record<string, string>): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    file,
    Buffer.from(Object.entries(fields).map(([name, value]) => `\r\n--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}`).join('')),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

describe('uploads under load: every client reads a status', () => {
  let t: TestService;
  const busy: ChildProcess[] = [];

  before(async () => {
    t = await startTestService();
  });

  after(async () => {
    for (const child of busy) child.kill();
    await t?.stop();
  });

  it(`${UPLOADS} concurrent 40 MB uploads on a busy machine: each a 402 quote or a 413, none EPIPE or ECONNRESET`, { timeout: CLIENT_LIMIT_MS + 30_000 }, async () => {
    // A real 40 MB PNG: a 64 x 48 picture with a private ancillary chunk filling it out.
    const picture = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).png().toBuffer();
    const ihdrEnd = 8 + 12 + 13;
    const filler = pngChunk('zzTe', Buffer.alloc(UPLOAD_BYTES - picture.length - 12, 0x5a));
    const png = Buffer.concat([picture.subarray(0, ihdrEnd), filler, picture.subarray(ihdrEnd)]);
    const markdown = Buffer.alloc(UPLOAD_BYTES, '# A heading\n\nSome prose.\n\n');
    const boundary = 'paydoc-load-boundary';
    const imageBody = multipart(boundary, png, { width: '32' });
    const markdownBody = multipart(boundary, markdown, {});
    expect(png.length).to.equal(UPLOAD_BYTES);

    for (let i = 0; i < BUSY_PROCESSES; i++) {
      busy.push(spawn(process.execPath, ['-e', `const end = Date.now() + ${BUSY_MS}; while (Date.now() < end) {}`], { stdio: 'ignore' }));
    }
    const port = Number(new URL(t.url).port);
    const sent = Array.from({ length: UPLOADS }, (_, i) => (i % 2 === 0
      ? upload(port, '/v1/image/resize', imageBody, boundary).then((outcome) => ({ kind: 'image', outcome }))
      : upload(port, '/v1/pdf/from-markdown', markdownBody, boundary).then((outcome) => ({ kind: 'markdown', outcome }))));
    const results = await Promise.all(sent);
    for (const child of busy) child.kill();

    const unreadable = results.filter(({ outcome }) => outcome.status === undefined || outcome.error !== undefined);
    expect(unreadable, JSON.stringify(unreadable)).to.equal([]);
    for (const { kind, outcome } of results) {
      if (outcome.status === 503) {
        // A busy service may refuse, but says when to come back.
        expect(outcome.retryAfter, JSON.stringify(outcome)).to.match(/^\d+$/);
        continue;
      }
      if (kind === 'image') expect(outcome, kind).to.include({ status: 402 });
      else expect(outcome, kind).to.include({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    }
  });
});

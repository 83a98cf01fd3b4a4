// Twelve 40 MB uploads at once, on a machine kept busy, each sent whole with the standard fetch
// (which, as most clients, fails the whole request when its upload breaks): every client reads an
// HTTP status. Half go to an image operation and get its quote (402); half go to the Markdown
// operation, whose limit is 1 MB, and get 413 PAYLOAD_TOO_LARGE. That refusal is ready from the
// declared length while the body is still coming; the service used to send it and close the
// connection under the upload, so those clients saw EPIPE or ECONNRESET and never the status
// (issue 42, item 7).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
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

/**
 * The clients, in a process of their own as real clients are (in the service's own process the
 * two share one event loop, which hides the race): each sends its file as a form with the standard
 * fetch (undici), which streams the body and reads the answer alongside, and reports what it got.
 */
const CLIENTS = `
const { readFile } = await import('node:fs/promises');
const uploads = JSON.parse(process.argv[1]);
const outcomes = await Promise.all(uploads.map(async ({ url, file, fields }) => {
  const body = new FormData();
  body.append('file', new Blob([await readFile(file)]), 'upload');
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  try {
    const response = await fetch(url, { method: 'POST', body, signal: AbortSignal.timeout(${CLIENT_LIMIT_MS}) });
    const text = await response.text();
    let code;
    try { code = JSON.parse(text).error?.code; } catch { code = undefined; }
    return { status: response.status, retryAfter: response.headers.get('retry-after') ?? undefined, code };
  } catch (err) {
    return { error: err.cause?.code ?? err.cause?.message ?? err.message };
  }
}));
process.stdout.write(JSON.stringify(outcomes));
`;

interface Upload { url: string; file: string; fields: Record<string, string> }

function sendFromAnotherProcess(uploads: Upload[]): Promise<Outcome[]> {
  return new Promise((resolve, reject) => {
    const args = ['--input-type=module', '-e', CLIENTS, JSON.stringify(uploads)];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(out) as Outcome[]);
      else reject(new Error(`the clients' process ended with ${code}`));
    });
  });
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

  it(`${UPLOADS} concurrent 40 MB uploads on a busy machine: each a 402 quote or a 413, none EPIPE or ECONNRESET`, {
    timeout: CLIENT_LIMIT_MS + 30_000,
  }, async () => {
    // A real 40 MB PNG: a 64 x 48 picture with a private ancillary chunk filling it out.
    const picture = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).png().toBuffer();
    const ihdrEnd = 8 + 12 + 13;
    const filler = pngChunk('zzTe', Buffer.alloc(UPLOAD_BYTES - picture.length - 12, 0x5a));
    const png = Buffer.concat([picture.subarray(0, ihdrEnd), filler, picture.subarray(ihdrEnd)]);
    const markdown = Buffer.alloc(UPLOAD_BYTES, '# A heading\n\nSome prose.\n\n');
    expect(png.length).to.equal(UPLOAD_BYTES);

    for (let i = 0; i < BUSY_PROCESSES; i++) {
      busy.push(spawn(process.execPath, ['-e', `const end = Date.now() + ${BUSY_MS}; while (Date.now() < end) {}`], { stdio: 'ignore' }));
    }
    const dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-uploads-'));
    let outcomes: Outcome[];
    try {
      await writeFile(path.join(dir, 'picture.png'), png);
      await writeFile(path.join(dir, 'notes.md'), markdown);
      const kinds = Array.from({ length: UPLOADS }, (_, i) => (i % 2 === 0 ? 'image' : 'markdown'));
      outcomes = await sendFromAnotherProcess(kinds.map((kind): Upload => (kind === 'image'
        ? { url: `${t.url}/v1/image/resize`, file: path.join(dir, 'picture.png'), fields: { width: '32' } }
        : { url: `${t.url}/v1/pdf/from-markdown`, file: path.join(dir, 'notes.md'), fields: {} })));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const results = outcomes.map((outcome, i) => ({ kind: i % 2 === 0 ? 'image' : 'markdown', outcome }));
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

// One request's way through the service, shared by HTTP routes and MCP tools. Every check
// that can refuse the request runs here, in the order the payment issue fixes, before any
// payment is asked for:
//   sizes (413) → fields (422) → input type and readability (422; GIF 501) → page and pixel
//   limits (413) → model provider disabled (503) → queue full (503) → price.
import type { InspectedFile, Operation } from '../operations/define.js';
import { fail } from '../core/errors.js';
import { validateFields } from './derive/fields.js';
import { priceOf } from './payment/pricing.js';
import { requireProvider, type Config } from './config.js';
import { readImageHeader } from '../checks/image.js';
import { inspectPdf, normalisePdf, readPageBoxes, type PageBox, type PdfInspection } from '../checks/pdf.js';
import type { InspectionCache } from '../checks/cache.js';
import { inspectMarkdown } from '../checks/markdown.js';
import type { WorkerPool } from './pool.js';
import type { LazyJobDir } from './jobdir.js';
import type { JobFile, JobInput, JobOutput } from '../core/job.js';

export interface RawRequest {
  /** Uploaded files in the order received. */
  uploads: Uint8Array[];
  /** Raw field values: strings from multipart, JSON values from MCP; arrays when repeated. */
  fields: Record<string, unknown>;
}

export interface Prepared {
  op: Operation;
  /** What the operation's plan decided: the work function's parameters. */
  params: unknown;
  files: JobFile[];
  pageCounts: number[];
  amount: bigint;
  jobDir: LazyJobDir;
  /** Total input bytes, for logs and metrics. */
  inputBytes: number;
}

const mb = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
// "the file is 50 MB; the limit is 50 MB" names nothing: when rounding hides the excess, say bytes.
function overLimit(size: number, limit: number): string {
  return mb(size) === mb(limit) ? `${size} bytes; the limit is ${limit} bytes (${mb(limit)})` : `${mb(size)}; the limit is ${mb(limit)}`;
}

function checkSizes(op: Operation, raw: RawRequest): void {
  const { count, maxBytes, maxTotalBytes } = op.input;
  if (raw.uploads.length > count.max) {
    fail(count.max > 1 ? 'LIMIT_EXCEEDED' : 'FIELD_INVALID',
      count.max > 1 ? `at most ${count.max} files can be merged; ${raw.uploads.length} were sent`
        : `"file" was sent ${raw.uploads.length} times; ${op.path} takes exactly one file`, { field: 'file' });
  }
  raw.uploads.forEach((bytes, i) => {
    if (bytes.byteLength > maxBytes) {
      fail('PAYLOAD_TOO_LARGE', `${count.max > 1 ? `file ${i + 1}` : 'the file'} is ${overLimit(bytes.byteLength, maxBytes)}`, { field: 'file' });
    }
  });
  const total = raw.uploads.reduce((sum, b) => sum + b.byteLength, 0);
  if (total > maxTotalBytes) fail('PAYLOAD_TOO_LARGE', `the files total ${overLimit(total, maxTotalBytes).replace('the limit', 'the limit per request')}`, { field: 'file' });
  for (const field of op.fields) {
    const value = raw.fields[field.name];
    if (field.type === 'string' && field.maxBytes !== undefined && typeof value === 'string' && Buffer.byteLength(value) > field.maxBytes) {
      fail('PAYLOAD_TOO_LARGE', `"${field.name}" is ${Buffer.byteLength(value)} bytes; the limit is ${field.maxBytes} bytes`, { field: field.name });
    }
  }
}

function checkFileCount(op: Operation, raw: RawRequest): void {
  const { min } = op.input.count;
  if (raw.uploads.length === 0) fail('FIELD_INVALID', `"file" is required: ${op.input.kind === 'image' ? 'a JPEG, PNG or WebP image' : op.input.kind === 'pdf' ? 'a PDF' : 'UTF-8 Markdown'}`, { field: 'file' });
  if (raw.uploads.length < min) fail('FIELD_INVALID', `${op.path} needs ${min} to ${op.input.count.max} files; ${raw.uploads.length} was sent`, { field: 'file' });
}

/** What prepare needs from the running service. */
export interface PrepareContext {
  config: Config;
  pool: WorkerPool;
  inspections: InspectionCache;
}

interface CachedPdfInspection extends PdfInspection {
  /** True when a quote inspected it, deep check included where cheap; false after a paid retry's lighter pass. */
  quoted: boolean;
}

/** A PDF upload's inspection, from the cache when a quote (or an earlier retry) already ran it on these bytes. */
async function inspectUploadedPdf(op: Operation, file: string, digest: string, password: string | undefined, inspections: InspectionCache, paid: boolean): Promise<PdfInspection> {
  const key = `${op.input.acceptsEncrypted ? 'pdf-unlock' : 'pdf'}:${digest}`;
  const cached = inspections.get<CachedPdfInspection>(key);
  // A quote wants the deep check where cheap, which a paid retry's pass skipped.
  if (cached && (paid || cached.quoted)) return cached;
  const inspected = await inspectPdf(file, {
    acceptsEncrypted: op.input.acceptsEncrypted === true,
    ...(password !== undefined ? { password } : {}),
    ...(paid ? { deep: false } : {}),
  });
  inspections.set(key, { ...inspected, quoted: !paid });
  return inspected;
}

/** Page sizes for the pre-payment render check, cached like the inspection; undefined when mutool cannot list them. */
async function renderPageBoxes(file: string, digest: string, inspections: InspectionCache): Promise<PageBox[] | undefined> {
  const key = `page-boxes:${digest}`;
  const cached = inspections.get<PageBox[]>(key);
  if (cached) return cached;
  const boxes = await readPageBoxes(file);
  if (boxes) inspections.set(key, boxes);
  return boxes;
}

/**
 * Runs every check that can refuse the request and computes the exact price.
 *
 * `paid` marks a retry that carries a payment: its quote already ran the deep structural check, and
 * damage it would find fails the paid job uncharged, so the retry skips it. When the quote's
 * result for the same bytes (and password) is still in the inspection cache, the retry uses it
 * instead of running qpdf again; otherwise the price, readability and encryption checks run anew.
 */
export async function prepare(op: Operation, raw: RawRequest, jobDir: LazyJobDir, context: PrepareContext, paid = false): Promise<Prepared> {
  const { config, pool, inspections } = context;
  checkSizes(op, raw);
  checkFileCount(op, raw);
  const fields = validateFields(op, raw.fields);

  const files: InspectedFile[] = [];
  const digests: string[] = [];
  for (const [i, bytes] of raw.uploads.entries()) {
    const which = raw.uploads.length > 1 ? `file ${i + 1}: ` : '';
    try {
      if (op.input.kind === 'image') {
        files.push({ kind: 'image', bytes, header: await readImageHeader(bytes) });
      } else if (op.input.kind === 'markdown') {
        inspectMarkdown(bytes);
        files.push({ kind: 'markdown', bytes });
      } else {
        const written = jobDir.write(`input-${i + 1}.pdf`, bytes).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOSPC') fail('UNAVAILABLE', 'the service has no temporary space left for the upload; retry in a moment; nothing was charged', { retryAfterSeconds: 10 });
          throw err;
        });
        // A large upload's digest is computed on this thread while libuv writes the file.
        const password = op.input.acceptsEncrypted ? String(fields.password ?? '') : undefined;
        const digest = inspections.digest(bytes, password);
        const filePath = await written;
        const info = await inspectUploadedPdf(op, filePath, digest, password, inspections, paid);
        // Every tool after the count reads what was counted: a repaired or prefixed upload is
        // replaced by qpdf's rewrite of it (the same on the quote and on the paid retry).
        const work = info.needsRewrite ? await normalisePdf(filePath, info.pages, password) : bytes;
        files.push({ kind: 'pdf', bytes: work, path: filePath, pages: info.pages });
        digests.push(digest);
      }
    } catch (err) {
      if (which && err instanceof Error) err.message = which + err.message;
      throw err;
    }
  }

  const pageCounts = files.map((f) => (f.kind === 'pdf' ? f.pages : 0));
  const pages = pageCounts.reduce((a, b) => a + b, 0);
  if (op.input.kind === 'pdf' && !op.input.acceptsEncrypted && op.input.maxPages !== undefined && pages > op.input.maxPages) {
    fail('LIMIT_EXCEEDED', `the PDF has ${pages} pages; ${op.path} takes at most ${op.input.maxPages}`, { field: 'file' });
  }
  const params = await op.plan({
    fields,
    sent: (name) => raw.fields[name] !== undefined && raw.fields[name] !== '',
    files,
    pages,
    pageBoxes: () => {
      const first = files[0];
      return first?.kind === 'pdf' ? renderPageBoxes(first.path, digests[0], inspections) : Promise.resolve(undefined);
    },
  });

  requireProvider(config, op);
  if (!pool.hasRoom()) fail('QUEUE_FULL', 'the service is busy; retry in a few seconds', { retryAfterSeconds: 5 });

  const amount = priceOf(op, op.price.model === 'per-page' ? pageCounts : []);
  return {
    op, params, amount, jobDir, pageCounts,
    files: files.map((f) => (f.kind === 'pdf' ? { bytes: f.bytes, path: f.path, pages: f.pages } : { bytes: f.bytes })),
    inputBytes: raw.uploads.reduce((s, b) => s + b.byteLength, 0),
  };
}

/** Hands the prepared job to the pool with its deadline. The bytes are transferred, so `prepared` is spent. */
export async function execute(prepared: Prepared, config: Config, pool: WorkerPool, clientGone?: AbortSignal): Promise<JobOutput> {
  const timeoutMs = Math.min(prepared.op.timeoutMs, config.jobTimeoutMs);
  const input: JobInput = {
    operation: prepared.op.id,
    files: prepared.files.map((f) => ({ ...f, bytes: ownBuffer(f.bytes) })),
    params: prepared.params,
    jobDir: prepared.jobDir.path(),
    deadline: Date.now() + timeoutMs,
  };
  return pool.run(input, clientGone);
}

/**
 * The bytes as something the worker can take without a copy. An upload is a view into its own
 * request's body buffer (or an MCP argument's decoded bytes), which nothing else uses once the job
 * starts, so the whole buffer is transferred. A small buffer may be a slice of Node's shared pool
 * (and a shared buffer cannot be transferred): those bytes are copied.
 */
function ownBuffer(bytes: Uint8Array): Uint8Array {
  return bytes.buffer instanceof SharedArrayBuffer || bytes.buffer.byteLength <= Buffer.poolSize ? new Uint8Array(bytes) : bytes;
}

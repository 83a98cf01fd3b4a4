// One request's way through the service, shared by HTTP routes and MCP tools. Every check
// that can refuse the request runs here, in the order the payment issue fixes, before any
// payment is asked for:
//   sizes (413) → fields (422) → input type and readability (422; GIF 501; a named file's after the
//   files' URLs are fetched, before the files are inspected) → page and pixel
//   limits (413) → model provider disabled (503) → queue full (503) → price.
import type { Operation } from '../operations/define.js';
import { fail, megabytes, ServiceError } from '../core/errors.js';
import { validateFields } from './derive/fields.js';
import { priceOf } from './payment/pricing.js';
import type { Config } from './config.js';
import { requireProvider } from './content-route.js';
import type { DeclaredType } from '../checks/office.js';
import { INPUT_KINDS } from '../operations/input-kinds.js';
import type { InspectionCache } from '../checks/cache.js';
import { INSPECTORS, type InspectContext, type InspectedAs, type Inspector, type PreparedFile } from '../checks/inputs/index.js';
import type { WorkerPool } from './pool.js';
import type { LazyJobDir } from './jobdir.js';
import type { JobFile, JobInput, JobOutput } from '../core/job.js';
import { fetchBuyerUrl, parseBuyerUrl, vetBuyerUrl, type OutboundRules } from './outbound/fetcher.js';
import { servePageFetches } from './outbound/page-fetches.js';
import { PAGE_FETCH_BUDGET } from '../operations/pdf/from-url.js';
import { isIP } from 'node:net';
import { MessageChannel } from 'node:worker_threads';

/** A file given as a URL, fetched before the quote (and again for the paid retry). */
export interface UrlInput {
  url: string;
  /** The request field that named it, for errors: `file_url`, `file.url`, `files[1].url`. */
  field: string;
}

export type FileInput = Uint8Array | UrlInput;

/** How the result leaves: in the answer, kept for a one-time link, or PUT to the buyer's URL. */
export type Delivery = { kind: 'inline' } | { kind: 'link' } | { kind: 'push'; url: string };

export interface RawRequest {
  /** The files in the order received: uploaded bytes, or URLs to fetch. */
  uploads: FileInput[];
  /** Raw field values: strings from multipart, JSON values from MCP; arrays when repeated. */
  fields: Record<string, unknown>;
  /** Inline when absent. */
  delivery?: Delivery;
  /**
   * What the request said each upload is, in the order of `uploads` (a multipart part's file name
   * extension and Content-Type, an MCP file's mediaType); checked against the bytes where the
   * operation's input kind cares (Office documents).
   */
  declared?: Array<DeclaredType | undefined>;
  /** The operation's named file (InputSpec.namedFile: stamp's image), uploaded or a URL to fetch. */
  namedFile?: FileInput;
}

/** A raw request whose URL inputs have been fetched. */
interface FetchedRequest extends RawRequest {
  uploads: Uint8Array[];
}

export interface Prepared {
  op: Operation;
  delivery: Delivery;
  /** deliver_to, checked and its host's addresses vetted before the quote. */
  pushTo?: URL;
  /** What the operation's plan decided: the work function's parameters. */
  params: unknown;
  files: JobFile[];
  pageCounts: number[];
  amount: bigint;
  jobDir: LazyJobDir;
  /** Total input bytes, for logs and metrics. */
  inputBytes: number;
}

// "the file is 50 MB; the limit is 50 MB" names nothing: when rounding hides the excess, say bytes.
function overLimit(size: number, limit: number): string {
  return megabytes(size) === megabytes(limit) ? `${size} bytes; the limit is ${limit} bytes (${megabytes(limit)})` : `${megabytes(size)}; the limit is ${megabytes(limit)}`;
}

const isBytes = (input: FileInput): input is Uint8Array => input instanceof Uint8Array;

/**
 * The most files one request may give as URLs. Each is fetched in turn within URL_FETCH_TIMEOUT_MS,
 * so this bounds how long a request can take before its quote, and how long a job directory lives.
 */
export const MAX_URL_INPUTS = 20;

/** How many URL inputs the longest request fetches: at most MAX_URL_INPUTS, fewer when no operation takes so many files. */
export function mostUrlInputs(ops: readonly Operation[]): number {
  return Math.min(MAX_URL_INPUTS, Math.max(...ops.map((op) => op.input.count.max)));
}

function checkSizes(op: Operation, raw: RawRequest): void {
  const { count, maxBytes } = op.input;
  if (count.max === 0 && raw.uploads.length > 0) {
    const urls = op.fields.filter((f) => f.type === 'string' && f.buyerUrl).map((f) => `"${f.name}"`).join(', ');
    fail('FIELD_INVALID', `${op.path} takes no file: it fetches what ${urls} names`, { field: 'file' });
  }
  if (raw.uploads.length > count.max) {
    fail(count.max > 1 ? 'LIMIT_EXCEEDED' : 'FIELD_INVALID',
      count.max > 1 ? `${op.path} takes at most ${count.max} files; ${raw.uploads.length} were sent`
        : `"file" was sent ${raw.uploads.length} times; ${op.path} takes exactly one file`, { field: 'file' });
  }
  const urls = raw.uploads.filter((input) => !isBytes(input)).length;
  if (urls > MAX_URL_INPUTS) {
    fail('LIMIT_EXCEEDED', `at most ${MAX_URL_INPUTS} files can be given as URLs in one request; ${urls} were sent: upload the others`,
      { field: 'file' });
  }
  raw.uploads.forEach((input, i) => {
    if (isBytes(input) && input.byteLength > maxBytes) {
      fail('PAYLOAD_TOO_LARGE', `${count.max > 1 ? `file ${i + 1}` : 'the file'} is ${overLimit(input.byteLength, maxBytes)}`, { field: 'file' });
    }
  });
  checkTotal(op, raw.uploads.filter(isBytes));
  const named = op.input.namedFile;
  if (raw.namedFile !== undefined && !named) throw new Error(`${op.id} takes no named file`);
  if (named && raw.namedFile && isBytes(raw.namedFile) && raw.namedFile.byteLength > named.maxBytes) {
    fail('PAYLOAD_TOO_LARGE', `"${named.name}" is ${overLimit(raw.namedFile.byteLength, named.maxBytes)}`, { field: named.name });
  }
  for (const field of op.fields) {
    const value = raw.fields[field.name];
    if (field.type === 'string' && field.maxBytes !== undefined && typeof value === 'string' && Buffer.byteLength(value) > field.maxBytes) {
      fail('PAYLOAD_TOO_LARGE', `"${field.name}" is ${Buffer.byteLength(value)} bytes; the limit is ${field.maxBytes} bytes`, { field: field.name });
    }
  }
}

function checkTotal(op: Operation, uploads: readonly Uint8Array[]): void {
  const total = uploads.reduce((sum, b) => sum + b.byteLength, 0);
  const { maxTotalBytes } = op.input;
  if (total > maxTotalBytes) fail('PAYLOAD_TOO_LARGE', `the files total ${overLimit(total, maxTotalBytes).replace('the limit', 'the limit per request')}`, { field: 'file' });
}

/**
 * Fetches the files given as URLs, in order, each cut at the operation's file limit and at what
 * is left of the request's total; the paid retry fetches them again and is priced from what it got.
 */
async function fetchUrlInputs(op: Operation, raw: RawRequest, rules: OutboundRules): Promise<FetchedRequest> {
  if (raw.uploads.every(isBytes)) return raw as FetchedRequest;
  const urls = raw.uploads.map((input) => (isBytes(input) ? undefined : parseBuyerUrl(input.url, input.field, rules)));
  let left = op.input.maxTotalBytes - raw.uploads.filter(isBytes).reduce((sum, b) => sum + b.byteLength, 0);
  const uploads: Uint8Array[] = [];
  for (const [i, input] of raw.uploads.entries()) {
    const url = urls[i];
    if (isBytes(input) || !url) {
      uploads.push(input as Uint8Array);
      continue;
    }
    const fetched = await fetchBuyerUrl(url, { field: input.field, maxBytes: Math.min(op.input.maxBytes, Math.max(left, 0)), rules });
    left -= fetched.bytes.byteLength;
    uploads.push(fetched.bytes);
  }
  checkTotal(op, uploads);
  return { ...raw, uploads };
}

/** Fields naming a page the service will fetch: the fetch rules' static parts (form, literal addresses), before payment. */
async function checkBuyerUrlFields(op: Operation, fields: Record<string, unknown>, outbound: OutboundRules): Promise<void> {
  for (const field of op.fields) {
    if (field.type !== 'string' || !field.buyerUrl || fields[field.name] === undefined) continue;
    const url = parseBuyerUrl(fields[field.name], field.name, outbound);
    // A host name is looked up only when the page is fetched; a literal address is judged now, without a connection.
    if (isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0) await vetBuyerUrl(url, field.name, outbound);
  }
}

/** Whether the operation loads a page from a buyer's URL in a browser, through the job's fetch channel. */
export function fetchesPages(op: Operation): boolean {
  return op.fields.some((f) => f.type === 'string' && f.buyerUrl === true);
}

function checkFileCount(op: Operation, raw: RawRequest): void {
  const { min } = op.input.count;
  if (min === 0) return;
  if (raw.uploads.length === 0) fail('FIELD_INVALID', `"file" is required: ${INPUT_KINDS[op.input.kind].file}`, { field: 'file' });
  if (raw.uploads.length < min) fail('FIELD_INVALID', `${op.path} needs ${min} to ${op.input.count.max} files; ${raw.uploads.length} was sent`, { field: 'file' });
}

/**
 * The named file fetched when given as a URL, checked by the inspector of its kind (an image's
 * type by its bytes, its pixels) and in the formats the operation takes; a refusal names the field.
 */
async function inspectNamedFile(input: FileInput | undefined, rules: OutboundRules,
  context: InspectContext): Promise<PreparedFile<InspectedAs<'image'>> | undefined> {
  const spec = context.op.input.namedFile;
  if (!spec || input === undefined) return undefined;
  const bytes = isBytes(input)
    ? input
    : (await fetchBuyerUrl(parseBuyerUrl(input.url, input.field, rules), { field: input.field, maxBytes: spec.maxBytes, rules })).bytes;
  const takes = `"${spec.name}" takes ${spec.formats.map((f) => f.toUpperCase()).join(' or ')} images`;
  try {
    const prepared = await INSPECTORS[spec.kind](bytes, context);
    const { format } = prepared.inspected.header;
    if (!spec.formats.includes(format)) fail('UNSUPPORTED_TYPE', `the file is a ${format.toUpperCase()} image; ${takes}`);
    return prepared;
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    // The image inspection speaks of "the file" and of what the image operations accept.
    const message = err.message.replace(/this endpoint accepts .* images$/, takes);
    const lead = /^[A-Z][a-z]/.test(message) ? message.charAt(0).toLowerCase() + message.slice(1) : message;
    throw new ServiceError(err.code, `"${spec.name}": ${lead}`, { ...err.extra, field: spec.name });
  }
}

/** What prepare needs from the running service. */
export interface PrepareContext {
  config: Config;
  pool: WorkerPool;
  inspections: InspectionCache;
  /** The rules for every fetch and push made for a buyer. */
  outbound: OutboundRules;
}

/**
 * Runs every check that can refuse the request and computes the exact price.
 *
 * `paid` marks a retry that carries a payment: its quote already ran the deep structural check, and
 * damage it would find fails the paid job uncharged, so the retry skips it. When the quote's
 * result for the same bytes (and password) is still in the inspection cache, the retry uses it
 * instead of running qpdf again; otherwise the price, readability and encryption checks run anew.
 */
export async function prepare(
  op: Operation, request: RawRequest, jobDir: LazyJobDir, context: PrepareContext, paid = false,
): Promise<Prepared> {
  const { config, pool, inspections, outbound } = context;
  checkSizes(op, request);
  checkFileCount(op, request);
  const fields = validateFields(op, request.fields);
  await checkBuyerUrlFields(op, fields, outbound);
  const delivery = request.delivery ?? { kind: 'inline' };
  let pushTo: URL | undefined;
  if (delivery.kind === 'push') {
    pushTo = parseBuyerUrl(delivery.url, 'deliver_to', outbound);
    await vetBuyerUrl(pushTo, 'deliver_to', outbound);
  }
  const raw = await fetchUrlInputs(op, request, outbound);
  // What every file's inspection is told of the request.
  const inspecting = { op, fields, paid, timeoutMs: jobTimeoutMs(op, config), jobDir, inspections };
  // The named file is the job's last.
  const namedFile = await inspectNamedFile(request.namedFile, outbound, { ...inspecting, index: raw.uploads.length });

  const inspect: Inspector = INSPECTORS[op.input.kind];
  const files: PreparedFile[] = [];
  for (const [index, bytes] of raw.uploads.entries()) {
    const which = raw.uploads.length > 1 ? `file ${index + 1}: ` : '';
    try {
      files.push(await inspect(bytes, { ...inspecting, index, declared: raw.declared?.[index] }));
    } catch (err) {
      if (which && err instanceof Error) err.message = which + err.message;
      throw err;
    }
  }

  const pageCounts = files.map((f) => f.pages);
  const pages = pageCounts.reduce((a, b) => a + b, 0);
  // Only kinds with pages count any, so the limit holds for them alone.
  if (!op.input.acceptsEncrypted && op.input.maxPages !== undefined && pages > op.input.maxPages) {
    fail('LIMIT_EXCEEDED', `the PDF has ${pages} pages; ${op.path} takes at most ${op.input.maxPages}`, { field: 'file' });
  }
  const params = await op.plan({
    fields,
    sent: (name) => raw.fields[name] !== undefined && raw.fields[name] !== '',
    files: files.map((f) => f.inspected),
    ...(namedFile ? { namedFile: namedFile.inspected } : {}),
    pages,
    pageBoxes: () => files[0]?.pageBoxes?.() ?? Promise.resolve(undefined),
  });

  requireProvider(config, op);
  if (!pool.hasRoom()) fail('QUEUE_FULL', 'the service is busy; retry in a few seconds', { retryAfterSeconds: 5 });

  const amount = priceOf(op, op.price.model === 'per-page' ? pageCounts : []);
  return {
    op, params, amount, jobDir, pageCounts, delivery, ...(pushTo ? { pushTo } : {}),
    // The named file follows the operation's files.
    files: [...files, ...(namedFile ? [namedFile] : [])].map((f) => f.job),
    inputBytes: raw.uploads.reduce((s, b) => s + b.byteLength, 0) + (namedFile?.job.bytes.byteLength ?? 0),
  };
}

/** The time a job of the operation is given: its own deadline, or JOB_TIMEOUT_MS when that is shorter. */
export function jobTimeoutMs(op: Operation, config: Pick<Config, 'jobTimeoutMs'>): number {
  return Math.min(op.timeoutMs, config.jobTimeoutMs);
}

/** Hands the prepared job to the pool with its deadline. The bytes are transferred, so `prepared` is spent. */
export async function execute(prepared: Prepared, config: Config, pool: WorkerPool, outbound: OutboundRules,
  clientGone?: AbortSignal): Promise<JobOutput> {
  const timeoutMs = jobTimeoutMs(prepared.op, config);
  const input: JobInput = {
    operation: prepared.op.id,
    files: prepared.files.map((f) => ({ ...f, bytes: ownBuffer(f.bytes) })),
    params: prepared.params,
    jobDir: prepared.jobDir.path(),
    deadline: Date.now() + timeoutMs,
  };
  if (!fetchesPages(prepared.op)) return pool.run(input, clientGone);
  // The worker's browser asks, the vetted fetcher answers: the channel ends with the job.
  const { port1, port2 } = new MessageChannel();
  const jobEnded = new AbortController();
  servePageFetches(port1, outbound, { ...PAGE_FETCH_BUDGET, field: 'url' }, jobEnded.signal);
  try {
    return await pool.run({ ...input, fetchPort: port2 }, clientGone);
  } finally {
    jobEnded.abort();
  }
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

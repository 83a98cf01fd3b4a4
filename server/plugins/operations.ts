// One POST route per operation, derived from the table: multipart parsing with the operation's
// size limit, then the one paid-call path; this plugin only translates to and from HTTP.
import type { Readable } from 'node:stream';
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import { encodePaymentResponseHeader } from '@x402/core/http';
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { ServiceError, fail } from '../../core/errors.js';
import Bourne from '@hapi/bourne';
import type { JobOutput } from '../../core/job.js';
import type { RawRequest } from '../pipeline.js';
import { readArguments } from '../arguments.js';
import type { Deliverable, Surface } from '../delivery.js';
import { MCP_MAX_DECODED_BYTES } from '../../core/protocol.js';
import { readMultipart } from './multipart.js';
import { quoteResponse, readPayment } from './x402-http.js';
import { withBody, streamedPayload } from './body.js';
import { paidCall, probePrice, type PaidCall } from '../paid-call.js';
import { watchConnection, type Connection } from './connection.js';
import type { PaidOutcome } from '../payment/gate.js';
import { jobLifetimeMs, type JobState } from '../jobs.js';
import { httpResource } from '../derive/resources.js';
import { relayToHolder, replicaOrigin, wasForwarded } from '../replica-forward.js';
import { unconfirmed } from '../payment/stages/refusals.js';
import type { App } from '../app.js';

// Multipart framing and small text fields on top of the files themselves.
const MULTIPART_OVERHEAD = 1024 * 1024;

// An HTTP answer carries any result the service makes (ZIPs stop at MAX_ZIP_BYTES, files at their limits).
const HTTP_SURFACE: Surface<JobOutput> = { maxInlineBytes: Number.MAX_SAFE_INTEGER, linkHint: 'send delivery=link', encode: (output) => output, heldBytesOf: (output) => output.body.byteLength };

/** A JSON body: the MCP tool's arguments, `{ "file": { "data" } | { "url" }, "<field>": value, … }`. */
function readJsonArguments(op: Operation, body: Buffer): RawRequest {
  let parsed: unknown;
  try {
    // Bourne refuses __proto__ keys, as hapi's own JSON parsing does.
    parsed = Bourne.parse(body.toString('utf8'), { protoAction: 'error' });
  } catch {
    fail('MALFORMED_BODY', 'the request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    fail('MALFORMED_BODY', `the JSON body must be an object: { "${op.input.count.max > 1 ? 'files": [ … ]' : 'file": { "data": … } or { "url": … }'}, and the fields }`);
  }
  return readArguments(op, parsed as Record<string, unknown>);
}

/** No body at all, or the JSON `{}`: what discovery services send to learn a price. */
function isPriceProbe(mime: string | undefined, body: Buffer): boolean {
  if (body.length === 0) return true;
  return mime === 'application/json' && body.length < 64 && /^\s*\{\s*\}\s*$/.test(body.toString('utf8'));
}

/** A multipart body of the largest files, or a JSON body of them in base64, with room for the fields. */
function bodyLimitOf(op: Operation): number {
  const inBase64 = Math.ceil(Math.min(op.input.maxTotalBytes, MCP_MAX_DECODED_BYTES) / 3) * 4;
  return Math.max(op.input.maxTotalBytes, inBase64) + MULTIPART_OVERHEAD;
}

// The file parts (or URLs), the operation's fields, and a few parts of slack for fields it does not know.
function maxPartsOf(op: Operation): number {
  return 2 * op.input.count.max + (op.input.namedFile ? 2 : 0) + op.fields.length + 8;
}

/**
 * The retry of a payment whose result another replica holds, passed on to it whole (the body
 * streamed, not read here); undefined when no other replica said it holds it.
 */
async function toHolder(request: Request, h: ResponseToolkit, app: App) {
  const holder = replicaOrigin(await app.gate.holderElsewhere(readPayment(request)!));
  if (!holder) return undefined;
  const relayed = await relayToHolder(request, h, holder, app.config.facilitatorTimeoutMs + 30_000, request.payload as Readable);
  if (relayed) return relayed;
  throw unconfirmed('the result is held by another instance of the service, which did not answer');
}

/** The answer to a call that ended: its quote, or its result (inline, a link or a push's receipt) with the receipt. */
function answer(h: ResponseToolkit, op: Operation, outcome: PaidOutcome<Deliverable<JobOutput>>, connection: Connection) {
  if (outcome.kind === 'payment-required') return quoteResponse(h, outcome.paymentRequired);
  const { result, receipt } = outcome;
  void connection.answered.then(outcome.sent);
  const response = result.kind === 'inline'
    ? h.response(Buffer.from(result.body.body.buffer, result.body.body.byteOffset, result.body.body.byteLength)).type(result.body.mediaType)
    : h.response(result.kind === 'link' ? { result: result.result } : { delivered: result.delivered }).type('application/json');
  // The report (redactions, what was removed) in its header, however the file left.
  if (op.output.report && result.report) response.header(op.output.report.header, JSON.stringify(result.report));
  return response
    .header('payment-response', encodePaymentResponseHeader(receipt))
    .header('cache-control', 'no-store');
}

/** Whether the request's Prefer header (RFC 7240) asks for respond-async. */
export function prefersAsync(prefer: string | string[] | undefined): boolean {
  const values = Array.isArray(prefer) ? prefer : prefer === undefined ? [] : [prefer];
  return values.some((value) => value.split(',').some((item) => item.split(/[;=]/)[0].trim().toLowerCase() === 'respond-async'));
}

/**
 * A long job: the same paid call, answered 202 with the job's address once the payment is
 * verified, then run to its end whether the client stays or not. Its result is a one-time link
 * (or the receipt of the push to deliver_to). A call that ends before acceptance (a quote, a
 * refusal, a held result's retry) is answered as it would be without the preference.
 */
async function startJob(
  request: Request, h: ResponseToolkit, app: App, op: Operation, raw: RawRequest, payment: Pick<PaidCall<JobOutput>, 'payment'>,
) {
  const connection = watchConnection(request.raw.res);
  // The client may leave before the 202 (nothing is charged then), not after it.
  const gone = new AbortController();
  let accepted = false;
  connection.gone.addEventListener('abort', () => { if (!accepted) gone.abort(); });
  const delivery = raw.delivery?.kind === 'push' ? raw.delivery : { kind: 'link' as const };
  const stateOf = (outcome: PaidOutcome<Deliverable<JobOutput>>): JobState => {
    if (outcome.kind === 'payment-required') {
      return { state: 'failed', error: new ServiceError('SETTLEMENT_FAILED', outcome.paymentRequired.error).body().error };
    }
    // The job holds the result for its token: that is its delivery.
    outcome.sent(true);
    const { result, receipt } = outcome;
    const extra = { receipt, ...(result.report ? { report: result.report } : {}) };
    if (result.kind === 'link') return { state: 'done', result: result.result, ...extra };
    return { state: 'done', ...(result.kind === 'pushed' ? { delivered: result.delivered } : {}), ...extra };
  };
  const start = await app.jobs.start(
    (onAccepted) => paidCall(app, {
      op, raw: { ...raw, delivery }, resource: httpResource(op, app), surface: HTTP_SURFACE, ...payment, clientGone: gone.signal,
      admit: () => app.jobs.requireRoom(), accepted: () => { onAccepted(); accepted = true; },
    }),
    stateOf,
    Math.ceil(jobLifetimeMs(app.config) / 1000),
  );
  if (!start.accepted) return answer(h, op, start.outcome, connection);
  const url = `${app.config.baseUrl}/v1/jobs/${start.token}`;
  return h.response({ job: { url, state: 'running' } }).code(202).type('application/json')
    .header('location', url)
    .header('preference-applied', 'respond-async')
    .header('cache-control', 'no-store');
}

function handlerFor(op: Operation, app: App) {
  return async (request: Request, h: ResponseToolkit) => {
    request.plugins.paydoc = { operation: op.id };
    const carriesPayment = request.headers['payment-signature'] !== undefined || request.headers['x-payment'] !== undefined;
    if (carriesPayment && !wasForwarded(request.raw.req.headers)) {
      const forwarded = await toHolder(request, h, app);
      if (forwarded) return forwarded;
    }
    // An unpaid body is only inspected and answered with a quote: it may live in a lent buffer.
    return withBody(request, app.config.uploadTimeoutMs, !carriesPayment, async (body) => {
      if (!carriesPayment && isPriceProbe(request.mime, body)) return quoteResponse(h, await probePrice(app, op, httpResource(op, app)));
      // hapi reads a missing Content-Type as JSON; only a body that says it is JSON is read as JSON.
      const saysJson = request.mime === 'application/json' && request.headers['content-type'] !== undefined;
      const raw = saysJson ? readJsonArguments(op, body) : readMultipart(body, request.headers['content-type'], maxPartsOf(op), op.input.namedFile?.name);
      const payment = carriesPayment ? { payment: () => readPayment(request)! } : {};
      if (prefersAsync(request.raw.req.headers.prefer)) return startJob(request, h, app, op, raw, payment);
      const connection = watchConnection(request.raw.res);
      const resource = httpResource(op, app);
      const outcome = await paidCall(app, { op, raw, resource, surface: HTTP_SURFACE, ...payment, clientGone: connection.gone });
      return answer(h, op, outcome, connection);
    });
  };
}

export const operationsPlugin: Plugin<{ app: App }> = {
  name: 'operations',
  register(server, { app }) {
    for (const op of operations) {
      server.route({
        method: 'POST',
        path: op.path,
        options: {
          // Slow uploads are cut off (408) rather than holding a socket forever.
          // JSON and untyped bodies reach the handler only to be recognised as price probes.
          payload: streamedPayload(['multipart/form-data', 'application/json', 'application/octet-stream'], bodyLimitOf(op)),
          // The response timeout counts from the request's arrival, upload included: it leaves the
          // whole upload time, the job's deadline and settlement, so a slow upload ends in 408, not 503.
          timeout: {
            server: app.config.uploadTimeoutMs + op.timeoutMs + 60_000,
            socket: app.config.uploadTimeoutMs + op.timeoutMs + 90_000,
          },
          // A paid result is always answered 200, even if it were empty (never a silent 204).
          response: { emptyStatusCode: 200 },
          description: op.title,
        },
        handler: handlerFor(op, app),
      });
    }
  },
};

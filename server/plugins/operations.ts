// One POST route per operation, derived from the table: multipart parsing with the operation's
// size limit, then the one paid-call path; this plugin only translates to and from HTTP.
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { ServiceError } from '../../core/errors.js';
import { readMultipart } from './multipart.js';
import { withBody, streamedPayload } from './body.js';
import { paidCall, probePrice } from '../paid-call.js';
import { watchConnection } from './connection.js';
import { httpResource } from '../derive/resources.js';
import type { App } from '../index.js';

// Multipart framing and small text fields on top of the files themselves.
const MULTIPART_OVERHEAD = 1024 * 1024;

// A quote is shared and frozen (see the gate), so its header is encoded once.
const encodedQuotes = new WeakMap<PaymentRequired, string>();

function paymentRequiredHeader(paymentRequired: PaymentRequired): string {
  let header = encodedQuotes.get(paymentRequired);
  if (header === undefined) {
    header = encodePaymentRequiredHeader(paymentRequired);
    if (Object.isFrozen(paymentRequired)) encodedQuotes.set(paymentRequired, header);
  }
  return header;
}

function readPayment(request: Request): PaymentPayload | undefined {
  const header = request.headers['payment-signature'] ?? request.headers['x-payment'];
  if (header === undefined) return undefined;
  try {
    return decodePaymentSignatureHeader(Array.isArray(header) ? header[0] : header);
  } catch {
    throw new ServiceError('PAYMENT_INVALID', 'the PAYMENT-SIGNATURE header is not base64-encoded x402 PaymentPayload JSON');
  }
}

function quoteResponse(h: ResponseToolkit, paymentRequired: PaymentRequired) {
  return h.response(paymentRequired)
    .code(402)
    .header('payment-required', paymentRequiredHeader(paymentRequired))
    .header('cache-control', 'no-store');
}

/** No body at all, or the JSON `{}`: what discovery services send to learn a price. */
function isPriceProbe(mime: string | undefined, body: Buffer): boolean {
  if (body.length === 0) return true;
  return mime === 'application/json' && body.length < 64 && /^\s*\{\s*\}\s*$/.test(body.toString('utf8'));
}

// The file parts, the operation's fields, and a few parts of slack for fields it does not know.
function maxPartsOf(op: Operation): number {
  return op.input.count.max + op.fields.length + 8;
}

function handlerFor(op: Operation, app: App) {
  return async (request: Request, h: ResponseToolkit) => {
    request.plugins.paydoc = { operation: op.id };
    const carriesPayment = request.headers['payment-signature'] !== undefined || request.headers['x-payment'] !== undefined;
    // An unpaid body is only inspected and answered with a quote: it may live in a lent buffer.
    return withBody(request, app.config.uploadTimeoutMs, !carriesPayment, async (body) => {
      if (!carriesPayment && isPriceProbe(request.mime, body)) return quoteResponse(h, await probePrice(app, op, httpResource(op, app)));
      const raw = readMultipart(body, request.headers['content-type'], maxPartsOf(op));
      const connection = watchConnection(request.raw.res);
      const outcome = await paidCall(app, {
        op, raw, resource: httpResource(op, app),
        ...(carriesPayment ? { payment: () => readPayment(request)! } : {}),
        clientGone: connection.gone,
      });
      if (outcome.kind === 'payment-required') return quoteResponse(h, outcome.paymentRequired);
      const { result, receipt } = outcome;
      void connection.answered.then(outcome.sent);
      return h.response(Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength))
        .type(result.mediaType)
        .header('payment-response', encodePaymentResponseHeader(receipt))
        .header('cache-control', 'no-store');
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
          payload: streamedPayload(['multipart/form-data', 'application/json', 'application/octet-stream'], op.input.maxTotalBytes + MULTIPART_OVERHEAD),
          // The response timeout counts from the request's arrival, upload included: it leaves the
          // whole upload time, the job's deadline and settlement, so a slow upload ends in 408, not 503.
          timeout: { server: app.config.uploadTimeoutMs + op.timeoutMs + 60_000, socket: app.config.uploadTimeoutMs + op.timeoutMs + 90_000 },
          // A paid result is always answered 200, even if it were empty (never a silent 204).
          response: { emptyStatusCode: 200 },
          description: op.title,
        },
        handler: handlerFor(op, app),
      });
    }
  },
};

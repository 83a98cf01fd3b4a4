// One POST route per operation, derived from the table: multipart parsing with the operation's
// size limit, then the one paid-call path; this plugin only translates to and from HTTP.
import { Readable } from 'node:stream';
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { ServiceError, fail } from '../../core/errors.js';
import type { RawRequest } from '../pipeline.js';
import { paidCall } from '../paid-call.js';
import { httpResource } from '../derive/resources.js';
import type { App } from '../index.js';

// Multipart framing and small text fields on top of the files themselves.
const MULTIPART_OVERHEAD = 1024 * 1024;

// File parts arrive as streams over their exact bytes. hapi's 'data' and 'annotated' outputs
// parse each file part by its declared Content-Type instead: a text/markdown upload became a
// lossy UTF-8 string, an application/json one a parsed object and an empty one {}, none of them
// the bytes that were sent.
function isFile(value: unknown): value is Readable {
  return value instanceof Readable;
}

async function bytesOf(part: Readable): Promise<Buffer> {
  // hapi's parser wraps each part's bytes, already whole in memory, in a stream that would hand
  // them out again in 16 KB slices; taking the whole buffer when it is there saves a third copy of
  // every upload at peak (the stream is the fallback if that internal ever changes).
  const held = part as unknown as { _data?: unknown; _position?: unknown };
  if (Buffer.isBuffer(held._data) && held._position === 0) return held._data;
  const chunks: Buffer[] = [];
  for await (const chunk of part) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

/** Splits the parsed multipart body into uploads (the `file` parts, in order) and text fields. */
export async function readMultipart(payload: unknown): Promise<RawRequest> {
  if (payload === null || payload === undefined) return { uploads: [], fields: {} };
  if (typeof payload !== 'object' || Buffer.isBuffer(payload)) fail('UNSUPPORTED_MEDIA', 'the request body must be multipart/form-data with a "file" part');
  const uploads: Uint8Array[] = [];
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(payload as Record<string, unknown>)) {
    const parts = Array.isArray(value) ? value : [value];
    if (name === 'file') {
      // A file sent without a filename arrives as text; its bytes are still the file.
      for (const part of parts) uploads.push(isFile(part) ? await bytesOf(part) : Buffer.from(String(part), 'utf8'));
      continue;
    }
    if (parts.some(isFile)) fail('FIELD_INVALID', `"${name}" was sent as a file; only "file" carries a file`, { field: name });
    fields[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return { uploads, fields };
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

function handlerFor(op: Operation, app: App) {
  return async (request: Request, h: ResponseToolkit) => {
    request.plugins.paydoc = { operation: op.id };
    const raw = await readMultipart(request.payload);
    const carriesPayment = request.headers['payment-signature'] !== undefined || request.headers['x-payment'] !== undefined;
    const outcome = await paidCall(app, {
      op, raw, resource: httpResource(op, app),
      ...(carriesPayment ? { payment: () => readPayment(request)! } : {}),
    });
    if (outcome.kind === 'payment-required') {
      return h.response(outcome.paymentRequired)
        .code(402)
        .header('payment-required', encodePaymentRequiredHeader(outcome.paymentRequired))
        .header('cache-control', 'no-store');
    }
    const { result, receipt } = outcome;
    return h.response(Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength))
      .type(result.mediaType)
      .header('payment-response', encodePaymentResponseHeader(receipt))
      .header('cache-control', 'no-store');
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
          payload: {
            output: 'data',
            parse: true,
            multipart: { output: 'stream' },
            allow: ['multipart/form-data'],
            maxBytes: op.input.maxTotalBytes + MULTIPART_OVERHEAD,
            maxParts: op.input.count.max + op.fields.length + 8,
            // Slow uploads are cut off rather than holding a socket forever.
            timeout: 120_000,
          },
          timeout: { server: op.timeoutMs + 60_000, socket: op.timeoutMs + 90_000 },
          // A paid result is always answered 200, even if it were empty (never a silent 204).
          response: { emptyStatusCode: 200 },
          description: op.title,
        },
        handler: handlerFor(op, app),
      });
    }
  },
};

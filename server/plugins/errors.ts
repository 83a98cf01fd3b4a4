// The one place errors become responses: every ServiceError, hapi/Boom error (payload too
// large, malformed content type, unknown route) and unexpected failure gets the same body shape.
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import { ServiceError, asServiceError, type ErrorCode } from '../../core/errors.js';
import type { App } from '../app.js';

interface BoomLike { isBoom: true; output: { statusCode: number }; message: string; data?: unknown }

// The content-type parser's own fixed wordings (never any client text): enough to say what is
// wrong with a body's type. The multipart body itself is read in multipart.ts.
const PARSER_REASONS = /^Invalid content-type header(: duplicate parameter|: multipart missing boundary)?$/;

function parserReason(err: BoomLike): string | undefined {
  const inner = (err.data as { message?: unknown } | undefined)?.message;
  for (const candidate of [inner, err.message]) {
    if (typeof candidate === 'string' && PARSER_REASONS.test(candidate)) return candidate.charAt(0).toLowerCase() + candidate.slice(1);
  }
  return undefined;
}

// hapi reports what it rejects itself with Boom errors; map them to our catalog.
function fromBoom(err: BoomLike, uploadTimeoutMs: number): ServiceError {
  const status = err.output.statusCode;
  const map: Record<number, [ErrorCode, string]> = {
    404: ['NOT_FOUND', 'no such resource'],
    405: ['METHOD_NOT_ALLOWED', 'the method is not allowed on this resource'],
    413: ['PAYLOAD_TOO_LARGE', 'the request body is larger than this endpoint accepts'],
    415: ['UNSUPPORTED_MEDIA', 'the request body must be multipart/form-data'],
    400: ['MALFORMED_BODY', 'the request body could not be parsed as multipart/form-data'],
    408: ['UPLOAD_TIMEOUT', `the request body did not arrive within ${uploadTimeoutMs / 1000} s (UPLOAD_TIMEOUT_MS); nothing was charged`],
  };
  const [code, message] = map[status] ?? ['INTERNAL', 'internal error'];
  if (code === 'PAYLOAD_TOO_LARGE' && /Payload content length greater than maximum allowed: (\d+)/.test(err.message)) {
    const limit = Number(RegExp.$1);
    return new ServiceError(code, `the request body is larger than the ${Math.round(limit / 1048576)} MB this endpoint accepts`);
  }
  const reason = code === 'MALFORMED_BODY' ? parserReason(err) : undefined;
  return new ServiceError(code, reason ? `${message}: ${reason}` : message);
}

export const errorsPlugin: Plugin<{ app: App }> = {
  name: 'errors',
  register(server, { app }) {
    server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
      const response = request.response as unknown;
      if (!(response instanceof Error) && !(response as BoomLike)?.isBoom) return h.continue;
      let error: ServiceError;
      if (response instanceof ServiceError) error = response;
      else if ((response as BoomLike).isBoom && (response as BoomLike).output.statusCode < 500) {
        error = fromBoom(response as BoomLike, app.config.uploadTimeoutMs);
      } else {
        // Unexpected: log the kind only (never the request's content), answer a fixed message.
        app.logger.error({ reqId: request.info.id, err: { type: (response as Error).name, stack: process.env.PAYDOC_DEBUG ? (response as Error).stack : undefined } }, 'unexpected error');
        error = asServiceError(response);
      }
      // The operator's to fix (a revoked or wrong facilitator key): said in the log too. The message
      // names the facilitator's host and answer, never a credential.
      if (error.code === 'FACILITATOR_REFUSED') app.logger.error({ reqId: request.info.id, code: error.code }, error.message);
      const res = h.response(error.body()).code(error.status).type('application/json');
      if (error.status === 503 || error.status === 429) res.header('retry-after', String(error.extra.retryAfterSeconds ?? 5));
      // The rest of a body that came too slowly is not waited for: the connection is closed.
      if (error.code === 'UPLOAD_TIMEOUT') res.header('connection', 'close');
      return res;
    });
  },
};

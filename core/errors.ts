// The one error catalog. Every failure the service reports is a ServiceError with a code
// from this table; one place (the errors plugin, and the MCP tool wrapper) turns it into a
// response. Bodies always have the same shape:
//   { "error": { "code": "FIELD_INVALID", "status": 422, "message": "...", "field"?: "..." } }
// A 5xx body carries only the catalog's fixed wording, never stderr, paths or stacks.

export const ERROR_CATALOG = {
  // 4xx: the client can fix these; the message names the problem.
  PAYLOAD_TOO_LARGE: { status: 413, summary: 'The upload is larger than the limit.' },
  LIMIT_EXCEEDED: { status: 413, summary: 'The input exceeds a limit (pages, pixels, ranges or size).' },
  FIELD_INVALID: { status: 422, summary: 'A form field is missing, unknown or out of range.' },
  UNSUPPORTED_TYPE: { status: 422, summary: 'The file is not of a type this operation accepts.' },
  CORRUPT_INPUT: { status: 422, summary: 'The file cannot be read.' },
  ENCRYPTED_PDF: { status: 422, summary: 'The PDF is password-protected.' },
  WRONG_PASSWORD: { status: 422, summary: 'The password does not open the PDF.' },
  NO_CONTENT: { status: 422, summary: 'The input holds nothing this operation can return.' },
  TARGET_UNREACHABLE: { status: 422, summary: 'The target size (target_kb) could not be reached; the message names the smallest size reached. Nothing was charged.' },
  UNSUPPORTED_MEDIA: { status: 422, summary: 'The request body must be multipart/form-data.' },
  MALFORMED_BODY: { status: 422, summary: 'The request body could not be parsed.' },
  RENDER_TIMEOUT: { status: 422, summary: 'The page did not finish loading and printing within the job\'s deadline (the message names it); nothing was charged.' },
  URL_REFUSED: { status: 422, summary: 'The URL is not one the service fetches or pushes to (scheme, address class, credentials, or URL inputs turned off).' },
  URL_FETCH_FAILED: { status: 422, summary: 'The URL could not be fetched: the origin\'s answer, a connection failure, too many redirects or the deadline; nothing was charged.' },
  RESULT_TOO_LARGE: { status: 413, summary: 'The result is larger than this way of delivery carries; nothing was charged. Ask for delivery=link.' },
  UPLOAD_TIMEOUT: { status: 408, summary: 'The request body did not arrive within the upload time limit.' },
  NOT_FOUND: { status: 404, summary: 'No such resource.' },
  METHOD_NOT_ALLOWED: { status: 405, summary: 'The method is not allowed on this resource.' },
  RATE_LIMITED: { status: 429, summary: 'Too many requests from this address; retry after the seconds in Retry-After.' },
  // Payment.
  PAYMENT_REQUIRED: { status: 402, summary: 'This endpoint needs a payment.' },
  PAYMENT_INVALID: { status: 402, summary: 'The payment was refused.' },
  SETTLEMENT_FAILED: { status: 402, summary: 'The payment could not be settled; nothing was charged and no result is returned.' },
  PAYMENT_ID_CONFLICT: { status: 409, summary: 'This payment, or its payment identifier, was already used with a different payment payload.' },
  PAYMENT_ALREADY_USED: { status: 409, summary: 'This payment was already spent on the chain, by an earlier settlement or by its payer; nothing more was charged. Never a 402: paying again would pay twice.' },
  PAYMENT_IN_PROGRESS: { status: 409, summary: 'A request paid with this payment is still being processed; retry shortly to receive its result.' },
  RESULT_GONE: { status: 410, summary: 'This result link was already downloaded or has expired; results are not kept.' },
  RESULT_DELIVERED: { status: 410, summary: 'The result bought with this payment was delivered and, as results are, not kept; nothing more was charged.' },
  SETTLEMENT_UNCONFIRMED: { status: 503, summary: 'The settlement could not be confirmed yet; the result is held: send the identical request with the same payment again. You will not be charged twice.' },
  // Nobody reads it: the client closed the connection before the result was ready (nginx's 499).
  CLIENT_GONE: { status: 499, summary: 'The client closed the connection before the result was ready; nothing was charged.' },
  // 5xx: our side or a dependency; never charged.
  NOT_IMPLEMENTED: { status: 501, summary: 'This is not implemented.' },
  RESULT_ELSEWHERE: { status: 503, summary: 'This result link is held by another instance of the service; retry in a moment and the load balancer\'s next choice may be the one holding it.' },
  PROVIDER_DISABLED: { status: 503, summary: 'The model provider is not configured on this deployment.' },
  QUEUE_FULL: { status: 503, summary: 'The service is busy; retry shortly.' },
  GUARD_UNAVAILABLE: { status: 503, summary: 'The payment guard store is unreachable; nothing was charged.' },
  UNAVAILABLE: { status: 503, summary: 'A required component is unavailable.' },
  FACILITATOR_UNREACHABLE: { status: 502, summary: 'The payment facilitator could not be reached; nothing was charged.' },
  FACILITATOR_REFUSED: { status: 502, summary: 'The payment facilitator refused this service\'s credentials (the payment is not at fault); nothing was charged.' },
  DELIVERY_FAILED: { status: 502, summary: 'The result could not be pushed to deliver_to (the status it answered, or the failure is named); nothing was charged.' },
  PROVIDER_FAILED: { status: 502, summary: 'The model provider failed; nothing was charged.' },
  JOB_TIMEOUT: { status: 504, summary: 'The job passed its time limit; nothing was charged.' },
  JOB_FAILED: { status: 500, summary: 'The job failed; nothing was charged.' },
  INTERNAL: { status: 500, summary: 'Internal error; nothing was charged.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface ErrorBody {
  error: { code: ErrorCode; status: number; message: string; field?: string };
}

export class ServiceError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly extra: { field?: string; retryAfterSeconds?: number } = {},
  ) {
    super(message ?? ERROR_CATALOG[code].summary);
    this.name = 'ServiceError';
    this.status = ERROR_CATALOG[code].status;
  }

  /** What a client sees. 5xx messages are the catalog's own unless the message was written for clients. */
  body(): ErrorBody {
    return {
      error: {
        code: this.code,
        status: this.status,
        message: this.message,
        ...(this.extra.field ? { field: this.extra.field } : {}),
      },
    };
  }
}

/** A size as messages give it: megabytes to one decimal. */
export const megabytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;

export function fail(code: ErrorCode, message?: string, extra?: ServiceError['extra']): never {
  throw new ServiceError(code, message, extra);
}

/** Any thrown value as a ServiceError; unknown errors become INTERNAL with no detail leaked. */
export function asServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  return new ServiceError('INTERNAL');
}

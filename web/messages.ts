// The status line and the problem box, and the service's errors in plain words.
import { byId, element } from './dom.js';
import { sentence } from './format.js';
import type { ErrorBody } from './service-types.js';

// Plain words for each error code; the service's own message follows them and names the detail.
const ERROR_WORDS: Record<string, string> = {
  PAYLOAD_TOO_LARGE: 'The file is too large for this operation.',
  LIMIT_EXCEEDED: 'The file goes beyond a limit of this operation (pages, pixels or ranges).',
  FIELD_INVALID: 'One of the options is missing or not allowed.',
  UNSUPPORTED_TYPE: 'This operation does not take this kind of file.',
  CORRUPT_INPUT: 'The file could not be read; it may be damaged.',
  ENCRYPTED_PDF: 'The PDF is password-protected. Remove the password first (the unlock operation does that).',
  WRONG_PASSWORD: 'The password does not open this PDF.',
  NO_CONTENT: 'The file holds nothing this operation can return.',
  UNSUPPORTED_MEDIA: 'The request was not sent as a form upload.',
  MALFORMED_BODY: 'The upload could not be read by the service.',
  NOT_IMPLEMENTED: 'The service cannot do this with this file.',
  PROVIDER_DISABLED: 'This operation is switched off on this service.',
  QUEUE_FULL: 'The service is busy. Try again in a few seconds.',
  GUARD_UNAVAILABLE: 'The service cannot check payments safely right now.',
  UNAVAILABLE: 'A part of the service is unavailable right now.',
  FACILITATOR_UNREACHABLE: 'The payment processor could not be reached.',
  FACILITATOR_REFUSED: 'The payment processor refused this service\'s credentials; your payment is not at fault.',
  PROVIDER_FAILED: 'The text-recognition provider failed.',
  JOB_TIMEOUT: 'The job took longer than its time limit.',
  JOB_FAILED: 'The job failed.',
  SETTLEMENT_UNCONFIRMED: 'The payment could not be confirmed yet.',
  PAYMENT_IN_PROGRESS: 'This payment is still being processed.',
  RESULT_DELIVERED: 'The result of this payment was already delivered.',
  UPLOAD_TIMEOUT: 'The upload took too long.',
  INTERNAL: 'Something went wrong inside the service.',
};

export const NOT_CHARGED = 'Nothing was charged.';

export function setStatus(text: string): void {
  byId('status').textContent = text;
}

export function showProblem(headline: string, ...details: string[]): void {
  const box = byId('problem');
  box.replaceChildren(element('p', {}, element('strong', {}, headline)), ...details.filter(Boolean).map((d) => element('p', {}, d)));
}

export function clearProblem(): void {
  byId('problem').replaceChildren();
}

/** Reads the service's error body and puts it in plain words. */
export async function describeErrorResponse(
  response: Response,
): Promise<{ headline: string; detail: string; code?: string; field?: string }> {
  let body: ErrorBody | undefined;
  try {
    body = await response.json() as ErrorBody;
  } catch {
    body = undefined;
  }
  const code = body?.error?.code;
  const headline = (code && ERROR_WORDS[code]) ?? `The service answered with status ${response.status}.`;
  const message = body?.error?.message ? sentence(body.error.message) : '';
  return { headline, detail: message, code, field: body?.error?.field };
}

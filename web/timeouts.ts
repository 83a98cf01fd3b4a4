// How long the page waits for each thing it asks for before saying so in words: nothing it awaits
// may leave a person looking at a page that never answers.

/** The unpaid request that asks for the price: the upload and every check before payment (a large PDF on a busy service takes a minute). */
export const QUOTE_TIMEOUT_MS = 150_000;
/** The service's demo payer signs in milliseconds; the catalog, the health and the payer load as fast. */
export const SERVICE_READ_TIMEOUT_MS = 30_000;
/** A wallet waits for the person; the signed authorisation is valid for 5 minutes, so waiting longer is pointless. */
export const WALLET_TIMEOUT_MS = 300_000;
/** The paid request: the upload, the job (at most 2 minutes), settlement on the chain and the result, with room to spare. */
export const PAID_TIMEOUT_MS = 360_000;

export class TimedOut extends Error {}

/** The promise's value, or TimedOut once `ms` have passed (what it waits for is not stopped). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: number | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = window.setTimeout(() => reject(new TimedOut(`${what} did not answer within ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => window.clearTimeout(timer));
}

/** A fetch whose answer, body included, is given up on after `ms` (it then rejects with a TimeoutError). */
export const timedFetch = (input: string, init: RequestInit, ms: number): Promise<Response> =>
  fetch(input, { ...init, signal: AbortSignal.timeout(ms) });

/** Whether a rejected fetch or body read was given up by its time limit. */
export const isTimeout = (error: unknown): boolean =>
  error instanceof TimedOut || (error instanceof DOMException && error.name === 'TimeoutError');

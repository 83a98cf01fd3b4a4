// A client that closes its connection before its answer is written will never receive the
// result, so it must not be charged for it: this signal tells the paid call so.
import type { ServerResponse } from 'node:http';

/** Aborts when the connection closes before the response to it was ended. */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) gone.abort();
  });
  return gone.signal;
}

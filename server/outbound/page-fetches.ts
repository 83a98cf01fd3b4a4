// The front end's end of a page's fetch channel (core/page-fetch.ts): every request a worker's
// browser makes for a page of /v1/pdf/from-url is fetched here by the vetted fetcher, under the
// same rules as URL inputs, within a budget per job (requests, bytes, the job's deadline). Logs
// nothing: URLs are the buyer's.
import type { MessagePort } from 'node:worker_threads';
import { ServiceError } from '../../core/errors.js';
import type { PageFetchAnswer, PageFetchRequest } from '../../core/page-fetch.js';
import { fetchBuyerUrl, parseBuyerUrl, type OutboundRules } from './fetcher.js';

export interface PageBudget {
  /** Requests the page may make in all (the document, its subresources, frames). */
  requests: number;
  /** Bytes of all answers together. */
  totalBytes: number;
  /** The field named in messages (the buyer's URL field). */
  field: string;
}

export interface PageFetchStats { fetched: number; refused: number; bytes: number }

/** Answers the port's requests until `signal` aborts (the job's end); returns what it did so far. */
export function servePageFetches(port: MessagePort, rules: OutboundRules, budget: PageBudget, signal: AbortSignal): () => PageFetchStats {
  const stats: PageFetchStats = { fetched: 0, refused: 0, bytes: 0 };
  let requests = 0;
  const answer = (message: PageFetchAnswer) => {
    if (signal.aborted) return;
    port.postMessage(message, message.ok ? [message.body.buffer as ArrayBuffer] : []);
  };
  const refuse = (id: number, err: unknown) => {
    stats.refused += 1;
    const known = err instanceof ServiceError ? err : new ServiceError('URL_FETCH_FAILED', `${budget.field}: a request of the page failed`);
    answer({ id, ok: false, code: known.code, message: known.message });
  };
  port.on('message', (request: PageFetchRequest) => {
    void (async () => {
      requests += 1;
      if (requests > budget.requests) {
        const message = `${budget.field}: the page made more than ${budget.requests} requests; the rest were refused`;
        throw new ServiceError('LIMIT_EXCEEDED', message);
      }
      const left = budget.totalBytes - stats.bytes;
      if (left <= 0) {
        const message = `${budget.field}: the page's answers passed ${budget.totalBytes} bytes; the rest were refused`;
        throw new ServiceError('LIMIT_EXCEEDED', message);
      }
      const url = parseBuyerUrl(request.url, budget.field, rules);
      const fetched = await fetchBuyerUrl(url, { field: budget.field, maxBytes: left, rules, signal });
      stats.fetched += 1;
      stats.bytes += fetched.bytes.byteLength;
      // The fetcher's Buffer owns its ArrayBuffer: it is transferred, not copied.
      answer({ id: request.id, ok: true, body: fetched.bytes, ...(fetched.mediaType ? { mediaType: fetched.mediaType } : {}) });
    })().catch((err: unknown) => refuse(request.id, err));
  });
  signal.addEventListener('abort', () => port.close(), { once: true });
  return () => ({ ...stats });
}

// The one channel between a worker's browser and the front end's vetted fetcher (/v1/pdf/from-url):
// workers may not make requests themselves, so each request the page makes is sent over a
// MessagePort that rides with the job, and the front end answers it with what its fetcher got
// (server/outbound/page-fetches.ts), or a refusal. Plain data only: it crosses threads.
import type { MessagePort } from 'node:worker_threads';
import type { ErrorCode } from './errors.js';

/** The worker asks: a GET of this URL. */
export interface PageFetchRequest { id: number; url: string }

/** The front end answers: the body and its media type, or why nothing was fetched. */
export type PageFetchAnswer =
  | { id: number; ok: true; body: Uint8Array; mediaType?: string }
  | { id: number; ok: false; code: ErrorCode; message: string };

export type PageFetchResult = Omit<Extract<PageFetchAnswer, { ok: true }>, 'id'> | Omit<Extract<PageFetchAnswer, { ok: false }>, 'id'>;

/** The worker's end: one request at a time per call, answers matched by id; a closed port refuses what is pending. */
export class PageFetchClient {
  private next = 1;
  private readonly pending = new Map<number, (answer: PageFetchResult) => void>();

  constructor(private readonly port: MessagePort) {
    port.on('message', (answer: PageFetchAnswer) => {
      const settle = this.pending.get(answer.id);
      if (!settle) return;
      this.pending.delete(answer.id);
      const { id: _id, ...result } = answer;
      settle(result);
    });
    port.on('close', () => this.refusePending());
  }

  fetch(url: string): Promise<PageFetchResult> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.port.postMessage({ id, url } satisfies PageFetchRequest);
    });
  }

  close(): void {
    this.refusePending();
    this.port.close();
  }

  private refusePending(): void {
    const ended = { ok: false, code: 'URL_FETCH_FAILED', message: 'the job ended before the answer came' } as const;
    for (const settle of this.pending.values()) settle(ended);
    this.pending.clear();
  }
}

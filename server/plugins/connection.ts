// What the paid call needs to know about the client's connection: whether the client has gone
// (a job it would never receive is stopped and not charged) and whether the answer reached it
// (a paid result that did not is held for the identical retry).
import type { ServerResponse } from 'node:http';

export interface Connection {
  /** Aborts when the connection closes before the response to it was ended. */
  gone: AbortSignal;
  /** Resolves, once the connection is done, to whether the whole response was handed to it. */
  answered: Promise<boolean>;
}

export function watchConnection(res: ServerResponse): Connection {
  const gone = new AbortController();
  const answered = new Promise<boolean>((resolve) => {
    res.once('close', () => {
      if (!res.writableEnded) gone.abort();
      resolve(res.writableFinished);
    });
  });
  return { gone: gone.signal, answered };
}

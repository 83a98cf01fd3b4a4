// Runs one task per item with at most `limit` in flight and returns the results in item order,
// whatever order they finish in. The first failure cancels the rest: their signal aborts, no new
// task starts, and that first failure is what the caller sees.
import { setMaxListeners } from 'node:events';

export async function mapInOrder<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number, signal: AbortSignal) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const cancel = new AbortController();
  // Every request and subprocess in flight listens on this one signal.
  setMaxListeners(Math.max(10, limit * 4), cancel.signal);
  let next = 0;
  let firstError: { error: unknown } | undefined;

  async function lane(): Promise<void> {
    while (!cancel.signal.aborted && next < items.length) {
      const index = next++;
      try {
        results[index] = await task(items[index] as T, index, cancel.signal);
      } catch (error) {
        if (!firstError) {
          firstError = { error };
          cancel.abort(error);
        }
        return;
      }
    }
  }

  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, () => lane());
  await Promise.all(lanes);
  if (firstError) throw firstError.error;
  return results;
}

// A private scratch directory per tool run inside the job's directory, always removed: tools
// write their outputs (pages, images, rewritten PDFs) there, and nothing outlives the job.
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * Runs fn with a fresh scratch directory inside the job directory and removes it afterwards,
 * whatever happens. Synchronous on purpose: it runs on a pool thread that has nothing else to
 * do meanwhile, and on the RAM disk a synchronous mkdtemp or removal takes microseconds where
 * Node's async recursive rm waits on five libuv round trips (about 1.3 ms, shared threads).
 */
export async function withScratch<T>(jobDir: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(jobDir, 'work-'));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

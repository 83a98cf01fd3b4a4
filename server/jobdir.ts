// Per-request private directories on a RAM-backed tmpfs. The front end asks for one when a
// request first needs it (a PDF upload to inspect, or a job to run) and removes it in every
// outcome; workers only use it.
//
// Small requests use synchronous calls: on tmpfs a mkdtemp, a 24 KB write or a removal takes
// 0.02 to 0.1 ms of the main thread, where each async call waits about 0.3 ms for a libuv
// thread (shared with everything else the process does), and Node's recursive rm makes five
// of them. That was 2 to 3 ms of every small PDF request. Large uploads keep the async calls,
// so that writing or freeing tens of megabytes never stalls other requests.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Up to this many bytes of uploads, a job directory is written and removed synchronously. */
export const SYNC_BYTES = 1024 * 1024;

export async function ensureJobRoot(root: string): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o700 });
}

/**
 * A request's job directory, made on first use: an image quote never touches the disk, and the
 * directory costs its mkdtemp and rm only when a file is written or a job runs.
 */
export class LazyJobDir {
  private dir?: string;
  private written = 0;

  constructor(private readonly root: string) {}

  path(): string {
    if (!this.dir) {
      // Made at start too; again here in case a tmp cleaner removed it since (a microsecond on tmpfs).
      mkdirSync(this.root, { recursive: true, mode: 0o700 });
      this.dir = mkdtempSync(path.join(this.root, 'job-'));
    }
    return this.dir;
  }

  /** Writes an upload into the directory (mode 0600) and returns its path. */
  async write(name: string, bytes: Uint8Array): Promise<string> {
    const file = path.join(this.path(), name);
    this.written += bytes.byteLength;
    // By the request's total so far: twenty 1 MB merge inputs are a large request, not twenty small ones.
    if (this.written <= SYNC_BYTES) writeFileSync(file, bytes, { mode: 0o600 });
    else await writeFile(file, bytes, { mode: 0o600 });
    return file;
  }

  async remove(): Promise<void> {
    if (!this.dir) return;
    const dir = this.dir;
    this.dir = undefined;
    if (this.written <= SYNC_BYTES) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    else await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** The settings that bound how long a request can hold its job directory. */
export interface RequestDeadlines {
  uploadTimeoutMs: number;
  urlFetchTimeoutMs: number;
  jobTimeoutMs: number;
  facilitatorTimeoutMs: number;
}

/**
 * The longest a request can keep its job directory: its upload, every URL input fetched one
 * after another, verification, the job, a push to deliver_to and settlement, each at its
 * deadline, and a minute to spare. Every request removes its directory in every outcome, so a
 * directory untouched for longer belongs to no live request of any process sharing the root:
 * it was left by a process killed outright (SIGKILL, out of memory).
 */
export function jobDirLifetimeMs(deadlines: RequestDeadlines, maxInputs: number): number {
  const { uploadTimeoutMs, urlFetchTimeoutMs, jobTimeoutMs, facilitatorTimeoutMs } = deadlines;
  return uploadTimeoutMs + (maxInputs + 1) * urlFetchTimeoutMs + jobTimeoutMs + 2 * facilitatorTimeoutMs + 60_000;
}

/** Removes the job directories under root untouched for longer than maxAgeMs; returns how many. */
export async function sweepAbandonedJobDirs(root: string, maxAgeMs: number, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const name of await leftoverJobDirs(root)) {
    if (!name.startsWith('job-')) continue;
    const dir = path.join(root, name);
    try {
      if (now - (await stat(dir)).mtimeMs <= maxAgeMs) continue;
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
      removed += 1;
    } catch {
      // Removed meanwhile by its owner or by another replica's sweep.
    }
  }
  return removed;
}

/** Sweeps the job root at start and then every quarter of the lifetime (at most every 5 minutes). */
export function startJobDirSweeper(root: string, maxAgeMs: number, onRemoved: (count: number) => void): { stop(): void } {
  const sweep = (): void => {
    void sweepAbandonedJobDirs(root, maxAgeMs).then((count) => { if (count > 0) onRemoved(count); });
  };
  sweep();
  const timer = setInterval(sweep, Math.min(maxAgeMs / 4, 5 * 60_000));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Entries left in the job root (tests and health checks assert it is empty when idle). */
export async function leftoverJobDirs(root: string): Promise<string[]> {
  try {
    return await readdir(root);
  } catch {
    return [];
  }
}

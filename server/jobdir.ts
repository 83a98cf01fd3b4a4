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
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
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

/** Entries left in the job root (tests and health checks assert it is empty when idle). */
export async function leftoverJobDirs(root: string): Promise<string[]> {
  try {
    return await readdir(root);
  } catch {
    return [];
  }
}

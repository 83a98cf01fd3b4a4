// Per-request private directories on a RAM-backed tmpfs. The front end asks for one when a
// request first needs it (a PDF upload to inspect, or a job to run) and removes it in every
// outcome; workers only use it.
import { mkdir, mkdtemp, rm, readdir } from 'node:fs/promises';
import path from 'node:path';

export async function ensureJobRoot(root: string): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o700 });
}

export async function createJobDir(root: string): Promise<string> {
  return mkdtemp(path.join(root, 'job-'));
}

export async function removeJobDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

/**
 * A request's job directory, made on first use: an image quote never touches the disk, and the
 * directory costs its mkdtemp and rm only when a file is written or a job runs.
 */
export class LazyJobDir {
  private made?: Promise<string>;

  constructor(private readonly root: string) {}

  path(): Promise<string> {
    this.made ??= createJobDir(this.root);
    return this.made;
  }

  async remove(): Promise<void> {
    if (!this.made) return;
    const dir = await this.made.catch(() => undefined);
    if (dir) await removeJobDir(dir);
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

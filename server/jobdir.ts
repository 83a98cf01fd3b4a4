// Per-request private directories on a RAM-backed tmpfs. The front end creates one before
// inspection and removes it in every outcome; workers only use it.
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

/** Entries left in the job root (tests and health checks assert it is empty when idle). */
export async function leftoverJobDirs(root: string): Promise<string[]> {
  try {
    return await readdir(root);
  } catch {
    return [];
  }
}

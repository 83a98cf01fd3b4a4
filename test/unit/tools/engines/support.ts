// Shared by the engine tests: a private scratch directory per test with files written into it,
// and a result's text as another engine than the one under test reads it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tool } from '../../../support/independent-tools.js';
import { jobRoot } from '../../../support/jobs.js';

/** Runs fn with a fresh directory, removed afterwards. */
export async function inScratch<T>(
  fn: (dir: string, file: (name: string, bytes: Uint8Array | string) => Promise<string>) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(jobRoot(), 'paydoc-engine-'));
  const file = async (name: string, bytes: Uint8Array | string) => {
    const target = path.join(dir, name);
    await writeFile(target, bytes);
    return target;
  };
  try {
    return await fn(dir, file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A tool's stdout as text, for looking at a result with another engine (exit status checked). */
export async function textOf(name: string, args: string[], cwd?: string): Promise<string> {
  const { code, out, err } = await tool(name, args, cwd);
  if (code !== 0) throw new Error(`${name} exited with ${code}: ${err}`);
  return out;
}

// qpdf: reads, checks, rewrites, cuts, joins, encrypts and decrypts PDFs.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runTool, type RunOptions, type RunResult } from '../process/run-tool.js';

/** qpdf: 0 success, 3 success with warnings (damage it repaired), 2 failure. */
export function qpdfSucceeded(result: RunResult): boolean {
  return result.exitCode === 0 || result.exitCode === 3;
}

export function isWrongPassword(result: RunResult): boolean {
  return result.exitCode === 2 && /invalid password/i.test(result.stderr);
}

/**
 * Runs qpdf from a job description (qpdf's --job-json-file). Passwords travel in that file,
 * mode 0600 inside the private job directory, and never on a command line that `ps` shows;
 * JSON also carries passwords that start with "--" or hold line breaks, which qpdf's
 * positional arguments and --password-file cannot.
 */
export async function runQpdfJob(job: Record<string, unknown>, options: RunOptions & { cwd: string }): Promise<RunResult> {
  const jobFile = path.join(options.cwd, `.qpdf-job-${randomBytes(8).toString('hex')}.json`);
  // A few hundred bytes on the RAM disk: synchronous calls are cheaper than async round trips.
  writeFileSync(jobFile, JSON.stringify(job), { mode: 0o600, flag: 'wx' });
  try {
    return await runTool('qpdf', [`--job-json-file=${jobFile}`], options);
  } finally {
    rmSync(jobFile, { force: true });
  }
}

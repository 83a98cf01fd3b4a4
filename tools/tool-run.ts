// Helpers shared by the work functions and the pre-payment checks: running qpdf with secrets
// kept off the command line, the one mapping of tool failures to catalog codes, and a private
// scratch directory per job that is always removed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fail, ServiceError } from '../core/errors.js';
import { runTool, RunFailure, type RunOptions, type RunResult } from './runner.js';

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

export const NO_SPACE_MESSAGE = 'the service ran out of temporary space for this job; retry in a moment; nothing was charged';

/**
 * The one mapping from a failed tool (or a failed job) to the catalog's error: a deadline is
 * JOB_TIMEOUT, too much output LIMIT_EXCEEDED, a full disk or a tool this deployment lacks
 * UNAVAILABLE, anything else a failed job. `what` names the tool or operation; no tool output,
 * path or stack reaches the message.
 */
export function asToolError(err: unknown, what: string): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof RunFailure) {
    if (err.kind === 'timeout') return new ServiceError('JOB_TIMEOUT', `${what} passed its time limit; nothing was charged`);
    if (err.kind === 'output-too-large') return new ServiceError('LIMIT_EXCEEDED', `${what} produced more output than the service returns`);
    if (err.kind === 'spawn-failed') return new ServiceError('UNAVAILABLE', `${err.tool} is not available on this deployment; nothing was charged`);
  }
  if ((err instanceof RunFailure && err.kind === 'no-space') || (err as NodeJS.ErrnoException)?.code === 'ENOSPC') {
    return new ServiceError('UNAVAILABLE', NO_SPACE_MESSAGE);
  }
  return new ServiceError('JOB_FAILED', `${what} failed while processing the file; nothing was charged`);
}

/** A tool that did not complete fails the job through asToolError; any other error goes on as it is. */
export function toolFailure(err: unknown, what: string): never {
  throw err instanceof RunFailure ? asToolError(err, what) : err;
}

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

/** A damaged input that the paid job could not process: 422, not charged. */
export function damaged(what: string): never {
  fail('CORRUPT_INPUT', `the PDF cannot be processed: ${what}`);
}

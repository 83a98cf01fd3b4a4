// What a tool's failure means to a client: the one mapping from a run that did not complete
// (spawn-with-limits.ts's RunFailure: deadline, too much output, no such program, full disk) to the
// error catalog's codes, and the one way to say that an input which passed the checks turned out
// damaged. Each engine (../engines/) maps its own exit codes and reuses these for the rest, so a
// caller never reads a RunFailure or an exit status itself.
import { fail, ServiceError } from '../../core/errors.js';
import { RunFailure } from './spawn-with-limits.js';

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

/** A damaged input that the paid job could not process: 422, not charged. */
export function damaged(what: string): never {
  fail('CORRUPT_INPUT', `the PDF cannot be processed: ${what}`);
}

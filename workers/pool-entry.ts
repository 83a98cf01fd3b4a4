// The piscina worker: looks the operation up in the table, runs its work function and returns
// a tagged result. Domain errors become { ok: false, code, message } because custom error
// classes do not survive the thread boundary. The result's bytes are transferred, not copied.
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { operationById } from '../operations/index.js';
import { ServiceError } from '../core/errors.js';
import { RunFailure, killAllChildren, warmLauncher } from '../tools/runner.js';
import type { JobInput, JobResult } from '../core/job.js';
import { NO_SPACE_MESSAGE } from '../tools/tool-run.js';

// A worker torn down by the pool (task aborted past its deadline) must not leave tools running.
process.on('exit', killAllChildren);
// This thread's tools start from its own launcher process; starting it now keeps that off the first job.
warmLauncher();

function transferable(result: JobResult) {
  const list = result.ok ? [result.output.body.buffer] : [];
  // move() marks the wrapper so piscina transfers `list` and hands back only `result`.
  return move({ get [transferableSymbol]() { return list; }, get [valueSymbol]() { return result; } } as never);
}

export default async function runJob(input: JobInput) {
  const started = performance.now();
  const op = operationById(input.operation);
  try {
    if (!op.work) return transferable({ ok: false, code: 'NOT_IMPLEMENTED', message: `${op.path} is not implemented yet` });
    const work = await op.work();
    const output = await work(input);
    // A view over part of a larger buffer would transfer (and expose) the whole buffer: copy it tight.
    const body = output.body.byteOffset === 0 && output.body.byteLength === output.body.buffer.byteLength
      ? output.body : new Uint8Array(output.body);
    return transferable({ ok: true, output: { body, mediaType: output.mediaType }, workMs: performance.now() - started });
  } catch (err) {
    if (err instanceof ServiceError) {
      return transferable({ ok: false, code: err.code, message: err.message, ...(err.extra.field ? { field: err.extra.field } : {}) });
    }
    if (err instanceof RunFailure) {
      if (err.kind === 'timeout') return transferable({ ok: false, code: 'JOB_TIMEOUT', message: `${op.path} passed its time limit; nothing was charged` });
      if (err.kind === 'output-too-large') return transferable({ ok: false, code: 'LIMIT_EXCEEDED', message: 'the result would be larger than the service returns' });
    }
    if ((err instanceof RunFailure && err.kind === 'no-space') || (err as NodeJS.ErrnoException)?.code === 'ENOSPC') {
      return transferable({ ok: false, code: 'UNAVAILABLE', message: NO_SPACE_MESSAGE });
    }
    // Unknown failures: no detail crosses back (it could hold paths or tool output).
    return transferable({ ok: false, code: 'JOB_FAILED', message: `${op.path} failed while processing the file; nothing was charged` });
  }
}

// The piscina worker: finds the operation's work function, runs it and returns a tagged result.
// Domain errors become { ok: false, code, message } because custom error classes do not survive
// the thread boundary. The result's bytes are transferred, not copied.
import { workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { killAllChildren, warmLauncher } from '../tools/runner.js';
import { asToolError } from '../tools/tool-run.js';
import type { Job, JobResult, WorkerSettings } from '../core/job.js';
import { pathOf } from '../operations/define.js';
import { workFunctionFor } from './work-functions.js';

// A worker torn down by the pool (task aborted past its deadline) must not leave tools running.
process.on('exit', killAllChildren);
// This thread's tools start from its own launcher process; starting it now keeps that off the first job.
warmLauncher();

const settings = (workerData as { settings: WorkerSettings }).settings;

function transferable(result: JobResult) {
  const list = result.ok ? [result.output.body.buffer] : [];
  // move() marks the wrapper so piscina transfers `list` and hands back only `result`.
  return move({ get [transferableSymbol]() { return list; }, get [valueSymbol]() { return result; } } as never);
}

export default async function runJob(input: Job) {
  const started = performance.now();
  try {
    const work = await workFunctionFor(input.operation)();
    const output = await work({ ...input, settings } as never);
    // A view over part of a larger buffer would transfer (and expose) the whole buffer: copy it tight.
    const body = output.body.byteOffset === 0 && output.body.byteLength === output.body.buffer.byteLength
      ? output.body : new Uint8Array(output.body);
    return transferable({ ok: true, output: { body, mediaType: output.mediaType }, workMs: performance.now() - started });
  } catch (err) {
    // Unknown failures carry no detail back (it could hold paths or tool output).
    const failure = asToolError(err, pathOf(input.operation));
    return transferable({ ok: false, code: failure.code, message: failure.message, ...(failure.extra.field ? { field: failure.extra.field } : {}) });
  }
}

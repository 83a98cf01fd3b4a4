// The piscina worker: finds the operation's work function, runs it and returns a tagged result.
// Domain errors become { ok: false, code, message } because custom error classes do not survive
// the thread boundary. The result's bytes are transferred, not copied.
import { workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { killAllChildren, warmLauncher } from '../tools/process/run-tool.js';
import { asToolError } from '../tools/process/tool-errors.js';
import type { Job, JobResult, WorkerSettings } from '../core/job.js';
import { pathOf } from '../operations/define.js';
import { workFunctionFor } from './work-functions.js';

// A worker torn down by the pool (task aborted past its deadline) must not leave engines running.
process.on('exit', killAllChildren);
// This thread's engines start from its own launcher process; starting it now keeps that off the first job.
warmLauncher();

const settings = (workerData as { settings: WorkerSettings }).settings;

function transferable(result: JobResult) {
  const list = result.ok ? [result.output.body.buffer] : [];
  // move() marks the wrapper so piscina transfers `list` and hands back only `result`.
  return move({ get [transferableSymbol]() { return list; }, get [valueSymbol]() { return result; } } as never);
}

/**
 * The result's bytes in an ArrayBuffer of their own that can be transferred. A view over part of a
 * larger buffer would transfer (and expose) the whole buffer, so it is copied tight. A buffer
 * allocated outside V8 (sharp's output buffers on Node 22, the image's Node) cannot be transferred
 * at all: postMessage throws DataCloneError and the job would fail, so it is copied too. The trial
 * transfer hands the same memory back, uncopied, when the buffer can be transferred.
 */
function transferableBytes(bytes: Uint8Array): Uint8Array {
  const buffer = bytes.buffer as ArrayBuffer;
  if (bytes.byteOffset !== 0 || bytes.byteLength !== buffer.byteLength) return new Uint8Array(bytes);
  try {
    return new Uint8Array(structuredClone(buffer, { transfer: [buffer] }));
  } catch {
    return new Uint8Array(bytes);
  }
}

export default async function runJob(input: Job) {
  const started = performance.now();
  try {
    const work = await workFunctionFor(input.operation)();
    const output = await work({ ...input, settings } as never);
    const sent = { body: transferableBytes(output.body), mediaType: output.mediaType, ...(output.report ? { report: output.report } : {}) };
    return transferable({ ok: true, output: sent, workMs: performance.now() - started });
  } catch (err) {
    // Unknown failures carry no detail back (it could hold paths or an engine's output).
    const failure = asToolError(err, pathOf(input.operation));
    const field = failure.extra.field ? { field: failure.extra.field } : {};
    return transferable({ ok: false, code: failure.code, message: failure.message, ...field });
  }
}

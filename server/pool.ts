// The worker pool: piscina threads that run the operations' work functions. Its queue is
// bounded; the front end asks `hasRoom()` before quoting so a busy service answers 503 before
// any payment, and `run()` refuses again if the queue filled up in between.
import { Piscina } from 'piscina';
import { fileURLToPath } from 'node:url';
import type { MessagePort } from 'node:worker_threads';
import { ServiceError } from '../core/errors.js';
import { killProcessesIn } from './orphans.js';
import type { JobInput, JobOutput, JobResult, WorkerSettings } from '../core/job.js';

// The pool aborts a task this long after its deadline; the subprocess deadline sits inside it.
export const ABORT_GRACE_MS = 2000;

function clientGoneError(): ServiceError {
  return new ServiceError('CLIENT_GONE', 'the client closed the connection before the result was ready; the job was stopped and nothing was charged');
}

export interface PoolOptions { workers: number; queueMax: number; settings: WorkerSettings }

export class WorkerPool {
  private readonly piscina: Piscina<JobInput, JobResult>;
  private running = 0;

  constructor(private readonly options: PoolOptions) {
    this.piscina = new Piscina({
      filename: fileURLToPath(new URL('../workers/pool-entry.js', import.meta.url)),
      minThreads: options.workers,
      maxThreads: options.workers,
      maxQueue: options.queueMax,
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
      // Workers must not inherit secrets they do not need: they get the settings of their work, once.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: process.env.NODE_ENV ?? 'production' },
      workerData: { settings: options.settings },
    });
  }

  get queueDepth(): number { return this.piscina.queueSize; }
  get busy(): number { return this.running; }

  /** Whether one more job can be accepted now (checked before quoting). */
  hasRoom(): boolean {
    return this.running + this.piscina.queueSize < this.options.workers + this.options.queueMax;
  }

  /** Runs a job; it is stopped past its deadline, or as soon as `clientGone` aborts. */
  async run(input: JobInput, clientGone?: AbortSignal): Promise<JobOutput> {
    if (!this.hasRoom()) throw new ServiceError('QUEUE_FULL', 'the service is busy; retry in a few seconds', { retryAfterSeconds: 5 });
    if (clientGone?.aborted) throw clientGoneError();
    const transfer: (ArrayBuffer | MessagePort)[] = [...new Set(input.files.map((f) => f.bytes.buffer as ArrayBuffer))];
    if (input.fetchPort) transfer.push(input.fetchPort);
    const deadline = AbortSignal.timeout(Math.max(1, input.deadline - Date.now()) + ABORT_GRACE_MS);
    const signal = clientGone ? AbortSignal.any([deadline, clientGone]) : deadline;
    this.running += 1;
    let result: JobResult;
    try {
      result = await this.piscina.run(input, { transferList: transfer, signal });
    } catch (err) {
      // The thread that ran the job is gone (aborted or crashed): its engines must not outlive it.
      await killProcessesIn(input.jobDir);
      if (clientGone?.aborted) throw clientGoneError();
      if (deadline.aborted) throw new ServiceError('JOB_TIMEOUT', 'the job passed its time limit; nothing was charged');
      if ((err as Error)?.message?.includes('Task queue is at limit')) {
        throw new ServiceError('QUEUE_FULL', 'the service is busy; retry in a few seconds', { retryAfterSeconds: 5 });
      }
      // A worker that crashed (or was killed) is replaced by piscina; the job fails uncharged.
      throw new ServiceError('JOB_FAILED', 'the job failed while processing the file; nothing was charged');
    } finally {
      this.running -= 1;
    }
    if (!result.ok) throw new ServiceError(result.code, result.message, result.field ? { field: result.field } : {});
    return result.output;
  }

  async close(): Promise<void> {
    await this.piscina.close();
  }
}

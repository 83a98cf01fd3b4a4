// Jobs for the work-function tests, made the way the service makes them: the real checks and
// the operation's own plan (prepare) on the uploads and fields, then the job the pool would run
// (plannedJob), or the whole run with what it answered and left behind (runOperation).
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import { loadConfig, type Config } from '../../server/config.js';
import { prepare } from '../../server/pipeline.js';
import { LazyJobDir } from '../../server/jobdir.js';
import { InspectionCache } from '../../checks/cache.js';
import { outboundRules } from '../../server/outbound/fetcher.js';
import type { WorkerPool } from '../../server/pool.js';
import { operationById, type OperationId } from '../../operations/index.js';
import { workFunctionFor } from '../../workers/work-functions.js';
import type { Job, JobOutput, WorkerSettings } from '../../core/job.js';

/** Where the tests' job directories go: RAM-backed on Linux, as in the service. */
export const jobRoot = (): string => (os.platform() === 'linux' ? '/dev/shm' : os.tmpdir());

export const TEST_SETTINGS: WorkerSettings = {
  modelConcurrency: 1, modelDpi: 150, ocrEngine: 'tesseract', ocrLanguages: 'eng', maxZipBytes: 100 * 1024 * 1024,
};

export interface JobOptions {
  settings?: Partial<WorkerSettings>;
  /** Milliseconds from now to the job's deadline. */
  timeoutMs?: number;
  /** Configuration the checks see (a model provider for the model operations, say). */
  config?: Partial<Config>;
  /** Where the job directory is made. */
  root?: string;
  /** The operation's named file (stamp's image). */
  namedFile?: Uint8Array;
}

export interface PlannedJob {
  job: Job;
  jobDir: LazyJobDir;
  /** Runs the operation's work function on the job. */
  run(): Promise<JobOutput>;
}

const idlePool = { hasRoom: () => true } as unknown as WorkerPool;

/** Checks and plans the request as the service does; throws the refusal a client would get. */
export async function plannedJob(
  id: OperationId, uploads: readonly Uint8Array[], fields: Record<string, unknown>, options: JobOptions = {},
): Promise<PlannedJob> {
  const op = operationById(id);
  const config = loadConfig({ modelBaseUrl: 'http://127.0.0.1:9', ...options.config }, {});
  const jobDir = new LazyJobDir(options.root ?? config.tmpDir);
  try {
    const request = { uploads: [...uploads], fields, ...(options.namedFile ? { namedFile: options.namedFile } : {}) };
    const context = { config, pool: idlePool, inspections: new InspectionCache(), outbound: outboundRules(config) };
    const prepared = await prepare(op, request, jobDir, context);
    const job: Job = {
      operation: id,
      files: prepared.files,
      params: prepared.params,
      jobDir: jobDir.path(),
      deadline: Date.now() + (options.timeoutMs ?? Math.min(op.timeoutMs, 120_000)),
      settings: { ...TEST_SETTINGS, ...options.settings },
    };
    return { job, jobDir, run: async () => (await workFunctionFor(id)())(job as never) };
  } catch (err) {
    await jobDir.remove();
    throw err;
  }
}

export interface RunOutcome {
  output?: JobOutput;
  error?: { code: string; status: number; message: string; field?: string };
  /** What was left in the job directory besides the inputs. */
  leftovers: string[];
  ms: number;
}

/** Runs the operation as the service does: its checks and plan, then its work function in a private job directory. */
export async function runOperation(id: OperationId, inputs: readonly Uint8Array[], fields: Record<string, string | number | undefined>,
  options: { timeoutMs?: number; maxZipBytes?: number; namedFile?: Uint8Array } = {}): Promise<RunOutcome> {
  const started = Date.now();
  let planned: PlannedJob | undefined;
  try {
    planned = await plannedJob(id, inputs, Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])), {
      root: jobRoot(), ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.maxZipBytes !== undefined ? { settings: { maxZipBytes: options.maxZipBytes } } : {}),
      ...(options.namedFile ? { namedFile: options.namedFile } : {}),
    });
    const output = await planned.run();
    return { output, leftovers: await leftoversIn(planned.job.jobDir), ms: Date.now() - started };
  } catch (err) {
    const e = err as { code?: string; status?: number; message: string; extra?: { field?: string } };
    return {
      error: { code: e.code ?? 'THROWN', status: e.status ?? 0, message: e.message, field: e.extra?.field },
      leftovers: planned ? await leftoversIn(planned.job.jobDir) : [], ms: Date.now() - started,
    };
  } finally {
    await planned?.jobDir.remove();
  }
}

/** What a job left in its directory besides the uploads the service wrote there. */
async function leftoversIn(jobDir: string): Promise<string[]> {
  return (await readdir(jobDir)).filter((n) => !/^input-\d+\.pdf$/.test(n));
}

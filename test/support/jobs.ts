// Jobs for the work-function tests, made the way the service makes them: the real checks and
// the operation's own plan (prepare) on the uploads and fields, then the job the pool would run.
import { loadConfig, type Config } from '../../server/config.js';
import { prepare } from '../../server/pipeline.js';
import { LazyJobDir } from '../../server/jobdir.js';
import { InspectionCache } from '../../checks/cache.js';
import { outboundRules } from '../../server/outbound/fetcher.js';
import type { WorkerPool } from '../../server/pool.js';
import { operationById, type OperationId } from '../../operations/index.js';
import { workFunctionFor } from '../../workers/work-functions.js';
import type { Job, JobOutput, WorkerSettings } from '../../core/job.js';

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
}

export interface PlannedJob {
  job: Job;
  jobDir: LazyJobDir;
  /** Runs the operation's work function on the job. */
  run(): Promise<JobOutput>;
}

const idlePool = { hasRoom: () => true } as unknown as WorkerPool;

/** Checks and plans the request as the service does; throws the refusal a client would get. */
export async function plannedJob(id: OperationId, uploads: readonly Uint8Array[], fields: Record<string, unknown>, options: JobOptions = {}): Promise<PlannedJob> {
  const op = operationById(id);
  const config = loadConfig({ modelBaseUrl: 'http://127.0.0.1:9', ...options.config }, {});
  const jobDir = new LazyJobDir(options.root ?? config.tmpDir);
  try {
    const prepared = await prepare(op, { uploads: [...uploads], fields }, jobDir, { config, pool: idlePool, inspections: new InspectionCache(), outbound: outboundRules(config) });
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

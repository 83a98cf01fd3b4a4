// What crosses the thread boundary between the front end and a pool worker.
// Everything here must survive structured cloning: plain data, typed arrays, no classes (and a
// MessagePort, which is transferred).
import type { MessagePort } from 'node:worker_threads';
import type { ErrorCode } from './errors.js';

export interface JobFile {
  /** The uploaded bytes (transferred, not copied, into the worker). */
  bytes: Uint8Array;
  /** The same bytes already written to the job directory, for engines that need a seekable file (PDF inputs). */
  path?: string;
  /** Page count for PDFs, as priced. */
  pages?: number;
}

/** The bounds of MODEL_DPI: what the configuration accepts is what the workers render at. */
export const MODEL_DPI = { min: 72, max: 300, default: 150 } as const;

/** Settings a worker needs that come from configuration: given to each pool thread once, at its start. */
export interface WorkerSettings {
  modelBaseUrl?: string;
  modelApiKey?: string;
  modelName?: string;
  modelConcurrency: number;
  modelDpi: number;
  ocrEngine: 'model' | 'tesseract';
  ocrLanguages: string;
  /** Scanned pages in /v1/pdf/markdown: read with local tesseract, or left as a note (absent: off). */
  markdownOcr?: 'tesseract' | 'off';
  /** Where /v1/pdf/tables reads tables: the model provider (unset: the default) or the local layout engine. */
  tablesEngine?: 'model' | 'local';
  maxZipBytes: number;
}

/** What the front end hands the pool for one job. */
export interface JobInput<Params = unknown> {
  operation: string;
  files: JobFile[];
  /** What the operation's plan decided before payment; the work function takes it as it is. */
  params: Params;
  /** Private directory (mode 0700) on tmpfs; created and always removed by the front end. */
  jobDir: string;
  /** Epoch milliseconds by which the work must be done; subprocess deadlines end before it. */
  deadline: number;
  /** A page's fetch channel (core/page-fetch.ts), for operations that load a buyer's URL in a browser. */
  fetchPort?: MessagePort;
}

/** What a work function receives: the job and its thread's settings. */
export interface Job<Params = unknown> extends JobInput<Params> {
  settings: WorkerSettings;
}

export interface JobOutput {
  body: Uint8Array;
  /** The real media type of body, e.g. image/webp, application/pdf, application/zip, text/markdown; charset=utf-8, application/json. */
  mediaType: string;
  /** The operation's report beside the file (its output.report declares it), as plain JSON. */
  report?: Record<string, unknown>;
}

export type JobResult =
  | { ok: true; output: JobOutput; workMs: number }
  | { ok: false; code: ErrorCode; message: string; field?: string };

/** A worker-side operation: throws ServiceError (via fail()) for domain failures. */
export type WorkFunction<Params = unknown> = (job: Job<Params>) => Promise<JobOutput>;

/** Milliseconds left before the deadline, minus a margin so the worker can still report. */
export function timeLeft(input: Pick<JobInput, 'deadline'>, marginMs = 250): number {
  return Math.max(1, input.deadline - Date.now() - marginMs);
}

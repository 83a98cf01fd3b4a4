// redact, sanitize, stamp, the form and metadata operations: MuPDF 1.28 in its own child process
// (tools/engines/mupdf-js.ts says why). A report it prints goes beside the file (JobOutput.report).
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import type { JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import {
  fillForm, flattenPdf, readMetadata, redactPdf, sanitizePdf, stampPdf, writeMetadata,
  type FillRequest, type FormField, type MetadataRequest, type RedactionRequest, type SanitizeRequest, type StampRequest,
} from '../../tools/engines/mupdf-js.js';
import type { StampPlan } from '../../operations/pdf/stamp.js';
import { imageDpi } from '../image/density.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import { inputPath, PDF, readBytes } from './common.js';

export const redact: WorkFunction<RedactionRequest> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'redacted.pdf');
    const report = await redactPdf(source, out, input.params, { cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(out), mediaType: PDF, report: { ...report } };
  });
};

export const sanitize: WorkFunction<SanitizeRequest> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'sanitized.pdf');
    const removed = await sanitizePdf(source, out, input.params, { cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(out), mediaType: PDF, report: { ...removed } };
  });
};

/** The stamp's image, when there is one, is the job's second file. */
export const stamp: WorkFunction<StampPlan> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'stamped.pdf');
    const { image, ...rest } = input.params;
    const file = path.join(dir, 'stamp-image');
    const bytes = input.files[1]?.bytes;
    if (image) writeFileSync(file, bytes, { mode: 0o600 });
    const dpi = image ? await imageDpi(bytes) : 0;
    const request: StampRequest = { ...rest, ...(image ? { image: { ...image, file, dpi } } : {}) };
    await stampPdf(source, out, request, { cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(out), mediaType: PDF };
  });
};

const json = (value: unknown): JobOutput => ({ body: new TextEncoder().encode(JSON.stringify(value)), mediaType: 'application/json' });

/** The plan read the form before payment (to refuse XFA); its reading is the answer. */
export const formFields: WorkFunction<{ fields: FormField[] }> = async (input) => json({ fields: input.params.fields });

export const formFill: WorkFunction<FillRequest> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'filled.pdf');
    await fillForm(source, out, input.params, { cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(out), mediaType: PDF };
  });
};

export const flatten: WorkFunction<Record<string, never>> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'flattened.pdf');
    await flattenPdf(source, out, { cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(out), mediaType: PDF };
  });
};

export const metadata: WorkFunction<Record<string, never>> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => json(await readMetadata(source, { cwd: dir, timeoutMs: timeLeft(input) })));
};

export const setMetadata: WorkFunction<MetadataRequest> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'described.pdf');
    await writeMetadata(source, out, input.params, new Date(), { cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(out), mediaType: PDF };
  });
};

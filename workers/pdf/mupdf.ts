// redact and sanitize: MuPDF 1.28 in its own child process (tools/engines/mupdf-js.ts says why).
// The report it prints goes beside the file (JobOutput.report).
import path from 'node:path';
import type { JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { redactPdf, sanitizePdf, type RedactionRequest, type SanitizeRequest } from '../../tools/engines/mupdf-js.js';
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

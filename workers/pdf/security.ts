// protect (AES-256, the password as both user and owner password) and unlock. Passwords reach
// qpdf through a 0600 job file, never the command line, and are never logged.
import path from 'node:path';
import type { JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { fail } from '../../core/errors.js';
import { inputPath, PDF, readBytes } from './common.js';
import { asToolError, damaged } from '../../tools/process/tool-errors.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import { isWrongPassword, qpdfSucceeded, runQpdfJob } from '../../tools/engines/qpdf.js';

export const protect: WorkFunction<{ password: string }> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  const { password } = input.params;
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'protected.pdf');
    const job = {
      inputFile: source, outputFile: out, objectStreams: 'generate',
      encrypt: { userPassword: password, ownerPassword: password, '256bit': {} },
    };
    const result = await runQpdfJob(job, { cwd: dir, timeoutMs: timeLeft(input) }).catch((err) => { throw asToolError(err, 'qpdf'); });
    if (!qpdfSucceeded(result)) damaged('qpdf could not rewrite it (the file is damaged)');
    return { body: await readBytes(out), mediaType: PDF };
  });
};

export const unlock: WorkFunction<{ password: string }> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  const { password } = input.params;
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'unlocked.pdf');
    const job = { inputFile: source, password, outputFile: out, decrypt: '', objectStreams: 'generate' };
    const result = await runQpdfJob(job, { cwd: dir, timeoutMs: timeLeft(input) }).catch((err) => { throw asToolError(err, 'qpdf'); });
    if (isWrongPassword(result)) fail('WRONG_PASSWORD', 'the password does not open the PDF', { field: 'password' });
    if (!qpdfSucceeded(result)) damaged('qpdf could not decrypt it (the file is damaged)');
    return { body: await readBytes(out), mediaType: PDF };
  });
};

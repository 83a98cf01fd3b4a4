// protect (AES-256, the password as both user and owner password) and unlock. Passwords reach
// qpdf through a 0600 job file, never the command line, and are never logged.
import path from 'node:path';
import type { JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { inputPath, PDF, readBytes } from './common.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import { decryptPdf, encryptPdf } from '../../tools/engines/qpdf.js';

export const protect: WorkFunction<{ password: string }> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  const { password } = input.params;
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'protected.pdf');
    await encryptPdf(source, out, password, { cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(out), mediaType: PDF };
  });
};

export const unlock: WorkFunction<{ password: string }> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  const { password } = input.params;
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'unlocked.pdf');
    await decryptPdf(source, out, password, { cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(out), mediaType: PDF };
  });
};

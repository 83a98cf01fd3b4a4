// A scanned PDF made searchable: OCRmyPDF grafts an invisible text layer onto each page that has
// no text and copies the others as they are. It reads the PDF the pre-payment checks counted
// (a repaired upload's rewrite), writes only inside the job's scratch directory, and is killed
// at the job's deadline.
import path from 'node:path';
import type { JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { runOcrmypdf } from '../../tools/engines/ocrmypdf.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import type { PdfSearchablePlan } from '../../operations/pdf/searchable.js';
import { inputPath, PDF, readBytes } from './common.js';

export const searchable: WorkFunction<PdfSearchablePlan> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const output = path.join(dir, 'searchable.pdf');
    await runOcrmypdf({ input: source, output, languages: input.params.languages, cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(output), mediaType: PDF };
  });
};

// An Office document converted to PDF by LibreOffice, in a scratch directory of the job with a
// fresh profile, killed at the job's deadline; the PDF's pages are counted by qpdf and a PDF over
// the bound is refused, uncharged.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fail } from '../../core/errors.js';
import type { JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { convertToPdf } from '../../tools/engines/libreoffice.js';
import { pageCountForJob } from '../../tools/engines/qpdf.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import { OFFICE_MAX_PAGES, type OfficePdfPlan } from '../../operations/office/pdf.js';
import { PDF, readBytes } from '../pdf/common.js';

/** The time kept back for qpdf's count of the result (milliseconds on any PDF this bound allows). */
const COUNT_MS = 2_000;

export const officeToPdf: WorkFunction<OfficePdfPlan> = async (input): Promise<JobOutput> => {
  const { format } = input.params;
  return withScratch(input.jobDir, async (dir) => {
    // Named by the format the bytes are, never by the client's file name.
    const document = path.join(dir, `document.${format}`);
    writeFileSync(document, input.files[0]!.bytes);
    const convertMs = Math.max(1, timeLeft(input) - Math.min(COUNT_MS, timeLeft(input) / 10));
    const pdf = await convertToPdf({ input: document, format, cwd: dir, timeoutMs: convertMs });
    const pages = await pageCountForJob(pdf, { cwd: dir, timeoutMs: Math.min(COUNT_MS, timeLeft(input)) });
    if (pages > OFFICE_MAX_PAGES) {
      fail('LIMIT_EXCEEDED', `the document converts to ${pages} pages of PDF; /v1/office/pdf returns at most ${OFFICE_MAX_PAGES}; nothing was charged: split it into smaller documents`, { field: 'file' });
    }
    return { body: await readBytes(pdf), mediaType: PDF };
  });
};

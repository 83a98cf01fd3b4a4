// render: every page to PNG with mutool (47 ms a page, against 300 ms for pdftoppm), bounded
// per page (50 megapixels) and in total (the ZIP size limit).
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { fail } from '../../core/errors.js';
import { checkRenderPixels, pageBoxes, renderPixels } from '../../checks/pdf.js';
import { buildZip, checkZipSize, type ZipEntry } from '../../tools/zip.js';
import { inputPath, readBytes, ZIP } from './common.js';
import { drawAllPages } from '../../tools/engines/mutool.js';
import { asToolError, damaged } from '../../tools/process/tool-errors.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import { drawFormFieldValues } from './forms.js';

export const MAX_RENDER_PAGES = 50;

export function renderEntryName(page: number): string {
  return `page-${String(page).padStart(4, '0')}.png`;
}

export const render: WorkFunction<{ dpi: number }> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  // A filled form is rendered as a viewer shows it, values included.
  await drawFormFieldValues(input);
  const { dpi } = input.params;
  return withScratch(input.jobDir, async (dir) => {
    const boxes = await pageBoxes(source, { cwd: dir, timeoutMs: timeLeft(input) }).catch((err) => { throw asToolError(err, 'mutool'); });
    if (boxes.length === 0) damaged('no page could be read');
    if (boxes.length > MAX_RENDER_PAGES) fail('LIMIT_EXCEEDED', `the PDF has ${boxes.length} pages; render takes at most ${MAX_RENDER_PAGES}`, { field: 'file' });
    checkRenderPixels(boxes, dpi);
    // A second line of defence: no page may come out larger than the checked sizes allow, should
    // mupdf ever scale a page in a way the check did not see (with -r, -w and -h only bound it).
    const sizes = boxes.map((box) => renderPixels(box, dpi));
    const maxWidth = Math.max(...sizes.map((s) => s.width)) + 1;
    const maxHeight = Math.max(...sizes.map((s) => s.height)) + 1;
    // One mutool run for all pages: the file is parsed once. Page numbers in the names come from mutool.
    // mutool exits 1 for content errors it recovered from (an unknown operator), having drawn the
    // page as viewers show it; a page it cannot draw stops the run and leaves no PNG of it.
    await drawAllPages(source, { dpi, maxWidth, maxHeight, outPattern: path.join(dir, 'page-%d.png') }, { cwd: dir, timeoutMs: timeLeft(input) });
    const rendered = (await readdir(dir)).map((name) => /^page-(\d+)\.png$/.exec(name)).filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1])).sort((a, b) => a - b);
    if (rendered.length !== boxes.length) damaged('some pages could not be rendered');
    const entries: ZipEntry[] = [];
    for (const page of rendered) {
      entries.push({ name: renderEntryName(page), bytes: await readBytes(path.join(dir, `page-${page}.png`)) });
      checkZipSize(entries, input.settings.maxZipBytes);
    }
    return { body: await buildZip(entries, input.settings.maxZipBytes), mediaType: ZIP };
  });
};

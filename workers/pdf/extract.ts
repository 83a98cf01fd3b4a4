// extract: the text layer in reading order (pdftotext), the page count, and whether the PDF
// looks scanned. Nothing leaves the server.
import { timeLeft, type JobOutput, type WorkFunction } from '../../core/job.js';
import { pdfImageList, pdfText } from '../../tools/engines/poppler.js';
import { inputPath } from './common.js';
import { damaged } from '../../tools/process/tool-errors.js';
import { withScratch } from '../../tools/process/scratch-directory.js';

/** A page with fewer visible characters than this has "almost no text" (page numbers, a stray header). */
export const TEXTLESS_PAGE_CHARS = 16;

/**
 * likelyScanned: at least half of the pages (and at least one) draw an image and have almost
 * no text. A scan with an OCR text layer is not "likely scanned" (its text is already there);
 * a blank or vector-only page without text is not either (there is nothing to recognise).
 */
export function likelyScanned(pageTexts: readonly string[], pagesWithImages: ReadonlySet<number>, pageCount: number): boolean {
  return textlessPages(pageTexts, pageCount).filter((page) => pagesWithImages.has(page)).length >= scannedThreshold(pageCount);
}

function scannedThreshold(pageCount: number): number {
  return Math.max(1, Math.ceil(pageCount / 2));
}

/** Page numbers (from 1) with almost no text. */
function textlessPages(pageTexts: readonly string[], pageCount: number): number[] {
  const pages: number[] = [];
  for (let page = 1; page <= pageCount; page++) {
    if ((pageTexts[page - 1] ?? '').replace(/\s+/g, '').length < TEXTLESS_PAGE_CHARS) pages.push(page);
  }
  return pages;
}

/** Pages that draw at least one image, inline images included, from `pdfimages -list` (no image is decoded). */
export function pagesWithImagesFrom(list: string): Set<number> {
  const pages = new Set<number>();
  for (const line of list.split('\n')) {
    const match = /^\s*(\d+)\s+\d+\s+(image|stencil)\s/.exec(line);
    if (match) pages.add(Number(match[1]));
  }
  return pages;
}

export const extract: WorkFunction = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const run = { cwd: dir, timeoutMs: timeLeft(input) };
    const all = await pdfText(source, run);
    if (all === undefined) damaged('its text could not be read');
    const pageCount = input.files[0].pages ?? 0;
    // pdftotext ends every page with a form feed.
    const pageTexts = all.split('\f');
    if (pageTexts.length > 1 && pageTexts[pageTexts.length - 1].trim() === '') pageTexts.pop();
    const pages = pageCount || pageTexts.length;
    // Images only matter on pages with almost no text: when too few pages are textless for the
    // rule to hold, the answer is already no, and pdfimages is not run at all.
    let scanned = false;
    if (textlessPages(pageTexts, pages).length >= scannedThreshold(pages)) {
      const list = await pdfImageList(source, { ...run, timeoutMs: timeLeft(input) });
      scanned = likelyScanned(pageTexts, pagesWithImagesFrom(list), pages);
    }
    const body = { text: pageTexts.join('\f'), pageCount: pages, likelyScanned: scanned };
    return { body: new TextEncoder().encode(JSON.stringify(body)), mediaType: 'application/json' };
  });
};

// merge, pages (select / reorder / delete / rotate) and split: page assembly with qpdf, which
// copies pages without re-encoding anything.
import path from 'node:path';
import type { JobInput, JobOutput, WorkFunction } from '../contract.js';
import { parsePageList, parseRanges } from '../../server/operations/page-ranges.js';
import { countPages, inputPath, PDF, qpdf, qpdfPageSpec, readBytes, ZIP } from './common.js';
import { withScratch } from './tool-run.js';
import { buildZip, checkZipSize, type ZipEntry } from '../zip.js';

/**
 * The first input is qpdf's primary file, so its document-level parts (outline, form fields,
 * page labels) are kept; later inputs contribute their pages, annotations and links. The
 * result is written unencrypted, as a new document.
 */
export async function mergeWithQpdf(input: JobInput, sources: readonly string[], out: string, dir: string, extra: readonly string[] = []): Promise<void> {
  await qpdf(input, [sources[0], '--decrypt', ...extra, '--pages', ...sources, '--', out], dir);
}

export const merge: WorkFunction = async (input): Promise<JobOutput> => {
  const sources: string[] = [];
  for (let i = 0; i < input.files.length; i++) sources.push(await inputPath(input, i));
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'merged.pdf');
    await mergeWithQpdf(input, sources, out, dir, ['--object-streams=generate']);
    return { body: await readBytes(out), mediaType: PDF };
  });
};

/** The page count the job sees (the price was computed from the same bytes). */
async function pageCountOf(input: JobInput, source: string, dir: string): Promise<number> {
  return input.files[0].pages ?? countPages(input, source, dir);
}

export const pages: WorkFunction = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const pageCount = await pageCountOf(input, source, dir);
    const listText = input.fields.pages;
    const rotate = input.fields.rotate;
    const selected = typeof listText === 'string' ? parsePageList(listText, pageCount, { field: 'pages' }) : undefined;
    const args = [source, '--object-streams=generate'];
    if (selected) args.push('--pages', '.', qpdfPageSpec(selected), '--');
    // qpdf's "+" rotates relative to each page's current /Rotate, clockwise: what the user sees turns by that much.
    if (rotate !== undefined) args.push(`--rotate=+${rotate}:1-z`);
    const out = path.join(dir, 'pages.pdf');
    args.push(out);
    await qpdf(input, args, dir);
    return { body: await readBytes(out), mediaType: PDF };
  });
};

export function splitEntryName(index: number, first: number, last: number): string {
  return `part-${String(index + 1).padStart(2, '0')}-p${first}-${last}.pdf`;
}

export const split: WorkFunction = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const pageCount = await pageCountOf(input, source, dir);
    const ranges = parseRanges(String(input.fields.ranges ?? ''), pageCount, { field: 'ranges' });
    const entries: ZipEntry[] = [];
    for (const [index, range] of ranges.entries()) {
      const out = path.join(dir, `part-${index}.pdf`);
      await qpdf(input, [source, '--object-streams=generate', '--pages', '.', `${range.first}-${range.last}`, '--', out], dir);
      entries.push({ name: splitEntryName(index, range.first, range.last), bytes: await readBytes(out) });
      checkZipSize(entries, input.settings.maxZipBytes);
    }
    return { body: await buildZip(entries, input.settings.maxZipBytes), mediaType: ZIP };
  });
};

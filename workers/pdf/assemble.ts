// merge, pages (select / reorder / delete / rotate) and split: page assembly with qpdf, which
// copies pages without re-encoding anything.
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Job, JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import type { PagesPlan } from '../../operations/pdf/pages.js';
import type { SplitPlan } from '../../operations/pdf/split.js';
import { appendOutlines } from '../../tools/engines/mutool.js';
import { extractPageRange, mergeFiles, selectPages, type QpdfPacking } from '../../tools/engines/qpdf.js';
import { inputPath, inputsContain, PDF, readBytes, ZIP } from './common.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import { buildZip, checkZipSize, type ZipEntry } from '../../tools/zip.js';

/**
 * qpdf's merge (see mergeFiles: the first input's document-level parts are kept, the result is
 * unencrypted). The later inputs' outlines are then appended after the first one's (see
 * appendLaterOutlines), so every input's bookmarks survive.
 */
export async function mergeWithQpdf(input: Job, sources: readonly string[], out: string, dir: string, packing: QpdfPacking): Promise<void> {
  await mergeFiles(sources, out, packing, { cwd: dir, timeoutMs: timeLeft(input) });
  // The catalog's /Outlines shows in the raw bytes unless the catalog sits in a compressed object
  // stream, so a later input with either may have an outline; without both it has none.
  if (sources.length > 1 && await inputsContain(input, ['/Outlines', '/ObjStm'], 1)) await appendLaterOutlines(input, sources, out, dir);
}

/**
 * Adds the outlines of the inputs after the first to qpdf's merged file. This is navigation on
 * top of what was paid for (the pages): if it fails for any reason, qpdf's result stands.
 */
async function appendLaterOutlines(input: Job, sources: readonly string[], out: string, dir: string): Promise<void> {
  const outlined = path.join(path.dirname(out), `outlined-${path.basename(out)}`);
  try {
    const withPages = sources.map((file, i) => ({ file, pages: input.files[i]?.pages }));
    // Half of the time left at most: if mupdf stalls, there is still time to return the pages.
    const outlineMs = Math.max(1, Math.min(Math.floor(timeLeft(input) / 2), 60_000));
    const appended = await appendOutlines(out, outlined, withPages, { cwd: dir, timeoutMs: outlineMs });
    if (appended > 0) await rename(outlined, out);
  } catch {
    // qpdf's merge is complete without the later outlines.
  } finally {
    await rm(outlined, { force: true });
  }
}

export const merge: WorkFunction = async (input): Promise<JobOutput> => {
  const sources: string[] = [];
  for (let i = 0; i < input.files.length; i++) sources.push(await inputPath(input, i));
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'merged.pdf');
    await mergeWithQpdf(input, sources, out, dir, 'object-streams');
    return { body: await readBytes(out), mediaType: PDF };
  });
};

export const pages: WorkFunction<PagesPlan> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const { pages: selected, rotate } = input.params;
    const out = path.join(dir, 'pages.pdf');
    await selectPages(source, out, { pages: selected, rotate }, { cwd: dir, timeoutMs: timeLeft(input) });
    return { body: await readBytes(out), mediaType: PDF };
  });
};

export function splitEntryName(index: number, first: number, last: number): string {
  return `part-${String(index + 1).padStart(2, '0')}-p${first}-${last}.pdf`;
}

export const split: WorkFunction<SplitPlan> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const { ranges } = input.params;
    const entries: ZipEntry[] = [];
    for (const [index, range] of ranges.entries()) {
      const out = path.join(dir, `part-${index}.pdf`);
      await extractPageRange(source, range.first, range.last, out, { cwd: dir, timeoutMs: timeLeft(input) });
      entries.push({ name: splitEntryName(index, range.first, range.last), bytes: await readBytes(out) });
      checkZipSize(entries, input.settings.maxZipBytes);
    }
    return { body: await buildZip(entries, input.settings.maxZipBytes), mediaType: ZIP };
  });
};

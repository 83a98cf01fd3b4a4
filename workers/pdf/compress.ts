// compress and merge-compress. lossless: qpdf only (object streams, recompressed Flate),
// never touching images. balanced and max: Ghostscript re-encodes images as JPEG at reduced
// resolution, then qpdf packs the objects. The smallest correct candidate wins, and the input
// itself is always a candidate, so the result is never larger than what was sent.
import path from 'node:path';
import type { Job, JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { countNavigation, type Navigation } from '../../tools/engines/mutool.js';
import { GS_BALANCED_JPEG_PASS_THROUGH, GS_EXIT, GS_LEVEL, maxAtDpi, pdfwrite, type GsSettings } from '../../tools/engines/gs.js';
import { packedCopy, packLosslessly } from '../../tools/engines/qpdf.js';
import { countPages, inputPath, inputsContain, PDF, readBytes } from './common.js';
import { mergeWithQpdf } from './assemble.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import type { CompressionLevel } from '../../operations/shared.js';
import type { PdfCompressPlan } from '../../operations/pdf/compress.js';
import { fail } from '../../core/errors.js';

type Level = CompressionLevel;

interface Candidate {
  file: string;
  size: number;
  /** Set on Ghostscript's result: the files it was made from. */
  sources?: readonly string[];
}

async function navigation(input: Job, file: string, dir: string): Promise<Navigation | undefined> {
  return countNavigation(file, { cwd: dir, timeoutMs: Math.max(1, Math.min(timeLeft(input), 20_000)) });
}

/** Ghostscript drops some outlines (for example /Fit destinations): its result only counts if links and outline survived. */
async function keptNavigation(input: Job, sources: readonly string[], candidate: string, dir: string): Promise<boolean> {
  const after = await navigation(input, candidate, dir);
  if (!after) return false;
  let outline = 0;
  let links = 0;
  for (const source of sources) {
    const before = await navigation(input, source, dir);
    if (!before) return true; // the source cannot be counted either: nothing to compare against
    outline += before.outline;
    links += before.links;
  }
  return after.outline >= outline && after.links >= links;
}

/**
 * Ghostscript's pass, accepted only if it kept every page. It gets most of the remaining time
 * but not all: when it is too slow the lossless candidate is still returned.
 */
async function ghostscriptCandidate(input: Job, level: Exclude<Level, 'lossless'>, sources: readonly string[], expectedPages: number, dir: string, settings: GsSettings = { name: 'gs', args: GS_LEVEL[level] }): Promise<Candidate | undefined> {
  const gsOut = path.join(dir, `${settings.name}.pdf`);
  const packed = path.join(dir, `${settings.name}-packed.pdf`);
  try {
    const budget = Math.max(1, Math.floor(timeLeft(input) * 0.8));
    const result = await pdfwrite(level, gsOut, sources, settings.args, { cwd: dir, timeoutMs: budget });
    if (result.exitCode !== GS_EXIT.ok) return undefined;
    if (!await packedCopy(gsOut, packed, { cwd: dir, timeoutMs: Math.max(1, timeLeft(input)) })) return undefined;
    // Ghostscript carries on past errors in damaged files and can silently drop pages.
    if (await countPages(input, packed, dir) !== expectedPages) return undefined;
    return { file: packed, size: (await readBytes(packed)).byteLength, sources };
  } catch {
    return undefined;
  }
}

/**
 * Ghostscript's candidates for the level. For balanced on PDFs holding JPEGs, both variants run
 * at once (two processes, about the wall time of one) and the smaller wins in smallest().
 */
async function ghostscriptCandidates(input: Job, level: Exclude<Level, 'lossless'>, sources: readonly string[], expectedPages: number, dir: string): Promise<(Candidate | undefined)[]> {
  const variants = [ghostscriptCandidate(input, level, sources, expectedPages, dir)];
  // An image stream's dictionary is never inside a compressed object stream, so its filter name shows in the raw bytes.
  if (level === 'balanced' && await inputsContain(input, ['/DCTDecode'])) {
    variants.push(ghostscriptCandidate(input, level, sources, expectedPages, dir, GS_BALANCED_JPEG_PASS_THROUGH));
  }
  return Promise.all(variants);
}

async function smallest(input: Job, candidates: readonly (Candidate | undefined)[], dir: string): Promise<Uint8Array> {
  const ranked = candidates.filter((c): c is Candidate => c !== undefined).sort((a, b) => a.size - b.size);
  for (const candidate of ranked) {
    if (candidate.sources && !(await keptNavigation(input, candidate.sources, candidate.file, dir))) continue;
    return readBytes(candidate.file);
  }
  return readBytes(ranked[ranked.length - 1].file);
}

async function compressOne(input: Job, source: string, level: Level, dir: string, baseline: Candidate): Promise<Uint8Array> {
  const lossless = async (): Promise<Candidate> => {
    const file = path.join(dir, 'lossless.pdf');
    await packLosslessly(source, file, { cwd: dir, timeoutMs: timeLeft(input) });
    return { file, size: (await readBytes(file)).byteLength };
  };
  if (level === 'lossless') return smallest(input, [baseline, await lossless()], dir);
  // The qpdf pass and Ghostscript read the same source independently: run side by side.
  const pages = input.files[0].pages ?? await countPages(input, source, dir);
  const [packed, gs] = await Promise.all([lossless(), ghostscriptCandidates(input, level, [source], pages, dir)]);
  return smallest(input, [baseline, packed, ...gs], dir);
}

// ---- Compress to a target size ------------------------------------------------------------

/** The steps of the target search, best quality first; each gives its candidates (its smallest valid one counts). */
export const TARGET_STEPS = ['lossless', 'balanced', 'max', '50 dpi', '36 dpi'] as const;
export type TargetStep = typeof TARGET_STEPS[number];

export interface TargetOutcome {
  body: Uint8Array;
  /** The step whose result was returned. */
  step: TargetStep;
  /** Steps tried, in order, with the size each reached (undefined: no valid result). */
  tried: Array<{ step: TargetStep; size?: number }>;
}

/** The smallest candidate that kept every page, outline entry and link; undefined when none did. */
async function smallestValid(input: Job, candidates: readonly (Candidate | undefined)[], dir: string): Promise<Candidate | undefined> {
  const ranked = candidates.filter((c): c is Candidate => c !== undefined).sort((a, b) => a.size - b.size);
  for (const candidate of ranked) {
    if (!candidate.sources || await keptNavigation(input, candidate.sources, candidate.file, dir)) return candidate;
  }
  return undefined;
}

/**
 * The best quality at or under the target: the steps run in order of quality (lossless, then
 * balanced, max, and max's settings at 50 and 36 dpi) and the first whose smallest valid result
 * fits is returned, so a generous target costs one qpdf run and a tight one at most five
 * Ghostscript runs besides. When none fits, TARGET_UNREACHABLE names the smallest size reached
 * (and says so when the job's deadline stopped the search early).
 */
export async function compressToTarget(input: Job, source: string, targetBytes: number, dir: string): Promise<TargetOutcome> {
  const pages = input.files[0].pages ?? await countPages(input, source, dir);
  const baseline: Candidate = { file: source, size: input.files[0].bytes.byteLength };
  const steps: Record<TargetStep, () => Promise<(Candidate | undefined)[]>> = {
    lossless: async () => {
      const file = path.join(dir, 'lossless.pdf');
      await packLosslessly(source, file, { cwd: dir, timeoutMs: timeLeft(input) });
      return [baseline, { file, size: (await readBytes(file)).byteLength }];
    },
    balanced: () => ghostscriptCandidates(input, 'balanced', [source], pages, dir),
    max: () => ghostscriptCandidates(input, 'max', [source], pages, dir),
    '50 dpi': async () => [await ghostscriptCandidate(input, 'max', [source], pages, dir, maxAtDpi(50))],
    '36 dpi': async () => [await ghostscriptCandidate(input, 'max', [source], pages, dir, maxAtDpi(36))],
  };
  const tried: TargetOutcome['tried'] = [];
  let smallest: number | undefined;
  let outOfTime = false;
  for (const step of TARGET_STEPS) {
    // Each Ghostscript run takes at most 80 % of the time left; below a second there is no point starting one.
    if (step !== 'lossless' && input.deadline - Date.now() < 1_500) { outOfTime = true; break; }
    const best = await smallestValid(input, await steps[step](), dir);
    tried.push({ step, size: best?.size });
    if (!best) continue;
    if (best.size <= targetBytes) return { body: await readBytes(best.file), step, tried };
    smallest = Math.min(smallest ?? best.size, best.size);
  }
  const reached = smallest ?? baseline.size;
  fail('TARGET_UNREACHABLE',
    `target_kb = ${targetBytes / 1024} (${targetBytes} bytes) cannot be reached: the smallest PDF reached ${outOfTime ? 'within the job\'s time limit ' : ''}is ${reached} bytes (${(reached / 1024).toFixed(1)} KB); nothing was charged`,
    { field: 'target_kb' });
}

export const compress: WorkFunction<PdfCompressPlan> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  const { level, targetBytes } = input.params;
  return withScratch(input.jobDir, async (dir) => {
    const body = targetBytes !== undefined
      ? (await compressToTarget(input, source, targetBytes, dir)).body
      : await compressOne(input, source, level, dir, { file: source, size: input.files[0].bytes.byteLength });
    return { body, mediaType: PDF };
  });
};

export const mergeCompress: WorkFunction<{ level: Level }> = async (input): Promise<JobOutput> => {
  const sources: string[] = [];
  for (let i = 0; i < input.files.length; i++) sources.push(await inputPath(input, i));
  const { level } = input.params;
  return withScratch(input.jobDir, async (dir) => {
    // The plain merge is the baseline ("the input"); qpdf's packing is applied to it directly.
    const merged = path.join(dir, 'merged.pdf');
    const baseline = async (): Promise<Candidate> => {
      await mergeWithQpdf(input, sources, merged, dir, 'lossless');
      return { file: merged, size: (await readBytes(merged)).byteLength };
    };
    if (level === 'lossless') return { body: await smallest(input, [await baseline()], dir), mediaType: PDF };
    const known = input.files.every((f) => f.pages !== undefined);
    const pages = known ? input.files.reduce((sum, f) => sum + f.pages!, 0) : undefined;
    // Ghostscript reads the original files (so every input's outline is carried over), in
    // parallel with qpdf's merge when the page count is already known from inspection.
    const [packed, gs] = pages !== undefined
      ? await Promise.all([baseline(), ghostscriptCandidates(input, level, sources, pages, dir)])
      : await baseline().then(async (b) => {
          const counted = await countPages(input, merged, dir);
          return [b, await ghostscriptCandidates(input, level, sources, counted, dir)] as const;
        });
    return { body: await smallest(input, [packed, ...gs], dir), mediaType: PDF };
  });
};

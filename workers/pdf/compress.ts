// compress and merge-compress. lossless: qpdf only (object streams, recompressed Flate),
// never touching images. balanced and max: Ghostscript re-encodes images as JPEG at reduced
// resolution, then qpdf packs the objects. The smallest correct candidate wins, and the input
// itself is always a candidate, so the result is never larger than what was sent.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Job, JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { runTool } from '../../tools/process/run-tool.js';
import { countPages, inputPath, inputsContain, PDF, qpdf, readBytes } from './common.js';
import { mergeWithQpdf } from './assemble.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import type { CompressionLevel } from '../../operations/shared.js';
import type { PdfCompressJob } from '../../operations/pdf/compress.js';
import { fail } from '../../core/errors.js';

type Level = CompressionLevel;

export const QPDF_LOSSLESS = ['--object-streams=generate', '--compress-streams=y', '--recompress-flate', '--compression-level=9'];

// Plain /ebook re-encoded a photo as Flate (18x larger than DCT); forcing DCT and sharing
// duplicate images is what makes the size drop. Links, outlines and text survive pdfwrite.
const GS_IMAGES_AS_JPEG = [
  '-dAutoFilterColorImages=false', '-dColorImageFilter=/DCTEncode',
  '-dAutoFilterGrayImages=false', '-dGrayImageFilter=/DCTEncode',
  '-dDetectDuplicateImages=true',
  // Ghostscript 10 copies JPEGs through untouched by default, which leaves a scan or a photo exactly as large as before.
  '-dPassThroughJPEGImages=false', '-dPassThroughJPXImages=false',
];

export const GS_LEVEL: Record<Exclude<Level, 'lossless'>, string[]> = {
  balanced: ['-dPDFSETTINGS=/ebook', ...GS_IMAGES_AS_JPEG],
  // /screen alone leaves images up to 1.5 x 72 dpi untouched; a threshold of 1 brings everything above 72 dpi down.
  max: ['-dPDFSETTINGS=/screen', ...GS_IMAGES_AS_JPEG, '-dColorImageResolution=72', '-dGrayImageResolution=72', '-dMonoImageResolution=150',
    '-dColorImageDownsampleThreshold=1.0', '-dGrayImageDownsampleThreshold=1.0', '-dMonoImageDownsampleThreshold=1.0'],
};

/**
 * balanced's second opinion for PDFs that already hold JPEGs: those copied through untouched.
 * A scan whose JPEGs are already tight grows when re-encoded (3.7 % larger than plain /ebook on
 * the benchmark's photographed pages), while a photo at camera quality shrinks several times, so
 * both are made and the smaller kept. Images that must be downsampled are re-encoded either way.
 */
const GS_BALANCED_JPEG_PASS_THROUGH = GS_LEVEL.balanced.map((arg) => (arg === '-dPassThroughJPEGImages=false' ? '-dPassThroughJPEGImages=true' : arg));

export function gsArgs(level: Exclude<Level, 'lossless'>, out: string, inputs: readonly string[], settings: readonly string[] = GS_LEVEL[level]): string[] {
  return ['-q', '-dNOPAUSE', '-dBATCH', '-dSAFER', '-sDEVICE=pdfwrite', '-dCompatibilityLevel=1.7',
    ...settings, `-sOutputFile=${out}`, ...inputs];
}

interface Candidate { file: string; size: number; /** Set on Ghostscript's result: the files it was made from. */ sources?: readonly string[] }

// Counted with mupdf's own document model: outline entries (all levels) and links on every page.
const NAVIGATION_SCRIPT = `var doc = new Document(scriptArgs[0]);
function count(items) { var n = 0; if (!items) return 0; for (var i = 0; i < items.length; i++) n += 1 + count(items[i].down); return n; }
var links = 0; var pages = doc.countPages();
for (var i = 0; i < pages; i++) links += doc.loadPage(i).getLinks().length;
print(JSON.stringify({ outline: count(doc.loadOutline()), links: links }));`;

interface Navigation { outline: number; links: number }

async function navigation(input: Job, file: string, dir: string): Promise<Navigation | undefined> {
  const script = path.join(dir, 'navigation.js');
  await writeFile(script, NAVIGATION_SCRIPT, { flag: 'w' });
  try {
    const result = await runTool('mutool', ['run', script, file], { cwd: dir, timeoutMs: Math.max(1, Math.min(timeLeft(input), 20_000)) });
    const parsed = JSON.parse(Buffer.from(result.stdout).toString('utf8').trim().split('\n').pop() ?? '') as Navigation;
    return typeof parsed.outline === 'number' && typeof parsed.links === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
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
async function ghostscriptCandidate(input: Job, level: Exclude<Level, 'lossless'>, sources: readonly string[], expectedPages: number, dir: string, settings: { name: string; args: readonly string[] } = { name: 'gs', args: GS_LEVEL[level] }): Promise<Candidate | undefined> {
  const gsOut = path.join(dir, `${settings.name}.pdf`);
  const packed = path.join(dir, `${settings.name}-packed.pdf`);
  try {
    const budget = Math.max(1, Math.floor(timeLeft(input) * 0.8));
    const result = await runTool('gs', gsArgs(level, gsOut, sources, settings.args), { cwd: dir, timeoutMs: budget });
    if (result.exitCode !== 0) return undefined;
    const packedRun = await runTool('qpdf', [...QPDF_LOSSLESS, gsOut, packed], { cwd: dir, timeoutMs: Math.max(1, timeLeft(input)) });
    if (packedRun.exitCode !== 0 && packedRun.exitCode !== 3) return undefined;
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
    variants.push(ghostscriptCandidate(input, level, sources, expectedPages, dir, { name: 'gs-jpeg-kept', args: GS_BALANCED_JPEG_PASS_THROUGH }));
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
    await qpdf(input, [...QPDF_LOSSLESS, source, file], dir);
    return { file, size: (await readBytes(file)).byteLength };
  };
  if (level === 'lossless') return smallest(input, [baseline, await lossless()], dir);
  // The qpdf pass and Ghostscript read the same source independently: run side by side.
  const pages = input.files[0].pages ?? await countPages(input, source, dir);
  const [packed, gs] = await Promise.all([lossless(), ghostscriptCandidates(input, level, [source], pages, dir)]);
  return smallest(input, [baseline, packed, ...gs], dir);
}

// ---- Compress to a target size ------------------------------------------------------------

/** max's settings with images brought down to `dpi` instead of 72: the steps below max. */
function belowMax(dpi: number): { name: string; args: readonly string[] } {
  const resolution = /^-d(Color|Gray)ImageResolution=/;
  return { name: `gs-${dpi}dpi`, args: GS_LEVEL.max.map((arg) => (resolution.test(arg) ? arg.replace(/=\d+$/, `=${dpi}`) : arg)) };
}

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
      await qpdf(input, [...QPDF_LOSSLESS, source, file], dir);
      return [baseline, { file, size: (await readBytes(file)).byteLength }];
    },
    balanced: () => ghostscriptCandidates(input, 'balanced', [source], pages, dir),
    max: () => ghostscriptCandidates(input, 'max', [source], pages, dir),
    '50 dpi': async () => [await ghostscriptCandidate(input, 'max', [source], pages, dir, belowMax(50))],
    '36 dpi': async () => [await ghostscriptCandidate(input, 'max', [source], pages, dir, belowMax(36))],
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

export const compress: WorkFunction<PdfCompressJob> = async (input): Promise<JobOutput> => {
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
      await mergeWithQpdf(input, sources, merged, dir, QPDF_LOSSLESS);
      return { file: merged, size: (await readBytes(merged)).byteLength };
    };
    if (level === 'lossless') return { body: await smallest(input, [await baseline()], dir), mediaType: PDF };
    const known = input.files.every((f) => f.pages !== undefined);
    const pages = known ? input.files.reduce((sum, f) => sum + f.pages!, 0) : undefined;
    // Ghostscript reads the original files (so every input's outline is carried over), in
    // parallel with qpdf's merge when the page count is already known from inspection.
    const [packed, gs] = pages !== undefined
      ? await Promise.all([baseline(), ghostscriptCandidates(input, level, sources, pages, dir)])
      : await baseline().then(async (b) => [b, await ghostscriptCandidates(input, level, sources, await countPages(input, merged, dir), dir)] as const);
    return { body: await smallest(input, [packed, ...gs], dir), mediaType: PDF };
  });
};

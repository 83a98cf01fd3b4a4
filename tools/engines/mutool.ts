// mutool (MuPDF's command-line tool): draws pages to PNG, lists pages and images, extracts
// images, and runs the MuPDF JavaScript programs in ./mupdf/ (each a plain .js file, linted and
// tested on its own, that build-assets copies beside the compiled module). Every mutool command
// line of the service is built here, with the reason for each flag.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fail } from '../../core/errors.js';
import { runTool, type RunOptions, type RunResult } from '../process/run-tool.js';
import { asToolError, toolFailure } from '../process/tool-errors.js';
import { declareEngine } from './declare.js';

export const MUTOOL = declareEngine({ name: 'mutool', commands: ['mutool'], package: 'mupdf-tools' });
const COMMAND = MUTOOL.commands[0];

/** mutool's exit statuses: 0 when the command completed; anything else (1) when it gave up. */
export const MUTOOL_EXIT = { ok: 0 } as const;

function runMutool(args: readonly string[], options: RunOptions): Promise<RunResult> {
  return runTool(COMMAND, args, options);
}

/** A run for a paid job's output: a run that did not complete maps through asToolError. */
async function runForJob(args: readonly string[], options: RunOptions): Promise<RunResult> {
  try {
    return await runMutool(args, options);
  } catch (err) {
    throw asToolError(err, 'mutool');
  }
}

// ---- The programs (mutool run) ----------------------------------------------------------------

/** The MuPDF JavaScript programs in ./mupdf/, by file name without .js (each file's header says what it does). */
export const MUPDF_PROGRAMS = ['page-text', 'merge-outline', 'count-navigation', 'draw-form-fields', 'page-check'] as const;
export type MupdfProgram = typeof MUPDF_PROGRAMS[number];

/** Where a program lives: beside this module, in sources and in dist/ (copied there by bin/build-assets.ts). */
export function mupdfProgramPath(program: MupdfProgram): string {
  const file = fileURLToPath(new URL(`./mupdf/${program}.js`, import.meta.url));
  if (!existsSync(file)) throw new Error(`the MuPDF program ${program}.js is missing beside ${fileURLToPath(import.meta.url)}: run the build (bin/build-assets.ts copies it)`);
  return file;
}

/** `mutool run <program> <args...>`; the result as it is (each program prints its own answer on stdout). */
export function runMupdfProgram(program: MupdfProgram, args: readonly string[], options: RunOptions): Promise<RunResult> {
  return runMutool(['run', mupdfProgramPath(program), ...args], options);
}

/** The last line a program printed, parsed as JSON (undefined when it is not JSON). */
function lastJsonLine(result: RunResult): unknown {
  try {
    return JSON.parse(Buffer.from(result.stdout).toString('utf8').trim().split('\n').pop() ?? '');
  } catch {
    return undefined;
  }
}

/**
 * The first of `pages` pages MuPDF cannot read (page-check.js: a content stream it cannot decode,
 * an operator it gives up on, or a page past those it finds), 1-based, or undefined when it reads
 * them all. A run that does not complete throws its RunFailure; an answer that is not the
 * program's counts as no verdict (undefined).
 */
export async function firstUnreadablePage(file: string, pages: number, options: RunOptions): Promise<number | undefined> {
  const answer = lastJsonLine(await runMupdfProgram('page-check', [file], options)) as { pages?: unknown; unreadable?: unknown } | undefined;
  if (typeof answer?.unreadable !== 'number' || typeof answer.pages !== 'number') return undefined;
  if (answer.unreadable > 0) return answer.unreadable;
  return answer.pages < pages ? answer.pages + 1 : undefined;
}

export interface Navigation { outline: number; links: number }

/** Outline entries and links (count-navigation.js); undefined when mupdf could not count them. */
export async function countNavigation(file: string, options: RunOptions): Promise<Navigation | undefined> {
  try {
    const parsed = lastJsonLine(await runMupdfProgram('count-navigation', [file], options)) as Navigation | undefined;
    return typeof parsed?.outline === 'number' && typeof parsed.links === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes `out`: the merged file with the later sources' outlines appended (merge-outline.js).
 * Returns how many entries were appended; 0 when there were none or mupdf failed (then `out`
 * must not be used). A run that did not complete throws.
 */
export async function appendOutlines(
  merged: string, out: string, sources: ReadonlyArray<{ file: string; pages: number | undefined }>, options: RunOptions,
): Promise<number> {
  const args = [merged, out];
  // -1: a page count qpdf did not give; the program counts that source itself.
  for (const source of sources) args.push(String(source.pages ?? -1), source.file);
  const result = await runMupdfProgram('merge-outline', args, options);
  const report = lastJsonLine(result) as { entries?: unknown } | undefined;
  return result.exitCode === MUTOOL_EXIT.ok && typeof report?.entries === 'number' ? report.entries : 0;
}

/** Writes a copy of a form with its field values drawn (draw-form-fields.js); false when the form needs none or mupdf failed. */
export async function drawFormFields(file: string, out: string, options: RunOptions): Promise<boolean> {
  const result = await runMupdfProgram('draw-form-fields', [file, out], options);
  return result.exitCode === MUTOOL_EXIT.ok && Buffer.from(result.stdout).toString('utf8').trim().endsWith('drawn') && existsSync(out);
}

/**
 * Pages first..last (1-based) read by page-text.js: the structured text goes to `stextFile`,
 * links and drawings are on stdout. A password-protected file is the client's ENCRYPTED_PDF.
 */
export async function readPageText(pdf: string, first: number, last: number, stextFile: string, options: RunOptions): Promise<RunResult> {
  const result = await runMupdfProgram('page-text', [pdf, String(first), String(last), stextFile], options);
  if (Buffer.from(result.stdout.subarray(0, 9)).toString('latin1') === 'ENCRYPTED' || /password|encrypt/i.test(result.stderr)) {
    fail('ENCRYPTED_PDF', 'The PDF is password-protected; remove the password first.', { field: 'file' });
  }
  return result;
}

// ---- Commands -----------------------------------------------------------------------------------

/**
 * `mutool pages`: each page's boxes and rotation as XML (5 to 30 ms for a few dozen pages). No
 * password is taken: mutool would need it on its command line, where `ps` shows it.
 */
export async function listPages(file: string, options: RunOptions): Promise<string> {
  const result = await runMutool(['pages', file], { ...options, maxStdout: 64 * 1024 * 1024 });
  return Buffer.from(result.stdout).toString('utf8');
}

export interface DrawAllPages {
  dpi: number;
  /** Upper bounds in pixels: no page may come out larger, whatever its boxes say. */
  maxWidth: number;
  maxHeight: number;
  /** Output file names, with %d for the page number. */
  outPattern: string;
}

/** Every page to PNG in one run (the file is parsed once); true when mutool completed. */
export async function drawAllPages(file: string, draw: DrawAllPages, options: RunOptions): Promise<boolean> {
  const result = await runForJob([
    'draw',
    // -q: no progress lines on stderr.
    '-q',
    // -r: the resolution the client asked for.
    '-r', String(draw.dpi),
    // With -r, -w and -h only bound the size: the aspect ratio is kept.
    '-w', String(draw.maxWidth), '-h', String(draw.maxHeight),
    '-F', 'png', '-o', draw.outPattern, file,
  ], options);
  return result.exitCode === MUTOOL_EXIT.ok;
}

export interface DrawPage {
  dpi: number;
  /** Longest side in pixels: larger pages are scaled down to fit. */
  maxSide: number;
  /** Grayscale (a third of the bytes; tesseract binarises anyway). */
  gray?: boolean;
  signal?: AbortSignal;
}

/** One page as PNG bytes. A page mupdf cannot draw is CORRUPT_INPUT; a cancelled run throws the signal's reason. */
export async function drawPagePng(file: string, page: number, draw: DrawPage, options: RunOptions): Promise<Uint8Array> {
  const args = [
    'draw', '-q', '-r', String(draw.dpi),
    // With -r, -w and -h are upper bounds that keep the aspect ratio.
    '-w', String(draw.maxSide), '-h', String(draw.maxSide),
    ...(draw.gray ? ['-c', 'gray'] : []),
    // -o -: the PNG on stdout, so nothing is written to disk.
    '-F', 'png', '-o', '-', file, String(page),
  ];
  let result;
  try {
    result = await runMutool(args, { ...options, signal: draw.signal, maxStdout: 128 * 1024 * 1024 });
  } catch (err) {
    if (draw.signal?.aborted) throw draw.signal.reason ?? err;
    toolFailure(err, `rendering page ${page}`);
  }
  // mutool writes warnings (ICC support) on stderr for good files: only the exit code and a PNG count.
  if (result.exitCode !== MUTOOL_EXIT.ok || result.stdout.length < 8) fail('CORRUPT_INPUT', `page ${page} of the PDF cannot be rendered`);
  return result.stdout;
}

/** `mutool info -I`: the embedded images, one line each, for the caller to parse. */
export async function listImages(file: string, options: RunOptions): Promise<string> {
  // -I: the images section only (not fonts, shadings, patterns or forms).
  const result = await runForJob(['info', '-I', file], { ...options, maxStdout: 64 * 1024 * 1024 });
  return Buffer.from(result.stdout).toString('utf8');
}

/** Writes the given image objects into the working directory as image-<object>.png or .jpg. */
export async function extractImages(file: string, objects: readonly number[], options: RunOptions): Promise<void> {
  // -a applies soft masks as alpha; -r converts CMYK and other colour spaces to RGB so the files are PNG or JPEG.
  await runForJob(['extract', '-a', '-r', file, ...objects.map(String)], options);
}

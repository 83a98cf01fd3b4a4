// qpdf: the engine that reads a PDF's structure (page count, page tree, encryption), checks its
// streams, and writes PDFs without re-encoding anything (page selection, rotation, split, merge,
// lossless packing, AES-256 encryption and decryption). Every qpdf command line of the service is
// built here, with the reason for each flag; callers ask for an action and get either qpdf's raw
// result (the pre-payment checks judge it themselves) or, for a paid job's output, the catalog's
// error when qpdf could not produce it.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fail } from '../../core/errors.js';
import { runTool, type RunOptions, type RunResult } from '../process/run-tool.js';
import { asToolError, damaged } from '../process/tool-errors.js';
import { declareEngine } from './declare.js';

export const QPDF = declareEngine({ name: 'qpdf', commands: ['qpdf'], package: 'qpdf' });

/** qpdf's exit statuses: 0 success, 2 failure, 3 success with warnings (damage it repaired to read the file). */
export const QPDF_EXIT = { ok: 0, failed: 2, repaired: 3 } as const;

/** A run within a job's private directory (job files with passwords are written there). */
export type QpdfRun = RunOptions & { cwd: string };

/** The file was read and written, repaired or not. */
export function qpdfSucceeded(result: RunResult): boolean {
  return result.exitCode === QPDF_EXIT.ok || result.exitCode === QPDF_EXIT.repaired;
}

/**
 * Warnings about how a token is spelled, which qpdf reads as every other reader does and keeps as
 * it is in any rewrite: nothing was repaired, and no reader sees another document.
 */
const SPELLING_WARNINGS: readonly RegExp[] = [
  // A `#` not followed by two hex digits in a name: PDF 1.1 spelling; qpdf, poppler and MuPDF keep it literally.
  /: name with stray # will not work with PDF >= 1\.2$/,
];

/**
 * qpdf read the file only by repairing it (a rebuilt cross-reference table, a recovered stream
 * length, a guessed object): exit 3 with a warning other than a spelling one. Unless every warning
 * was captured (qpdf's closing line is there: stderr is cut at 64 KiB), the run counts as repaired.
 */
export function qpdfRepaired(result: RunResult): boolean {
  if (result.exitCode !== QPDF_EXIT.repaired) return false;
  const lines = result.stderr.trimEnd().split('\n');
  if (!lines.at(-1)?.startsWith('qpdf: operation succeeded with warnings')) return true;
  const warnings = lines.filter((line) => line.startsWith('WARNING: '));
  return warnings.length === 0 || warnings.some((line) => !SPELLING_WARNINGS.some((spelling) => spelling.test(line)));
}

export function isWrongPassword(result: RunResult): boolean {
  return result.exitCode === QPDF_EXIT.failed && /invalid password/i.test(result.stderr);
}

/** The page count qpdf printed (--show-npages), NaN when it printed none. */
export function printedPageCount(result: RunResult): number {
  return Number.parseInt(Buffer.from(result.stdout).toString('utf8').trim(), 10);
}

// ---- Flags -------------------------------------------------------------------------------------

/** Cross-reference and small objects packed into compressed object streams: smaller files, read by every PDF 1.5+ reader. */
const OBJECT_STREAMS = '--object-streams=generate';

/** The lossless compression pass: never touches images, only how objects and Flate streams are stored. */
export const QPDF_LOSSLESS = [
  OBJECT_STREAMS,
  // Streams stored uncompressed are compressed.
  '--compress-streams=y',
  // Streams already Flate-compressed are decompressed and compressed again, at the level below.
  '--recompress-flate',
  // zlib's best: the pass runs once per job, so its extra CPU buys bytes for every reader.
  '--compression-level=9',
] as const;

/** How a written file stores its objects: packed into object streams, or the lossless pass on top. */
export type QpdfPacking = 'object-streams' | 'lossless';

function packingFlags(packing: QpdfPacking): readonly string[] {
  return packing === 'lossless' ? QPDF_LOSSLESS : [OBJECT_STREAMS];
}

/** Compacts a page list into qpdf's syntax: runs of consecutive pages become a-b. */
export function qpdfPageSpec(pages: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < pages.length) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j] + 1) j++;
    parts.push(i === j ? `${pages[i]}` : `${pages[i]}-${pages[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

// ---- Running -----------------------------------------------------------------------------------

function runQpdf(args: readonly string[], options: RunOptions): Promise<RunResult> {
  return runTool(QPDF.commands[0], args, options);
}

/**
 * Runs qpdf from a job description (qpdf's --job-json-file). Passwords travel in that file,
 * mode 0600 inside the private job directory, and never on a command line that `ps` shows;
 * JSON also carries passwords that start with "--" or hold line breaks, which qpdf's
 * positional arguments and --password-file cannot.
 */
async function runQpdfJob(job: Record<string, unknown>, options: QpdfRun): Promise<RunResult> {
  const jobFile = path.join(options.cwd, `.qpdf-job-${randomBytes(8).toString('hex')}.json`);
  // A few hundred bytes on the RAM disk: synchronous calls are cheaper than async round trips.
  writeFileSync(jobFile, JSON.stringify(job), { mode: 0o600, flag: 'wx' });
  try {
    return await runQpdf([`--job-json-file=${jobFile}`], options);
  } finally {
    rmSync(jobFile, { force: true });
  }
}

/**
 * Writes a paid job's output. A run that did not complete maps through asToolError; qpdf's own
 * failure on an input that passed inspection means damage the quick checks could not see.
 */
async function writeForJob(args: readonly string[], options: QpdfRun, failure = 'qpdf could not rewrite it (the file is damaged)'): Promise<RunResult> {
  let result: RunResult;
  try {
    result = await runQpdf(args, options);
  } catch (err) {
    throw asToolError(err, 'qpdf');
  }
  if (!qpdfSucceeded(result)) damaged(failure);
  return result;
}

// ---- Reading (raw results: the caller judges them) ---------------------------------------------

export interface QpdfSurvey {
  /** qpdf could not open the file without a password. */
  needsPassword: boolean;
  encrypted: boolean;
  /** The page tree's /Count: a claim, printed by --show-npages. */
  declared?: number;
  /** Pages found by walking the tree (--show-pages). */
  walked: number;
  result: RunResult;
}

/**
 * One qpdf run answers what would take three (--requires-password, --show-npages,
 * --show-pages): qpdf prints each inspection in turn, and for a file that needs a password it
 * prints "Incorrect password supplied" and the encryption parameters instead of pages. Each qpdf
 * start costs 8 to 15 ms, which the quote and the paid retry would both pay three times over.
 */
export async function surveyPdf(file: string, options: RunOptions): Promise<QpdfSurvey> {
  // --show-npages: the claimed count; --show-encryption: whether (and how) it is encrypted;
  // --show-pages: one line per page object really reachable in the tree.
  const result = await runQpdf(['--show-npages', '--show-encryption', '--show-pages', file], { ...options, maxStdout: 64 * 1024 * 1024 });
  const out = Buffer.from(result.stdout).toString('utf8');
  const needsPassword = /^Incorrect password supplied$/m.test(out);
  const encrypted = needsPassword || /^R = \d+$/m.test(out);
  const count = /^(\d+)$/m.exec(out);
  return {
    needsPassword, encrypted, result,
    ...(count ? { declared: Number.parseInt(count[1], 10) } : {}),
    walked: out.match(/^page \d+:/gm)?.length ?? 0,
  };
}

/** `--show-npages`, with the password (if any) in a job file; read the count with printedPageCount. */
export function showPageCount(file: string, options: QpdfRun, password?: string): Promise<RunResult> {
  return password ? runQpdfJob({ inputFile: file, password, showNpages: '' }, options) : runQpdf(['--show-npages', file], options);
}

/** `--check` decodes every stream, the only check that finds corrupt content streams; exit 2 means errors it cannot repair. */
export function checkStreams(file: string, options: QpdfRun, password?: string): Promise<RunResult> {
  // Only a password needs the job file (it keeps the secret off the command line).
  return password ? runQpdfJob({ inputFile: file, password, check: '' }, options) : runQpdf(['--check', file], options);
}

/** qpdf's reading of the file written out as it is (repaired if it had to be), encryption kept. */
export function rewritePdf(file: string, out: string, options: QpdfRun, password?: string): Promise<RunResult> {
  return password ? runQpdfJob({ inputFile: file, password, outputFile: out }, options) : runQpdf([file, out], options);
}

/** The page count for a paid job: a run that did not complete fails the job, a file qpdf cannot read counts 0. */
export async function pageCountForJob(file: string, options: QpdfRun): Promise<number> {
  let result: RunResult;
  try {
    result = await runQpdf(['--show-npages', file], options);
  } catch (err) {
    throw asToolError(err, 'qpdf');
  }
  if (!qpdfSucceeded(result)) return 0;
  return printedPageCount(result) || 0;
}

/** A copy packed losslessly, for a candidate that may fail: true when qpdf wrote it. */
export async function packedCopy(file: string, out: string, options: QpdfRun): Promise<boolean> {
  return qpdfSucceeded(await runQpdf([...QPDF_LOSSLESS, file, out], options));
}

// ---- Writing a paid job's output (catalog errors on failure) ------------------------------------

/** The lossless pass over one file (compress's lossless level). */
export async function packLosslessly(file: string, out: string, options: QpdfRun): Promise<void> {
  await writeForJob([...QPDF_LOSSLESS, file, out], options);
}

/** Some pages of one file, in the given order, each optionally turned (pages). */
export async function selectPages(
  file: string, out: string, choice: { pages?: readonly number[]; rotate?: number }, options: QpdfRun,
): Promise<void> {
  const args = [file, OBJECT_STREAMS];
  // "." is the primary input itself: its document-level parts (outline, forms) are kept.
  if (choice.pages) args.push('--pages', '.', qpdfPageSpec(choice.pages), '--');
  // "+" rotates relative to each page's current /Rotate, clockwise: what the user sees turns by that much.
  if (choice.rotate !== undefined) args.push(`--rotate=+${choice.rotate}:1-z`);
  args.push(out);
  await writeForJob(args, options);
}

/** One range of pages as a document of its own (split). */
export async function extractPageRange(file: string, first: number, last: number, out: string, options: QpdfRun): Promise<void> {
  await writeForJob([file, OBJECT_STREAMS, '--pages', '.', `${first}-${last}`, '--', out], options);
}

/**
 * The pages of every file, in order, as one document. The first file is qpdf's primary input,
 * so its document-level parts (outline, form fields, page labels) are kept; the later ones give
 * their pages, annotations and links. --decrypt: the result is written unencrypted, as a new document.
 */
export async function mergeFiles(files: readonly string[], out: string, packing: QpdfPacking, options: QpdfRun): Promise<void> {
  await writeForJob([files[0], '--decrypt', ...packingFlags(packing), '--pages', ...files, '--', out], options);
}

/** AES-256 encryption with the password as both user and owner password (protect). */
export async function encryptPdf(file: string, out: string, password: string, options: QpdfRun): Promise<void> {
  const job = {
    inputFile: file, outputFile: out, objectStreams: 'generate',
    // 256bit: AES-256 (PDF 2.0), the only strength the service writes.
    encrypt: { userPassword: password, ownerPassword: password, '256bit': {} },
  };
  const result = await runQpdfJob(job, options).catch((err) => { throw asToolError(err, 'qpdf'); });
  if (!qpdfSucceeded(result)) damaged('qpdf could not rewrite it (the file is damaged)');
}

/** The file without its encryption (unlock); a password that does not open it is the client's 422. */
export async function decryptPdf(file: string, out: string, password: string, options: QpdfRun): Promise<void> {
  const job = { inputFile: file, password, outputFile: out, decrypt: '', objectStreams: 'generate' };
  const result = await runQpdfJob(job, options).catch((err) => { throw asToolError(err, 'qpdf'); });
  if (isWrongPassword(result)) fail('WRONG_PASSWORD', 'the password does not open the PDF', { field: 'password' });
  if (!qpdfSucceeded(result)) damaged('qpdf could not decrypt it (the file is damaged)');
}

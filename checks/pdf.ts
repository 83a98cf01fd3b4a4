// Pre-payment inspection of an uploaded PDF: is it a PDF, can it be opened, is it
// password-protected, how many pages does it have (the price). It must stay fast (the quote
// runs it on every unpaid request), so only cheap checks run here; deeper damage is found
// by the paid job, which then fails without charge.
import { open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fail } from '../core/errors.js';
import { RunFailure, type RunResult } from '../tools/process/run-tool.js';
import { checkStreams, isWrongPassword, printedPageCount, QPDF_EXIT, qpdfRepaired, qpdfSucceeded, rewritePdf, showPageCount, surveyPdf, type QpdfSurvey } from '../tools/engines/qpdf.js';
import { firstUnreadablePage, listPages } from '../tools/engines/mutool.js';

/** Each inspection step gets this long; a PDF that qpdf cannot count in 10 s is treated as unreadable. */
const INSPECT_TIMEOUT_MS = 10_000;
/**
 * `qpdf --check` decodes every stream: 516 ms on a 1.8 MB, 117-page file, about 20 ms on small
 * ones. Below these bounds it costs under ~150 ms, which a quote can afford.
 */
export const DEEP_CHECK_MAX_BYTES = 2 * 1024 * 1024;
export const DEEP_CHECK_MAX_PAGES = 50;
// qpdf --check decodes every stream: a few hundred ms for a real 2 MB file, far longer for a small
// file whose streams inflate enormously. Past this it gives no verdict and the quote goes on: the
// paid job's deadline bounds the work, and damage it finds is not charged.
const DEEP_CHECK_TIMEOUT_MS = 800;
/** Up to this size a deep check's verdict counts whatever the page count (see inspectPdf). */
const EARLY_DEEP_CHECK_MAX_BYTES = 512 * 1024;

export interface PdfInspection {
  pages: number;
  /** True for any encryption, including owner-password-only files that open without a password. */
  encrypted: boolean;
  /**
   * qpdf had to repair the file to count it (a damaged or missing cross-reference table), or the
   * PDF does not start at byte 0: other readers may then see another document (poppler, MuPDF and
   * Ghostscript take the last trailer where qpdf's repair takes the first, and Ghostscript runs
   * what precedes %PDF- as PostScript), so the work must run on qpdf's rewrite (normalisePdf).
   */
  needsRewrite: boolean;
}

export interface InspectOptions {
  /** Only /v1/pdf/unlock takes password-protected PDFs. */
  acceptsEncrypted: boolean;
  password?: string;
  /** true: always run qpdf --check; false: never; undefined: only when it is cheap. */
  deep?: boolean;
}

const SIGNATURES: ReadonlyArray<[RegExp | ((head: Buffer) => boolean), string]> = [
  [(h) => h.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'a PNG image'],
  [(h) => h[0] === 0xff && h[1] === 0xd8 && h[2] === 0xff, 'a JPEG image'],
  [/^GIF8[79]a/, 'a GIF image'],
  [(h) => h.subarray(0, 4).toString('latin1') === 'RIFF' && h.subarray(8, 12).toString('latin1') === 'WEBP', 'a WebP image'],
  [/^(II\*\0|MM\0\*)/, 'a TIFF image'],
  [/^PK\x03\x04/, 'a ZIP archive (or an Office document)'],
  [(h) => h.subarray(0, 4).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0])), 'a legacy Office document'],
  [/^%!PS/, 'a PostScript file'],
  [/^\{\\rtf/, 'an RTF document'],
  [/^\s*(<!doctype html|<html)/i, 'an HTML page'],
  [/^\s*</, 'an XML or HTML document'],
];

function describeNonPdf(head: Buffer): string {
  const latin = head.toString('latin1');
  for (const [test, name] of SIGNATURES) {
    if (typeof test === 'function' ? test(head) : test.test(latin)) return name;
  }
  if (head.length === 0) return 'an empty file';
  const text = head.toString('utf8');
  if (!text.includes('\uFFFD') && !/[\0-\x08\x0e-\x1f]/.test(text)) return 'plain text';
  return 'binary data of an unknown type';
}

/**
 * PDF readers accept a header anywhere in the first 1024 bytes (some producers prepend junk).
 * Returns where it starts.
 */
async function checkPdfMagic(file: string): Promise<number> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(1024);
    const { bytesRead } = await handle.read(head, 0, 1024, 0);
    const bytes = head.subarray(0, bytesRead);
    const start = bytes.indexOf('%PDF-');
    if (start === -1) {
      fail('UNSUPPORTED_TYPE', `the file is not a PDF: it looks like ${describeNonPdf(bytes)}`, { field: 'file' });
    }
    return start;
  } finally {
    await handle.close();
  }
}

async function inspectRun<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof RunFailure && err.kind === 'timeout') {
      fail('CORRUPT_INPUT', `the PDF could not be opened within ${INSPECT_TIMEOUT_MS / 1000} s`, { field: 'file' });
    }
    throw err;
  }
}

function pageCountFrom(result: RunResult): number {
  const pages = printedPageCount(result);
  if (!qpdfSucceeded(result) || !Number.isFinite(pages)) {
    fail('CORRUPT_INPUT', 'the PDF cannot be read: its structure is damaged beyond repair', { field: 'file' });
  }
  if (pages < 1) fail('CORRUPT_INPUT', 'the PDF has no readable pages: its page tree is missing or broken', { field: 'file' });
  return pages;
}

function deepCheckWanted(options: InspectOptions, bytes: number, pages: number): boolean {
  if (options.deep !== undefined) return options.deep;
  return bytes <= DEEP_CHECK_MAX_BYTES && pages <= DEEP_CHECK_MAX_PAGES;
}

export async function inspectPdf(file: string, options: InspectOptions): Promise<PdfInspection> {
  const headerAt = await checkPdfMagic(file);
  const cwd = path.dirname(file);
  const run = { cwd, timeoutMs: INSPECT_TIMEOUT_MS };
  const { size } = await stat(file);
  // The deep check starts side by side with the survey (for unlock, with the password check), so
  // the quote does not wait for two qpdf runs in a row. Up to 512 KB its verdict counts whatever
  // the page count; above that, it is stopped unheard once the survey finds more than 50 pages.
  const earlyWanted = options.deep !== false && size <= DEEP_CHECK_MAX_BYTES;
  let early = earlyWanted && !options.acceptsEncrypted ? startDeepCheck(file, cwd) : undefined;
  try {
    const found = await inspectRun(() => surveyPdf(file, run));

    if (found.needsPassword && !options.acceptsEncrypted) {
      fail('ENCRYPTED_PDF', 'the PDF is password-protected; remove the password with /v1/pdf/unlock first', { field: 'file' });
    }

    let pages: number;
    let repaired = qpdfRepaired(found.result);
    if (options.acceptsEncrypted) {
      if (!found.encrypted) {
        checkPageTree(found);
        fail('NO_CONTENT', 'the PDF is not password-protected: there is nothing to unlock', { field: 'file' });
      }
      if (!options.password) fail('FIELD_INVALID', 'password is required to unlock the PDF', { field: 'password' });
      // With the password, the check can run beside the page count; a wrong password is still reported first.
      if (earlyWanted) early = startDeepCheck(file, cwd, options.password);
      const counted = await inspectRun(() => showPageCount(file, run, options.password));
      if (isWrongPassword(counted)) fail('WRONG_PASSWORD', 'the password does not open the PDF', { field: 'password' });
      pages = pageCountFrom(counted);
      repaired = qpdfRepaired(counted);
    } else {
      pages = checkPageTree(found);
    }

    // The survey's verdicts come first; the check's after.
    if (early && (size <= EARLY_DEEP_CHECK_MAX_BYTES || deepCheckWanted(options, size, pages))) await early.verdict();
    else if (!early && deepCheckWanted(options, size, pages)) {
      await deepCheck(file, cwd, options.acceptsEncrypted ? options.password : undefined);
    }
    return { pages, encrypted: found.encrypted, needsRewrite: repaired || headerAt > 0 };
  } finally {
    // A check no longer wanted is stopped. With a password it runs from a job file: waiting for
    // it then means no job file of it outlives this call (without one, nothing is left to wait for).
    if (early) {
      early.cancel();
      if (options.acceptsEncrypted) await early.settled();
    }
  }
}

/**
 * Rewrites an upload that needsRewrite into one clean document, qpdf's reading of it (the one
 * that was counted and priced), in place of the upload, and returns its bytes: every later engine
 * reads the same pages, from a file that starts with its header. The rewrite must read back
 * without repairs and with the same page count, or the file is refused before payment.
 */
export async function normalisePdf(file: string, pages: number, password?: string): Promise<Buffer> {
  const cwd = path.dirname(file);
  const rewritten = `${file}.rewritten`;
  const run = { cwd, timeoutMs: INSPECT_TIMEOUT_MS };
  const unreadable = (why: string) => fail('CORRUPT_INPUT', `the PDF's structure is damaged (${why}), so PDF readers disagree on what it holds; rewrite it (for example: qpdf in.pdf out.pdf), check its pages, and send it again`, { field: 'file' });
  try {
    // The password travels in qpdf's job file, never on a command line; the encryption is kept.
    const written = await inspectRun(() => rewritePdf(file, rewritten, run, password));
    if (!qpdfSucceeded(written)) unreadable('qpdf could not rebuild it');
    const reread = await inspectRun(() => showPageCount(rewritten, run, password));
    const count = printedPageCount(reread);
    if (!qpdfSucceeded(reread) || qpdfRepaired(reread)) unreadable('its rebuilt form still needs repairs to be read');
    if (count !== pages) unreadable(`its rebuilt form has ${count} pages where ${pages} were counted`);
    await rename(rewritten, file);
    return await readFile(file);
  } finally {
    await rm(rewritten, { force: true });
  }
}

/** A deep check running in the background: its verdict when asked for, or cancelled unheard. */
interface DeepCheck { verdict(): Promise<void>; cancel(): void; settled(): Promise<unknown> }
function startDeepCheck(file: string, cwd: string, password?: string): DeepCheck {
  const controller = new AbortController();
  const outcome = deepCheck(file, cwd, password, controller.signal).then(() => undefined, (err: unknown) => err);
  return {
    async verdict() {
      const err = await outcome;
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the deep check's own failure, as it came
      if (err) throw err;
    },
    cancel() { controller.abort(); },
    settled() { return outcome; },
  };
}

/**
 * `--show-npages` reports the page tree's /Count, which is only a claim: a 300-page file declaring
 * /Count 1 would be priced as one page while qpdf and gs process all 300, and mutool believes the
 * claim. Walking the tree (0.3 ms a page) finds the pages every engine will really meet; a file whose
 * claim and tree disagree, whose tree loops, or whose page objects are too deeply nested to parse
 * is refused before anyone pays for it. Returns the page count.
 */
function checkPageTree(found: QpdfSurvey): number {
  const { result, declared, walked } = found;
  if (/excessively deeply nested/.test(result.stderr)) {
    fail('CORRUPT_INPUT', 'the PDF is damaged: an object in its page tree is nested too deeply to be read', { field: 'file' });
  }
  if (declared === undefined) fail('CORRUPT_INPUT', 'the PDF cannot be read: its structure is damaged beyond repair', { field: 'file' });
  if (declared < 1) fail('CORRUPT_INPUT', 'the PDF has no readable pages: its page tree is missing or broken', { field: 'file' });
  if (!qpdfSucceeded(result)) fail('CORRUPT_INPUT', 'the PDF cannot be read: its page tree is broken (a loop or a missing node)', { field: 'file' });
  if (walked !== declared) {
    fail('CORRUPT_INPUT', `the PDF's page tree declares ${declared} pages but holds ${walked}; rewrite it (for example: qpdf in.pdf out.pdf) and send it again`, { field: 'file' });
  }
  return declared;
}

/** The deep check: qpdf decodes every stream (see checkStreams). */
async function deepCheck(file: string, cwd: string, password: string | undefined, signal?: AbortSignal): Promise<void> {
  let result: RunResult;
  try {
    const run = { cwd, timeoutMs: DEEP_CHECK_TIMEOUT_MS, ...(signal ? { signal } : {}) };
    result = await checkStreams(file, run, password);
  } catch (err) {
    // Too slow to check now is not a verdict: the paid job finds real damage and is not charged.
    if (err instanceof RunFailure) return;
    throw err;
  }
  if (result.exitCode === QPDF_EXIT.failed) fail('CORRUPT_INPUT', 'the PDF is damaged: qpdf --check found errors it cannot repair', { field: 'file' });
}

// MuPDF reads a small PDF's pages in tens of milliseconds; past this it gives no verdict (as the deep check).
const MUPDF_CHECK_TIMEOUT_MS = 800;

/**
 * For an operation whose work reads the pages with MuPDF (its text, or draws them): refuses a PDF
 * with a page MuPDF cannot read, which other readers may read (qpdf's issue-1688b.pdf declares Flate
 * predictor parameters MuPDF refuses to decode), before payment rather than failing the paid job.
 * It runs where the deep check does (≤ 2 MB and ≤ 50 pages); too slow to tell is no verdict, and
 * the paid job then fails uncharged. `reader` names the operation for the message.
 */
export async function checkMupdfReadsPages(file: string, pages: number, reader: string): Promise<void> {
  if (pages > DEEP_CHECK_MAX_PAGES || (await stat(file)).size > DEEP_CHECK_MAX_BYTES) return;
  let page: number | undefined;
  try {
    page = await firstUnreadablePage(file, pages, { cwd: path.dirname(file), timeoutMs: MUPDF_CHECK_TIMEOUT_MS });
  } catch (err) {
    if (err instanceof RunFailure) return;
    throw err;
  }
  if (page !== undefined) {
    fail('CORRUPT_INPUT', `page ${page} of the PDF cannot be read by MuPDF, which ${reader} reads pages with: its content is damaged or uses parameters MuPDF does not support`, { field: 'file' });
  }
}

export interface PageBox {
  page: number;
  /**
   * Size in points (1/72 inch) of the visible area (CropBox within MediaBox) as it is drawn:
   * scaled by the page's UserUnit and turned by its Rotate, as mupdf draws it.
   */
  widthPt: number;
  heightPt: number;
}

// PDF 2.0 allows any positive UserUnit; beyond this a page is miles wide and no render fits anyway.
const MAX_USER_UNIT = 75_000;

const MUPDF_DEFAULT_PAGE = { widthPt: 612, heightPt: 792 };

/** Page sizes from `mutool pages`: 5 to 30 ms for a few dozen pages. */
export async function pageBoxes(file: string, options: { cwd: string; timeoutMs: number }): Promise<PageBox[]> {
  const text = await listPages(file, options);
  const boxes: PageBox[] = [];
  for (const match of text.matchAll(/<page pagenum="(\d+)">([\s\S]*?)<\/page>/g)) {
    const body = match[2];
    const box = /<CropBox l="([-\d.e+]+)" b="([-\d.e+]+)" r="([-\d.e+]+)" t="([-\d.e+]+)"/.exec(body)
      ?? /<MediaBox l="([-\d.e+]+)" b="([-\d.e+]+)" r="([-\d.e+]+)" t="([-\d.e+]+)"/.exec(body);
    if (!box) {
      // No usable box (missing, or inherited from a broken parent): mupdf draws such a page at
      // its default, US Letter, so that is the size it will have.
      boxes.push({ page: Number(match[1]), ...MUPDF_DEFAULT_PAGE });
      continue;
    }
    const [l, b, r, t] = box.slice(1, 5).map(Number);
    // `mutool pages` lists UserUnit and Rotate beside the boxes, which it leaves unscaled.
    const unit = Number(/<UserUnit v="([-\d.e+]+)"/.exec(body)?.[1] ?? 1);
    const scale = Number.isFinite(unit) && unit > 0 ? Math.min(unit, MAX_USER_UNIT) : 1;
    const quarterTurns = Math.round(Number(/<Rotate v="([-\d.e+]+)"/.exec(body)?.[1] ?? 0) / 90);
    const [width, height] = [Math.abs(r - l) * scale, Math.abs(t - b) * scale];
    const turned = Math.abs(quarterTurns % 2) === 1;
    boxes.push({ page: Number(match[1]), widthPt: turned ? height : width, heightPt: turned ? width : height });
  }
  return boxes;
}

/** The decided bound on one rendered page. */
export const MAX_RENDER_PIXELS = 50_000_000;

export function renderPixels(box: PageBox, dpi: number): { width: number; height: number; pixels: number } {
  const width = Math.ceil((box.widthPt * dpi) / 72);
  const height = Math.ceil((box.heightPt * dpi) / 72);
  return { width, height, pixels: width * height };
}

/** Refuses (413, naming the page) a render whose page would exceed 50 megapixels at dpi. */
export function checkRenderPixels(boxes: readonly PageBox[], dpi: number): void {
  for (const box of boxes) {
    const { width, height, pixels } = renderPixels(box, dpi);
    if (!Number.isFinite(pixels) || pixels > MAX_RENDER_PIXELS) {
      fail('LIMIT_EXCEEDED', `page ${box.page} would render at ${width} x ${height} pixels at ${dpi} dpi, more than the limit of 50 megapixels; use a lower dpi`, { field: 'dpi' });
    }
  }
}

/** Page sizes for the pre-payment render check, or undefined when mutool cannot list them (the job checks again). */
export async function readPageBoxes(file: string): Promise<PageBox[] | undefined> {
  try {
    return await pageBoxes(file, { cwd: path.dirname(file), timeoutMs: INSPECT_TIMEOUT_MS });
  } catch (err) {
    if (err instanceof RunFailure) return undefined;
    throw err;
  }
}

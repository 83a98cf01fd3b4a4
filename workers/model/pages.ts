// PDF pages as PNG for the model (or for tesseract), rendered one page per mutool run so pages
// are produced only as fast as they are sent and a job never holds more than a few in memory.
import { fail } from '../../core/errors.js';
import { MODEL_DPI, timeLeft, type JobFile, type Job } from '../../core/job.js';
import { qpdfRepaired, qpdfSucceeded, showPageCount } from '../../tools/engines/qpdf.js';
import { drawPagePng } from '../../tools/engines/mutool.js';
import { toolFailure } from '../../tools/process/tool-errors.js';
import { drawFormFieldValues } from '../pdf/forms.js';

/** The service's limit for ocr, tables and structured (also enforced before payment). */
export const MAX_MODEL_PAGES = 30;

/**
 * 150 dpi puts body text (10 pt) at about 20 px per line: plainly legible to vision models, while
 * an A4 page stays at 1241 x 1754, inside the 2048 px box OpenAI scales every image into anyway.
 * More resolution costs upload time and, on servers that bill by pixels (Qwen-VL on vLLM), tokens.
 */
export const DEFAULT_MODEL_DPI = MODEL_DPI.default;
/** Longest side sent to a model: oversized pages (A2, posters) are scaled down to fit. */
export const MODEL_MAX_SIDE = 2048;

/** tesseract is trained on 300 dpi scans: its recall drops quickly below about 200 dpi. */
export const TESSERACT_DPI = 300;
/** A4 and US Letter at 300 dpi fit; bigger pages are scaled down (about 17 megapixels at most). */
export const TESSERACT_MAX_SIDE = 4200;

export function modelDpi(configured: number | undefined): number {
  if (configured === undefined || !Number.isFinite(configured)) return DEFAULT_MODEL_DPI;
  return Math.min(MODEL_DPI.max, Math.max(MODEL_DPI.min, Math.round(configured)));
}

/** The page count as priced; qpdf answers when the front end did not pass one. */
export async function pdfPageCount(input: Job, file: JobFile): Promise<number> {
  if (file.pages !== undefined) return file.pages;
  const path = requirePath(file);
  let out;
  try {
    out = await showPageCount(path, { timeoutMs: timeLeft(input), cwd: input.jobDir, maxStdout: 1024 });
  } catch (err) {
    toolFailure(err, 'counting the pages');
  }
  const pages = Number(Buffer.from(out.stdout).toString('utf8').trim());
  if (!qpdfSucceeded(out) || qpdfRepaired(out) || !Number.isInteger(pages) || pages < 1) fail('CORRUPT_INPUT', 'the PDF cannot be read: its pages cannot be counted');
  return pages;
}

/**
 * Pages 1..n, refusing (rather than truncating) a document over the limit. A form that leaves
 * drawing its filled values to the reader is first given them, so the rendered pages show them.
 */
export async function modelPages(input: Job): Promise<number[]> {
  const file = input.files[0];
  if (!file) fail('FIELD_INVALID', 'a PDF file is required', { field: 'file' });
  const count = await pdfPageCount(input, file);
  if (count > MAX_MODEL_PAGES) fail('LIMIT_EXCEEDED', `the PDF has ${count} pages; this operation accepts at most ${MAX_MODEL_PAGES}`);
  await drawFormFieldValues(input);
  return Array.from({ length: count }, (_, i) => i + 1);
}

function requirePath(file: JobFile): string {
  if (!file.path) fail('INTERNAL');
  return file.path;
}

export interface RenderOptions {
  dpi: number;
  maxSide: number;
  /** Grayscale for tesseract (a third of the bytes, and it binarises anyway); colour for models. */
  gray?: boolean;
  signal?: AbortSignal;
}

export async function renderPage(input: Job, page: number, options: RenderOptions): Promise<Uint8Array> {
  const path = requirePath(input.files[0] as JobFile);
  return drawPagePng(path, page, options, { timeoutMs: timeLeft(input), cwd: input.jobDir });
}

export function dataUrl(bytes: Uint8Array, mediaType: string): string {
  return `data:${mediaType};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
}

// Scanned pages in the Markdown: a page without a usable text layer (or with a thin one over an
// image covering most of it, see layoutStext) is rendered as the OCR endpoint renders it and read
// by the same local tesseract engine. Its hOCR lines become fragments in PDF points, so the rest
// of the layout engine (reading regions, paragraphs from line gaps, headings from type size,
// hyphens at line ends, lists) treats them like the lines of a text layer. Nothing leaves the server.
import { timeLeft, type Job } from '../../../core/job.js';
import { renderPage, TESSERACT_DPI, TESSERACT_MAX_SIDE } from '../../model/pages.js';
import { tesseractHocr } from '../../model/tesseract.js';
import { rulesOf } from './rules.js';
import type { StextLayout } from './convert.js';
import type { Fragment } from './types.js';

/** Time kept for the rest of the conversion (stext of later chunks, layout, the answer). */
const RESERVE_MS = 3_000;
/** Per page of the document not yet through mutool: what a text-layer chunk costs, generously. */
const RESERVE_PER_PAGE_MS = 60;
/**
 * What one page is expected to take before any was measured in this job: the slowest dense A4
 * page in bench/markdown's scanned run took about 5 s of wall time on a busy 2-core machine.
 */
const FIRST_PAGE_ESTIMATE_MS = 6_000;

/** Body lines whose estimated size lies within these ratios of the page's body are set to it exactly. */
const BODY_BAND = [0.9, 1.1] as const;

/** Words without a letter or digit that tesseract itself doubts are specks and picture edges. */
const NOISE_CONFIDENCE = 50;

/** The time one job's OCR has taken so far: the slowest page is the estimate for the next one. */
export interface OcrBudget { slowestMs: number }

export function newOcrBudget(): OcrBudget {
  return { slowestMs: 0 };
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescapeHtml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
    return ENTITY[name] ?? whole;
  });
}

function field(title: string, name: string): number[] | undefined {
  const m = new RegExp(`(?:^|;)\\s*${name}\\s+([^;]+)`).exec(title);
  return m ? m[1]!.trim().split(/\s+/).map(Number) : undefined;
}

interface OcrLine { box: number[]; size: number; words: string[] }

const SPAN = /<span class=['"](ocr_line|ocr_header|ocr_textfloat|ocr_caption|ocrx_word)['"][^>]*?title=(['"])(.*?)\2[^>]*>/g;

/**
 * Fragments for tesseract's hOCR: one per line, in PDF points (`scale` points per pixel).
 * The size of a line is tesseract's x_size (its estimate of the type size, which unlike the line's
 * box does not depend on which letters have ascenders or descenders).
 */
export function hocrFragments(hocr: string, scale: number): Fragment[] {
  const lines: OcrLine[] = [];
  let line: OcrLine | undefined;
  for (const m of hocr.matchAll(SPAN)) {
    const title = m[3]!;
    if (m[1] !== 'ocrx_word') {
      const box = field(title, 'bbox');
      const size = field(title, 'x_size')?.[0];
      line = box && box.length === 4 ? { box, size: size && size > 0 ? size : box[3]! - box[1]!, words: [] } : undefined;
      if (line) lines.push(line);
      continue;
    }
    if (!line) continue;
    const end = hocr.indexOf('</span>', m.index! + m[0].length);
    const word = unescapeHtml(hocr.slice(m.index! + m[0].length, end < 0 ? undefined : end).replace(/<[^>]*>/g, '')).trim();
    const confidence = field(title, 'x_wconf')?.[0] ?? 100;
    if (!word || (!/[\p{L}\p{N}]/u.test(word) && confidence < NOISE_CONFIDENCE)) continue;
    line.words.push(word);
  }
  const kept = lines.filter((l) => l.words.length > 0);
  // The body size: the size carrying the most characters. Lines near it are set to it, so the
  // estimate's jitter from line to line neither breaks paragraphs nor ranks headings.
  const weight = new Map<number, number>();
  for (const l of kept) weight.set(Math.round(l.size), (weight.get(Math.round(l.size)) ?? 0) + l.words.join(' ').length);
  let body = 0, most = -1;
  for (const [size, w] of weight) if (w > most) { body = size; most = w; }
  return kept.map((l): Fragment => {
    const text = l.words.join(' ');
    const size = (l.size >= body * BODY_BAND[0] && l.size <= body * BODY_BAND[1] ? body : l.size) * scale;
    const [x0, y0, x1, y1] = l.box.map((v) => v * scale) as [number, number, number, number];
    return {
      x0, y0, x1, y1, size, text,
      spans: [{ text, bold: false, italic: false, mono: false }],
      bold: false, italic: false, mono: false,
      charWidth: (x1 - x0) / Math.max(1, text.length),
    };
  });
}

/** Width and height of a PNG, from its header. */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

class OutOfTime extends Error {}

/**
 * Reads the scanned pages of one chunk in page order, one at a time (each tesseract run takes a
 * core; the pool runs jobs side by side). A page is started only when the time left, less what the
 * rest of the document needs (`pagesAfter` pages still to go through mutool), covers the slowest
 * page so far, and is abandoned at that bound: from then on scanned pages keep their note (or a
 * thin text layer its text), so the call ends within its deadline with everything it did read.
 */
export async function readScannedPages(input: Job, layout: StextLayout, pagesAfter: number, budget: OcrBudget): Promise<void> {
  let outOfTime = false;
  for (const [index, page] of layout.pages.entries()) {
    if (page.scan === 'none') continue;
    const available = timeLeft(input) - RESERVE_MS - RESERVE_PER_PAGE_MS * pagesAfter;
    if (outOfTime || available < Math.max(budget.slowestMs, FIRST_PAGE_ESTIMATE_MS)) {
      outOfTime = true;
      page.ocrTimedOut = true;
      continue;
    }
    const started = Date.now();
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new OutOfTime()), available);
    try {
      const png = await renderPage(input, layout.firstPage + index, { dpi: TESSERACT_DPI, maxSide: TESSERACT_MAX_SIDE, gray: true, signal: abort.signal });
      const { width } = pngSize(png);
      // Points per pixel from the page's own width: right whatever the UserUnit, rotation or pixel cap.
      const scale = page.width / width;
      const hocr = await tesseractHocr(input, png, { dpi: Math.round(72 / scale), signal: abort.signal });
      page.fragments = hocrFragments(hocr, scale);
      // Rules drawn over a scan belong to the picture's layout, not to a table of the OCR lines.
      page.rules = rulesOf([]);
      page.ocrRead = true;
    } catch (err) {
      if (!(err instanceof OutOfTime)) throw err;
      outOfTime = true;
      page.ocrTimedOut = true;
    } finally {
      clearTimeout(timer);
    }
    budget.slowestMs = Math.max(budget.slowestMs, Date.now() - started);
  }
}

// Scanned pages in the Markdown: a page without a usable text layer (or with a thin one over an
// image covering most of it, see layoutStext) is rendered as the OCR endpoint renders it and read
// by the same local tesseract engine. Its hOCR lines become fragments in PDF points, so the rest
// of the layout engine (reading regions, paragraphs from line gaps, headings from type size,
// hyphens at line ends, lists) treats them like the lines of a text layer. Nothing leaves the server.
import { timeLeft, type Job } from '../../core/job.js';
import { ServiceError } from '../../core/errors.js';
import { renderPage, TESSERACT_DPI, TESSERACT_MAX_SIDE } from '../model/pages.js';
import { tesseractHocr } from '../../tools/engines/tesseract.js';
import { rulesOf } from './rules.js';
import type { StextLayout } from './convert.js';
import type { Fragment } from './types.js';
import { OCR_ASCENT_SHARE, OCR_NOISE_CONFIDENCE, OCR_SAME_SIZE_RATIO, OCR_WIDE_GAP_EM } from './thresholds.js';

/** Time kept for the rest of the conversion (stext of later chunks, layout, the answer). */
const RESERVE_MS = 3_000;
/** Per page of the document not yet through mutool: what a text-layer chunk costs, generously. */
const RESERVE_PER_PAGE_MS = 60;
/**
 * What one page is expected to take before any was measured in this job: bench/markdown's scanned
 * run measured about 2 s of CPU per page, and up to 4.9 s of wall time per page (the mean of one
 * style) while the 2-core machine was shared at a load of 11.
 */
const FIRST_PAGE_ESTIMATE_MS = 6_000;

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

interface OcrWord { text: string; x0: number; x1: number }
interface OcrLine { box: number[]; size: number; words: OcrWord[] }

/**
 * A line's type size in pixels. tesseract's x_size is right for a line with descenders but about
 * 12 % short for one without ("Next Season" beside "Survey Results"); the height from the top of
 * the line to its baseline, over OCR_ASCENT_SHARE, is right for any line with a capital or an ascender.
 * The larger of the two is right for both kinds of line.
 */
function lineSize(box: number[], title: string): number {
  const xSize = field(title, 'x_size')?.[0] ?? 0;
  // baseline: slope and offset of the baseline from the box's bottom edge (negative: above it).
  const offset = Math.min(0, field(title, 'baseline')?.[1] ?? 0);
  const ascent = (box[3]! - box[1]!) + offset;
  return Math.max(xSize, ascent / OCR_ASCENT_SHARE);
}

const SPAN = /<span class=['"](ocr_line|ocr_header|ocr_textfloat|ocr_caption|ocrx_word)['"][^>]*?title=(['"])(.*?)\2[^>]*>/g;

/**
 * Fragments for tesseract's hOCR: one per line, in PDF points (`scale` points per pixel), sized
 * by lineSize.
 */
export function hocrFragments(hocr: string, scale: number): Fragment[] {
  const lines: OcrLine[] = [];
  let line: OcrLine | undefined;
  for (const m of hocr.matchAll(SPAN)) {
    const title = m[3]!;
    if (m[1] !== 'ocrx_word') {
      const box = field(title, 'bbox');
      line = box && box.length === 4 ? { box, size: lineSize(box, title), words: [] } : undefined;
      if (line) lines.push(line);
      continue;
    }
    if (!line) continue;
    const end = hocr.indexOf('</span>', m.index! + m[0].length);
    const word = unescapeHtml(hocr.slice(m.index! + m[0].length, end < 0 ? undefined : end).replace(/<[^>]*>/g, '')).trim();
    const confidence = field(title, 'x_wconf')?.[0] ?? 100;
    const box = field(title, 'bbox');
    if (!word || !box || box.length !== 4 || (!/[\p{L}\p{N}]/u.test(word) && confidence < OCR_NOISE_CONFIDENCE)) continue;
    line.words.push({ text: word, x0: box[0]!, x1: box[2]! });
  }
  const fragments: Fragment[] = [];
  for (const l of lines) {
    let group: OcrWord[] = [];
    const close = () => {
      if (!group.length) return;
      const text = group.map((w) => w.text).join(' ');
      const x0 = group[0]!.x0 * scale, x1 = group[group.length - 1]!.x1 * scale, y0 = l.box[1]! * scale, y1 = l.box[3]! * scale;
      fragments.push({
        x0, y0, x1, y1, size: l.size * scale, text,
        spans: [{ text, bold: false, italic: false, mono: false }],
        bold: false, italic: false, mono: false,
        charWidth: (x1 - x0) / Math.max(1, text.length),
      });
      group = [];
    };
    for (const w of l.words) {
      const last = group[group.length - 1];
      if (last && w.x0 - last.x1 > l.size * OCR_WIDE_GAP_EM) close();
      group.push(w);
    }
    close();
  }
  return fragments;
}

/**
 * Gives the OCR lines of several pages whose sizes lie within OCR_SAME_SIZE_RATIO of one another one size,
 * the one carrying most characters among them, so that the estimate's jitter neither breaks a
 * paragraph in two nor gives two headings of one size two levels.
 */
export function snapSizes(fragments: Fragment[]): void {
  const sorted = [...fragments].sort((a, b) => a.size - b.size);
  let k = 0;
  while (k < sorted.length) {
    let end = k + 1;
    while (end < sorted.length && sorted[end]!.size <= sorted[k]!.size * OCR_SAME_SIZE_RATIO) end++;
    const group = sorted.slice(k, end);
    const weight = new Map<number, number>();
    for (const f of group) {
      const key = Math.round(f.size * 10) / 10;
      weight.set(key, (weight.get(key) ?? 0) + f.text.length);
    }
    let size = group[0]!.size, most = -1;
    for (const [s, w] of weight) if (w > most) { size = s; most = w; }
    for (const f of group) f.size = size;
    k = end;
  }
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
    if (outOfTime || available < (budget.slowestMs || FIRST_PAGE_ESTIMATE_MS)) {
      outOfTime = true;
      page.ocr = 'timeout';
      continue;
    }
    const started = Date.now();
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new OutOfTime()), available);
    try {
      const rendering = { dpi: TESSERACT_DPI, maxSide: TESSERACT_MAX_SIDE, gray: true, signal: abort.signal };
      const png = await renderPage(input, layout.firstPage + index, rendering);
      const { width } = png.length > 24 ? pngSize(png) : { width: 0 };
      if (!(width > 0 && page.width > 0)) continue;
      // Points per pixel from the page's own width: right whatever the UserUnit, rotation or pixel cap.
      const scale = page.width / width;
      const hocr = await tesseractHocr(input, png, { dpi: Math.round(72 / scale), signal: abort.signal });
      const fragments = hocrFragments(hocr, scale);
      if (fragments.length) {
        page.fragments = fragments;
        // Rules drawn over a scan belong to the picture's layout, not to a table of the OCR lines.
        page.rules = rulesOf([]);
        page.ocr = 'read';
      } else {
        // A photo or a blank sheet: a thin text layer over it is kept as it is; none gets a note.
        page.ocr = 'empty';
      }
    } catch (err) {
      // A page mupdf cannot draw or tesseract cannot read keeps what it had before OCR (its note,
      // or its thin text layer) rather than failing the whole document; a deployment fault
      // (a missing language) still fails the job, uncharged, as it does for /v1/pdf/ocr.
      if (err instanceof ServiceError && (err.code === 'CORRUPT_INPUT' || err.code === 'LIMIT_EXCEEDED')) continue;
      if (!(err instanceof OutOfTime)) throw err;
      outOfTime = true;
      page.ocr = 'timeout';
    } finally {
      clearTimeout(timer);
    }
    budget.slowestMs = Math.max(budget.slowestMs, Date.now() - started);
  }
  snapSizes(layout.pages.filter((p) => p.ocr === 'read').flatMap((p) => p.fragments));
}

// pdf.markdown: Markdown from the PDF's own text layer, computed locally with mutool; pdf.blocks:
// the same document as blocks with their pages and boxes (blocks.ts), and chunks (chunks.ts).
// One run of the MuPDF program tools/engines/mupdf/page-text.js per chunk of pages writes
// mupdf's structured text (glyphs with fonts and boxes) to a file and prints, per page, the link
// annotations (stext has none) and the boxes of drawn lines and rectangles (table rules). One process per chunk keeps
// the per-page cost low; chunks keep a long document from holding all its text at once.
// Scanned pages are then read by local OCR (scanned.ts) unless the deployment turned it off.
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readPageText } from '../../tools/engines/mutool.js';
import { timeLeft, type JobInput, type WorkFunction } from '../../core/job.js';
import { fail } from '../../core/errors.js';
import { damaged } from '../../tools/process/tool-errors.js';
import { layoutStext, markdownOf, type PageDrawing } from './convert.js';
import { newOcrBudget, readScannedPages } from './scanned.js';
import { documentBlocks, type LaidOutBlock, type PageOut } from './blocks.js';
import { chunksOf } from './chunks.js';

export const CHUNK_PAGES = 40;
export const MAX_STEXT_BYTES = 256 * 1024 * 1024;

type Rect = [number, number, number, number];

function isRect(value: unknown): value is Rect {
  return Array.isArray(value) && value.length === 4 && value.every((n) => typeof n === 'number' && Number.isFinite(n));
}

/** Links and drawn boxes per page; an unreadable answer only loses these enrichments. */
export function parseDrawings(stdout: Uint8Array): PageDrawing[] {
  try {
    const raw = JSON.parse(Buffer.from(stdout).toString('utf8')) as unknown;
    if (!Array.isArray(raw)) return [];
    return raw.map((page: unknown) => {
      const [links, boxes, cover, images] = Array.isArray(page) ? page as unknown[] : [];
      return {
        imageCover: typeof cover === 'number' && Number.isFinite(cover) ? cover : 0,
        images: (Array.isArray(images) ? images : []).filter(isRect),
        links: (Array.isArray(links) ? links : [])
          .filter((l): l is [Rect, string] => Array.isArray(l) && isRect(l[0]) && typeof l[1] === 'string')
          .map(([rect, uri]) => ({ rect, uri })),
        boxes: (Array.isArray(boxes) ? boxes : []).filter(isRect),
      };
    });
  } catch {
    return [];
  }
}

/** One chunk of a PDF's pages as the page script read it: its structured text and drawings. */
export interface StextChunk {
  xml: string;
  drawings: PageDrawing[];
  /** The chunk's first and last page, 1-based. */
  first: number;
  last: number;
}

/**
 * Reads the pages of the job's PDF in chunks of CHUNK_PAGES with the page script, one mutool
 * process per chunk, and yields each chunk's structured text and drawings in page order. Fails
 * for a password-protected or unreadable PDF, and with `tooMuchText` (each endpoint words it for
 * its own answer) when a chunk's structured text passes MAX_STEXT_BYTES.
 */
export async function* readStextChunks(
  input: JobInput, pdfPath: string, pageCount: number, tooMuchText: string,
): AsyncGenerator<StextChunk> {
  const cwd = input.jobDir;
  const pdf = path.basename(pdfPath);
  const stextFile = 'pages.stext';
  for (let first = 1; first <= pageCount; first += CHUNK_PAGES) {
    const last = Math.min(pageCount, first + CHUNK_PAGES - 1);
    await writeFile(path.join(cwd, stextFile), '', { mode: 0o600 });
    const run = await readPageText(pdf, first, last, stextFile, { cwd, timeoutMs: timeLeft(input), maxStdout: 64 * 1024 * 1024 });
    const size = (await stat(path.join(cwd, stextFile))).size;
    if (size > MAX_STEXT_BYTES) fail('LIMIT_EXCEEDED', tooMuchText, { field: 'file' });
    const xml = await readFile(path.join(cwd, stextFile), 'utf8');
    if (run.exitCode !== 0 || !xml.includes('<page')) damaged(first === last ? `MuPDF could not read page ${first}` : `MuPDF could not read pages ${first} to ${last}`);
    yield { xml, drawings: parseDrawings(run.stdout), first, last };
  }
}

export const markdown: WorkFunction = async (input) => {
  const file = input.files[0];
  if (!file?.path) fail('UNSUPPORTED_TYPE', 'Upload one PDF file.', { field: 'file' });
  const pageCount = Math.max(1, file.pages ?? 1);
  const parts: string[] = [];
  const ocr = input.settings.markdownOcr === 'tesseract';
  const budget = newOcrBudget();
  const chunks = readStextChunks(input, file.path, pageCount, 'The PDF holds more text than one conversion can return; convert fewer pages at a time.');
  for await (const { xml, drawings, first, last } of chunks) {
    const layout = layoutStext(xml, drawings, first);
    if (ocr) await readScannedPages(input, layout, pageCount - last, budget);
    parts.push(markdownOf(layout));
  }
  const body = parts.filter((p) => p.trim()).join('\n');
  // An empty result would be charged for nothing (and HTTP turns an empty 200 into 204).
  if (!body.trim()) fail('NO_CONTENT', 'The PDF has no text layer to convert (it looks scanned); use /v1/pdf/ocr to read its text.', { field: 'file' });
  return { body: new TextEncoder().encode(body), mediaType: 'text/markdown; charset=utf-8' };
};

/**
 * pdf.blocks: the blocks the Markdown is made of, read the same way (the same chunks of pages, the
 * same OCR of scanned pages), each with its page, box, kind, text and Markdown; with chunkChars,
 * the chunks too. A document without a block of text is refused after the work, uncharged.
 */
export const blocks: WorkFunction<{ chunkChars: number | null }> = async (input) => {
  const file = input.files[0];
  if (!file?.path) fail('UNSUPPORTED_TYPE', 'Upload one PDF file.', { field: 'file' });
  const pageCount = Math.max(1, file.pages ?? 1);
  const ocr = input.settings.markdownOcr === 'tesseract';
  const budget = newOcrBudget();
  const found: LaidOutBlock[] = [];
  const pages: PageOut[] = [];
  const chunks = readStextChunks(input, file.path, pageCount, 'The PDF holds more text than one call can return; send fewer pages at a time.');
  for await (const { xml, drawings, first, last } of chunks) {
    const layout = layoutStext(xml, drawings, first);
    if (ocr) await readScannedPages(input, layout, pageCount - last, budget);
    const read = documentBlocks(layout, drawings);
    found.push(...read.blocks);
    pages.push(...read.pages);
  }
  if (!found.some((b) => b.out.text)) {
    fail('NO_CONTENT', ocr
      ? 'The PDF has no text layer, and OCR read no text from its pages.'
      : 'The PDF has no text layer to read (it looks scanned); use /v1/pdf/ocr to read its text.', { field: 'file' });
  }
  const { chunkChars } = input.params;
  const answer = { pageCount, pages, blocks: found.map((b) => b.out), ...(chunkChars ? { chunks: chunksOf(found, chunkChars) } : {}) };
  return { body: new TextEncoder().encode(JSON.stringify(answer)), mediaType: 'application/json' };
};

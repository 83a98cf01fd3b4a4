// pdf.markdown: Markdown from the PDF's own text layer, computed locally with mutool.
// One `mutool run` script per chunk of pages writes mupdf's structured text (glyphs with
// fonts and boxes) to a file and prints, per page, the link annotations (stext has none)
// and the boxes of drawn lines and rectangles (table rules). One process per chunk keeps
// the per-page cost low; chunks keep a long document from holding all its text at once.
// Scanned pages are then read by local OCR (scanned.ts) unless the deployment turned it off.
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runTool } from '../../../tools/process/run-tool.js';
import { timeLeft, type JobInput, type WorkFunction } from '../../../core/job.js';
import { fail } from '../../../core/errors.js';
import { layoutStext, markdownOf, type PageDrawing } from './convert.js';
import { newOcrBudget, readScannedPages } from './scanned.js';
import { DRAW_FIELD_VALUES_JS } from '../forms.js';

export const CHUNK_PAGES = 40;
export const MAX_STEXT_BYTES = 256 * 1024 * 1024;

// scriptArgs: pdf, first, last (1-based), stext file. Prints "ENCRYPTED" or one JSON array
// with [links, boxes, imageCover] per page: links as [[x0, y0, x1, y1], uri], boxes as [x0, y0, x1, y1]
// of every straight-edged filled path and of every straight segment of a stroked path
// (stroke width included). Curved fills are skipped: rules and cell borders are straight. A page with a huge drawing stops
// recording after a cap so maps and charts cannot slow the script down much. imageCover is the
// share of the page's area under drawn images (each image's box clipped to the page, summed, at
// most 1): a scan wrapped in a PDF is one image the size of the page.
export const PAGE_SCRIPT = `
var doc = new Document(scriptArgs[0]);
if (doc.needsPassword()) { print('ENCRYPTED'); quit(); }
var first = parseInt(scriptArgs[1], 10) - 1, last = parseInt(scriptArgs[2], 10) - 1;
var writer = new DocumentWriter(scriptArgs[3], 'stext', '');
var out = [];
function r1(v) { return Math.round(v * 10) / 10; }
// Filled fields of a form that leaves drawing them to the reader (see workers/pdf/forms.ts).
${DRAW_FIELD_VALUES_JS}
for (var i = first; i <= last && i < doc.countPages(); i++) {
  var page = doc.loadPage(i);
  if (needAppearances) { try { drawFieldValues(page); } catch (e) {} }
  var dev = writer.beginPage(page.bound());
  page.run(dev, Identity);
  writer.endPage();
  var links = page.getLinks(), uris = [];
  for (var j = 0; j < links.length; j++) {
    var uri = links[j].uri;
    if (typeof uri === 'string' && /^(https?:|mailto:|ftp:)/i.test(uri)) uris.push([links[j].bounds, uri]);
  }
  var boxes = [];
  var box = function (path, ctm, width) {
    if (boxes.length > 4000) return;
    var x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9, curved = false;
    var at = function (x, y) {
      var X = x * ctm[0] + y * ctm[2] + ctm[4], Y = x * ctm[1] + y * ctm[3] + ctm[5];
      if (X < x0) x0 = X; if (X > x1) x1 = X; if (Y < y0) y0 = Y; if (Y > y1) y1 = Y;
    };
    path.walk({ moveTo: at, lineTo: at, curveTo: function () { curved = true; }, closePath: function () {} });
    if (curved || x0 > x1) return;
    var h = width / 2;
    boxes.push([r1(x0 - h), r1(y0 - h), r1(x1 + h), r1(y1 + h)]);
  };
  // A stroked outline (a cell border drawn as one rectangle) is its edges, not its area.
  var edges = function (path, ctm, width) {
    var h = width / 2, sx = 0, sy = 0, cx = 0, cy = 0;
    var to = function (x, y) {
      var X = x * ctm[0] + y * ctm[2] + ctm[4], Y = x * ctm[1] + y * ctm[3] + ctm[5];
      if (boxes.length <= 4000) boxes.push([r1(Math.min(cx, X) - h), r1(Math.min(cy, Y) - h), r1(Math.max(cx, X) + h), r1(Math.max(cy, Y) + h)]);
      cx = X; cy = Y;
    };
    path.walk({
      moveTo: function (x, y) { cx = sx = x * ctm[0] + y * ctm[2] + ctm[4]; cy = sy = x * ctm[1] + y * ctm[3] + ctm[5]; },
      lineTo: to,
      curveTo: function (a, b, c, d, x, y) { cx = x * ctm[0] + y * ctm[2] + ctm[4]; cy = x * ctm[1] + y * ctm[3] + ctm[5]; },
      closePath: function () { if (cx !== sx || cy !== sy) { var X = sx, Y = sy; if (boxes.length <= 4000) boxes.push([r1(Math.min(cx, X) - h), r1(Math.min(cy, Y) - h), r1(Math.max(cx, X) + h), r1(Math.max(cy, Y) + h)]); cx = sx; cy = sy; } },
    });
  };
  var bound = page.bound(), pageArea = (bound[2] - bound[0]) * (bound[3] - bound[1]), imageArea = 0;
  var image = function (ctm) {
    var xs = [ctm[4], ctm[0] + ctm[4], ctm[2] + ctm[4], ctm[0] + ctm[2] + ctm[4]];
    var ys = [ctm[5], ctm[1] + ctm[5], ctm[3] + ctm[5], ctm[1] + ctm[3] + ctm[5]];
    var w = Math.min(bound[2], Math.max.apply(null, xs)) - Math.max(bound[0], Math.min.apply(null, xs));
    var h = Math.min(bound[3], Math.max.apply(null, ys)) - Math.max(bound[1], Math.min.apply(null, ys));
    if (w > 0 && h > 0) imageArea += w * h;
  };
  page.run({
    fillImage: function (img, ctm, alpha) { if (alpha > 0.1) image(ctm); },
    fillImageMask: function (img, ctm, cs, color, alpha) { if (alpha > 0.1) image(ctm); },
    fillPath: function (path, evenOdd, ctm, cs, color, alpha) { if (alpha > 0.1) box(path, ctm, 0); },
    strokePath: function (path, stroke, ctm, cs, color, alpha) {
      if (alpha > 0.1 && boxes.length <= 4000) edges(path, ctm, stroke.lineWidth * Math.sqrt(Math.abs(ctm[0] * ctm[3] - ctm[1] * ctm[2])));
    },
  }, Identity);
  out.push([uris, boxes, pageArea > 0 ? Math.round(Math.min(1, imageArea / pageArea) * 100) / 100 : 0]);
}
writer.close();
print(JSON.stringify(out));
`;

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
      const [links, boxes, cover] = Array.isArray(page) ? page as unknown[] : [];
      return {
        imageCover: typeof cover === 'number' && Number.isFinite(cover) ? cover : 0,
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
export async function* readStextChunks(input: JobInput, pdfPath: string, pageCount: number, tooMuchText: string): AsyncGenerator<StextChunk> {
  const cwd = input.jobDir;
  const pdf = path.basename(pdfPath);
  const script = 'pages.js';
  const stextFile = 'pages.stext';
  await writeFile(path.join(cwd, script), PAGE_SCRIPT, { mode: 0o600 });
  for (let first = 1; first <= pageCount; first += CHUNK_PAGES) {
    const last = Math.min(pageCount, first + CHUNK_PAGES - 1);
    await writeFile(path.join(cwd, stextFile), '', { mode: 0o600 });
    const run = await runTool('mutool', ['run', script, pdf, String(first), String(last), stextFile],
      { cwd, timeoutMs: timeLeft(input), maxStdout: 64 * 1024 * 1024 });
    if (Buffer.from(run.stdout.subarray(0, 9)).toString('latin1') === 'ENCRYPTED' || /password|encrypt/i.test(run.stderr)) {
      fail('ENCRYPTED_PDF', 'The PDF is password-protected; remove the password first.', { field: 'file' });
    }
    const size = (await stat(path.join(cwd, stextFile))).size;
    if (size > MAX_STEXT_BYTES) fail('LIMIT_EXCEEDED', tooMuchText, { field: 'file' });
    const xml = await readFile(path.join(cwd, stextFile), 'utf8');
    if (run.exitCode !== 0 || !xml.includes('<page')) fail('CORRUPT_INPUT', 'The PDF could not be read.', { field: 'file' });
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

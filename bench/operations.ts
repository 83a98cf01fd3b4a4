// Every operation end to end, paid on the local Base chain with the standard x402 client, side
// by side with the raw tool call on the same input, alternating the two sides.
//   node dist/bench/operations.js [--quick] [--only=image.resize,pdf.extract]
// -> bench/results/operations.json (bench/quick/results with --quick or --only)
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { operations } from '../operations/index.js';
import { runTool } from '../tools/process/run-tool.js';
import { gsArgs } from '../tools/engines/gs.js';
import { QPDF_LOSSLESS } from '../tools/engines/qpdf.js';
import { mupdfProgramPath } from '../tools/engines/mutool.js';
import { ocrmypdfArgs } from '../tools/engines/ocrmypdf.js';
import { LINEAR_REGEXP_FLAG, MUPDF_JS_PROCESS, type MupdfJsRequest } from '../tools/engines/mupdf-js.js';
import { blocks as blocksWork, markdown as markdownWork } from '../workers/layout/index.js';
import { renderMarkdownHtml } from '../workers/pdf/from-markdown.js';
import { dataUrl } from '../workers/model/pages.js';
import { FAKE_MODEL, startFakeProvider, type ReceivedRequest, type Reply } from '../test/support/fake-provider.js';
import { docx } from '../test/support/office-fixtures.js';
import { acroFormPdf } from '../test/support/pdf-fixtures.js';
import { CORPUS, parseStepArgs, photoJpeg, progress, start, textImagePng, writeResult } from './lib/common.js';
import { startBenchService, form, type BenchService } from './lib/service.js';
import { startHttpFloor, type HttpFloor } from './lib/floor.js';
import { compare, type Comparison } from './lib/side-by-side.js';
import { ratio, summarize, type Summary } from './lib/stats.js';

interface Upload { bytes: Uint8Array; name: string; type: string }

interface OpCase {
  id: string;
  /** What the service call is compared with, in words for the report. */
  raw: string;
  input: string;
  files: Upload[];
  fields?: Record<string, string | number>;
  runRaw(scratch: string): Promise<void>;
  /** Part of the --quick subset. */
  quick?: boolean;
  /** A second row for the same operation on a long document, reported apart from the main rows. */
  longDocument?: boolean;
  /** More pairs than the default, for a row whose target is close. */
  pairs?: number;
}

const TIMEOUT = 120_000;
const PASSWORD = 'bench-secret-1';
const STRUCTURED_SCHEMA = JSON.stringify({
  type: 'object', additionalProperties: false, required: ['title', 'pageCount'],
  properties: { title: { type: 'string' }, pageCount: { type: 'integer' } },
});

interface ToolOptions { input?: Uint8Array; env?: Record<string, string> }
async function tool(name: string, args: string[], cwd: string, options: ToolOptions = {}): Promise<Uint8Array> {
  const result = await runTool(name, args, { cwd, timeoutMs: TIMEOUT, ...options });
  if (result.exitCode !== 0 && !(name === 'qpdf' && result.exitCode === 3)) throw new Error(`${name} exited with ${result.exitCode}`);
  return result.stdout;
}

/** The service's MuPDF.js child process, called as the raw tool: the same command line, no service around it. */
async function mupdfJs(scratch: string, command: MupdfJsRequest, input: string): Promise<void> {
  const request = path.join(scratch, 'request.json');
  await writeFile(request, JSON.stringify({ ...command, deadline: Date.now() + TIMEOUT }));
  await tool(process.execPath, [LINEAR_REGEXP_FLAG, MUPDF_JS_PROCESS, request, input, path.join(scratch, 'out.pdf')], scratch);
}

/** The fake provider's answers: what a well-behaved model returns for each request shape. */
function providerScript(request: ReceivedRequest): Reply {
  const name = request.responseFormat?.json_schema?.name;
  if (name === 'page_tables') return { json: { tables: [{ title: null, headers: ['Item', 'Qty'], rows: [['Paper', '12'], ['Toner', '3']] }] } };
  if (request.responseFormat) return { json: { title: 'Benchmark document', pageCount: 1 } };
  return { content: 'Recognised text of the page.' };
}

async function providerCall(baseUrl: string, png: Uint8Array, schemaName: string, schema: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body: JSON.stringify({
      model: FAKE_MODEL,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Extract.' }, { type: 'image_url', image_url: { url: dataUrl(png, 'image/png'), detail: 'high' } }] }],
      response_format: { type: 'json_schema', json_schema: { name: schemaName, schema, strict: true } },
    }),
  });
  if (res.status !== 200) throw new Error(`provider answered ${res.status}`);
  await res.json();
}

/** A loopback web site for from-url: its pages are set by the cases; the service reaches it through URL_FETCH_ALLOW. */
interface LoopbackSite { origin: string; hostPort: string; pages: Map<string, { type: string; bytes: Uint8Array }>; close(): Promise<void> }

async function startLoopbackSite(): Promise<LoopbackSite> {
  const pages = new Map<string, { type: string; bytes: Uint8Array }>();
  const server = http.createServer((req, res) => {
    const page = pages.get(req.url ?? '');
    if (!page) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': page.type }).end(page.bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const hostPort = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin: `http://${hostPort}`, hostPort, pages,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Chromium's own command line printing a page, as a user runs it: a fresh profile, no interception, no proxy. */
async function chromiumPrint(scratch: string, url: string): Promise<void> {
  await tool('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', `--user-data-dir=${scratch}/profile`,
    '--no-pdf-header-footer', `--print-to-pdf=${scratch}/out.pdf`, url], scratch);
}

async function cases(work: string, providerUrl: string, site: LoopbackSite): Promise<OpCase[]> {
  const photo = await photoJpeg();
  const textPng = await textImagePng();
  const file = async (relative: string) => new Uint8Array(await readFile(path.join(CORPUS, relative)));
  const latex4 = await file('004-pdflatex-4-pages/pdflatex-4-pages.pdf');
  const officeDocx = await docx();
  const outline4 = await file('006-pdflatex-outline/pdflatex-outline.pdf');
  const imagePdf = await file('018-base64-image/base64image.pdf');
  const writer1 = await file('002-trivial-libre-office-writer/002-trivial-libre-office-writer.pdf');
  const gdoc1 = await file('011-google-doc-document/google-doc-document.pdf');
  const put = async (name: string, bytes: Uint8Array) => { const p = path.join(work, name); await writeFile(p, bytes); return p; };
  const latexPath = await put('latex4.pdf', latex4);
  const outlinePath = await put('outline4.pdf', outline4);
  const imagePdfPath = await put('image.pdf', imagePdf);
  const writerPath = await put('writer1.pdf', writer1);
  const gdocPath = await put('gdoc1.pdf', gdoc1);
  const formPdf = new Uint8Array(acroFormPdf());
  const formPath = await put('form.pdf', formPdf);
  const formValues = { name: 'Ada Lovelace', agree: true, color: 'blue', country: 'Japan' };
  // A scanner's page: corpus 002 drawn at 200 dpi in grey and wrapped as an image-only PDF.
  await tool('mutool', ['draw', '-q', '-r', '200', '-c', 'gray', '-o', path.join(work, 'scan.png'), writerPath, '1'], work);
  await tool('mutool', ['convert', '-o', path.join(work, 'scanned1.pdf'), path.join(work, 'scan.png')], work);
  const scannedPath = path.join(work, 'scanned1.pdf');
  const scanned1 = new Uint8Array(await readFile(scannedPath));
  await tool('qpdf', ['--encrypt', PASSWORD, PASSWORD, '256', '--', latexPath, path.join(work, 'locked.pdf')], work);
  const locked = new Uint8Array(await readFile(path.join(work, 'locked.pdf')));
  const lockedPath = path.join(work, 'locked.pdf');
  // A long document next to the 4-page one: on a few milliseconds of qpdf, the service's fixed
  // cost per request (HTTP, multipart, job directory) is most of the ratio; on 117 pages it is not.
  const longDoc = await file('009-pdflatex-geotopo/GeoTopo-komprimiert.pdf');
  const longPath = await put('long.pdf', longDoc);
  await tool('qpdf', ['--encrypt', PASSWORD, PASSWORD, '256', '--', longPath, path.join(work, 'long-locked.pdf')], work);
  const longLockedPath = path.join(work, 'long-locked.pdf');
  const longLocked = new Uint8Array(await readFile(longLockedPath));
  const LONG = 'corpus 009 (117 pages, 1.8 MB)';
  const markdownText = Array.from({ length: 12 }, (_, i) => [
    `## Section ${i + 1}`, '',
    'The quarterly figures were reviewed by the committee before the meeting closed. Each region reported its own numbers, and the totals were checked twice. See [the report](https://example.com/report).', '',
    '- shipping delays explain most of the difference', '- the appendix has the raw measurements', '',
    '| Region | Units |', '|---|--:|', `| North | ${100 + i} |`, `| South | ${200 + i} |`, '',
  ].join('\n')).join('\n');
  const markdownBytes = new TextEncoder().encode(`# Benchmark report\n\n${markdownText}`);
  const htmlBytes = new TextEncoder().encode(renderMarkdownHtml(`# Benchmark report\n\n${markdownText}`, 'Benchmark'));
  site.pages.set('/', { type: 'text/html; charset=utf-8', bytes: htmlBytes });

  const jpeg = (bytes: Uint8Array, name = 'photo.jpg'): Upload => ({ bytes, name, type: 'image/jpeg' });
  const pdf = (bytes: Uint8Array, name = 'doc.pdf'): Upload => ({ bytes, name, type: 'application/pdf' });
  const decode = () => sharp(photo, { autoOrient: true, failOn: 'error' });
  const jpegtran = (transform: string[]) => (scratch: string) => tool('jpegtran', ['-copy', 'none', '-optimize', '-perfect', ...transform], scratch, { input: photo }).then(() => undefined);
  const gsBalanced = async (scratch: string, inputs: string[]) => {
    await tool('gs', gsArgs('balanced', path.join(scratch, 'gs.pdf'), inputs), scratch);
    await tool('qpdf', [...QPDF_LOSSLESS, path.join(scratch, 'gs.pdf'), path.join(scratch, 'packed.pdf')], scratch);
  };
  // merge's two commands: qpdf's merge, then the service's MuPDF program appending the second outline.
  const mergeWithOutlines = async (scratch: string, [first, firstPages]: [string, number], [second, secondPages]: [string, number]) => {
    const merged = path.join(scratch, 'merged.pdf');
    await tool('qpdf', ['--empty', '--object-streams=generate', '--pages', first, second, '--', merged], scratch);
    await tool('mutool', ['run', mupdfProgramPath('merge-outline'), merged, path.join(scratch, 'out.pdf'), String(firstPages), first, String(secondPages), second], scratch);
  };
  const renderFirstPage = (source: string, dpi: number, scratch: string, gray = false) =>
    tool('mutool', ['draw', '-q', '-r', String(dpi), ...(gray ? ['-c', 'gray'] : []), '-F', 'png', '-o', '-', source, '1'], scratch);
  const pageTablesSchema = (await import('../workers/model/tables.js')).PAGE_TABLES_SCHEMA as Record<string, unknown>;

  // pages, split, protect, unlock and extract on one document: the service's call and the same
  // qpdf or pdftotext command, with a page order and halves that fit the document's page count.
  interface BenchDocument { input: string; bytes: Uint8Array; path: string; pages: number; locked: Uint8Array; lockedPath: string }
  const documentCases = (doc: BenchDocument) => {
    const n = doc.pages;
    const half = Math.ceil(n / 2);
    const reorder = `${n},1-${n - 1}`;
    const cases: Record<'pages' | 'split' | 'protect' | 'unlock' | 'extract', OpCase> = {
      pages: {
        id: 'pdf.pages', input: doc.input, fields: { pages: reorder, rotate: 90 }, files: [pdf(doc.bytes)],
        raw: `qpdf --pages . ${reorder} -- --rotate=+90:1-z`,
        runRaw: async (scratch) => { await tool('qpdf', [doc.path, '--object-streams=generate', '--pages', '.', reorder, '--', '--rotate=+90:1-z', path.join(scratch, 'out.pdf')], scratch); },
      },
      split: {
        id: 'pdf.split', input: doc.input, fields: { ranges: `1-${half},${half + 1}-${n}` }, files: [pdf(doc.bytes)],
        raw: `qpdf --pages . 1-${half} and qpdf --pages . ${half + 1}-${n} (no ZIP)`,
        runRaw: async (scratch) => {
          await tool('qpdf', [doc.path, '--object-streams=generate', '--pages', '.', `1-${half}`, '--', path.join(scratch, 'p1.pdf')], scratch);
          await tool('qpdf', [doc.path, '--object-streams=generate', '--pages', '.', `${half + 1}-${n}`, '--', path.join(scratch, 'p2.pdf')], scratch);
        },
      },
      protect: {
        id: 'pdf.protect', input: doc.input, fields: { password: PASSWORD }, files: [pdf(doc.bytes)],
        raw: 'qpdf --object-streams=generate --encrypt PW PW 256',
        runRaw: async (scratch) => { await tool('qpdf', ['--object-streams=generate', '--encrypt', PASSWORD, PASSWORD, '256', '--', doc.path, path.join(scratch, 'out.pdf')], scratch); },
      },
      unlock: {
        id: 'pdf.unlock', input: `${doc.input}, AES-256 encrypted`, fields: { password: PASSWORD }, files: [pdf(doc.locked)],
        raw: 'qpdf --password=PW --decrypt --object-streams=generate',
        runRaw: async (scratch) => { await tool('qpdf', [`--password=${PASSWORD}`, '--decrypt', '--object-streams=generate', doc.lockedPath, path.join(scratch, 'out.pdf')], scratch); },
      },
      extract: {
        id: 'pdf.extract', input: doc.input, files: [pdf(doc.bytes)],
        raw: 'pdftotext -enc UTF-8 -q in -',
        runRaw: async (scratch) => { await tool('pdftotext', ['-enc', 'UTF-8', '-q', doc.path, '-'], scratch); },
      },
    };
    return cases;
  };
  const short = documentCases({ input: 'corpus 004 (4 pages)', bytes: latex4, path: latexPath, pages: 4, locked, lockedPath });
  const longCases = documentCases({
    input: LONG, bytes: longDoc, path: longPath, pages: 117, locked: longLocked, lockedPath: longLockedPath,
  });

  return [
    {
      // The headline case, with a target near the measured overhead: more pairs.
      id: 'image.resize', quick: true, pairs: 21, input: '12 MP JPEG (4032x3024)', fields: { width: 1024, format: 'webp' }, files: [jpeg(photo)],
      raw: 'sharp in-process: resize to 1024 px wide, WebP quality 90',
      runRaw: async () => { await decode().resize(1024).webp({ quality: 90 }).toBuffer(); },
    },
    {
      id: 'image.compress', input: '12 MP JPEG', fields: { quality: 80 }, files: [jpeg(photo)],
      raw: 'sharp in-process: JPEG quality 80 with mozjpeg',
      runRaw: async () => { await decode().jpeg({ quality: 80, mozjpeg: true }).toBuffer(); },
    },
    {
      // target_kb's cost: JPEG qualities tried until the best one at or under 500 KB is found.
      id: 'image.compress', input: '12 MP JPEG, target_kb=500', fields: { target_kb: 500 }, files: [jpeg(photo)], pairs: 5,
      raw: 'sharp in-process: one JPEG encode at quality 80 with mozjpeg (one step of the search)',
      runRaw: async () => { await decode().jpeg({ quality: 80, mozjpeg: true }).toBuffer(); },
    },
    {
      id: 'image.crop', input: '12 MP JPEG', fields: { x: 1000, y: 800, width: 1600, height: 1200 }, files: [jpeg(photo)],
      raw: 'sharp in-process: extract 1600x1200, JPEG quality 90',
      runRaw: async () => { await decode().extract({ left: 1000, top: 800, width: 1600, height: 1200 }).jpeg({ quality: 90 }).toBuffer(); },
    },
    {
      id: 'image.rotate', input: '12 MP JPEG', fields: { angle: 90 }, files: [jpeg(photo)],
      raw: 'jpegtran -perfect -rotate 90 (lossless, as the service does for JPEG)', runRaw: jpegtran(['-rotate', '90']),
    },
    {
      id: 'image.flip', input: '12 MP JPEG', fields: { direction: 'horizontal' }, files: [jpeg(photo)],
      raw: 'jpegtran -perfect -flip horizontal', runRaw: jpegtran(['-flip', 'horizontal']),
    },
    {
      id: 'image.ocr', input: '1600x520 PNG of 5 text lines', files: [{ bytes: textPng, name: 'text.png', type: 'image/png' }],
      raw: 'tesseract stdin stdout -l eng, one thread (OCR_ENGINE=tesseract)',
      runRaw: async (scratch) => { await tool('tesseract', ['stdin', 'stdout', '-l', 'eng'], scratch, { input: textPng, env: { OMP_THREAD_LIMIT: '1' } }); },
    },
    {
      id: 'pdf.compress', quick: true, input: 'corpus 018 (2.2 MB, 1 page, large image)', fields: { level: 'balanced' }, files: [pdf(imagePdf)],
      raw: 'qpdf (lossless pass) + gs pdfwrite /ebook + qpdf (pack), the service\'s three commands',
      runRaw: async (scratch) => {
        await tool('qpdf', [...QPDF_LOSSLESS, imagePdfPath, path.join(scratch, 'lossless.pdf')], scratch);
        await gsBalanced(scratch, [imagePdfPath]);
      },
    },
    {
      // target_kb's cost: the search runs the levels from the best quality down until one fits
      // (here lossless, balanced, then max at 21 KB), against one level's commands run once.
      id: 'pdf.compress', input: 'corpus 018, target_kb=30 (balanced gives 49 KB, max 21 KB)', fields: { target_kb: 30 }, files: [pdf(imagePdf)], pairs: 5,
      raw: 'the balanced level\'s commands once (qpdf lossless + gs /ebook + qpdf pack): one step of the search',
      runRaw: async (scratch) => {
        await tool('qpdf', [...QPDF_LOSSLESS, imagePdfPath, path.join(scratch, 'lossless.pdf')], scratch);
        await gsBalanced(scratch, [imagePdfPath]);
      },
    },
    {
      id: 'pdf.merge', input: 'corpus 004 + 006 (4 + 4 pages)', files: [pdf(latex4, 'a.pdf'), pdf(outline4, 'b.pdf')],
      raw: 'qpdf --empty --object-streams=generate --pages a b -- out, then mutool run with the service\'s script that appends b\'s outline (the service\'s two commands)',
      runRaw: (scratch) => mergeWithOutlines(scratch, [latexPath, 4], [outlinePath, 4]),
    },
    {
      id: 'pdf.merge-compress', input: 'corpus 004 + 018', fields: { level: 'balanced' }, files: [pdf(latex4, 'a.pdf'), pdf(imagePdf, 'b.pdf')],
      raw: 'qpdf merge with lossless packing + gs /ebook + qpdf pack, the service\'s commands run one after the other (as for compress)',
      runRaw: async (scratch) => {
        await tool('qpdf', ['--empty', '--pages', latexPath, imagePdfPath, '--', ...QPDF_LOSSLESS, path.join(scratch, 'merged.pdf')], scratch);
        await gsBalanced(scratch, [latexPath, imagePdfPath]);
      },
    },
    short.pages,
    short.split,
    short.protect,
    short.unlock,
    {
      id: 'pdf.redact', input: 'corpus 004 (4 pages)', fields: { text: JSON.stringify(['information']), regex: JSON.stringify(['[Tt]ext']) }, files: [pdf(latex4)],
      raw: 'the MuPDF.js redaction process (node mupdf-js-process.js) run directly on the file',
      runRaw: (scratch) => mupdfJs(scratch, { command: 'redact', request: { text: ['information'], regex: ['[Tt]ext'], areas: [], attachments: 'redact' } }, latexPath),
    },
    {
      id: 'pdf.sanitize', input: 'corpus 004 (4 pages)', files: [pdf(latex4)],
      raw: 'the MuPDF.js sanitizing process (node mupdf-js-process.js) run directly on the file',
      runRaw: (scratch) => mupdfJs(scratch, { command: 'sanitize', request: { keepLinks: true } }, latexPath),
    },
    {
      id: 'pdf.render', input: 'corpus 004 (4 pages)', fields: { dpi: 150 }, files: [pdf(latex4)],
      raw: 'mutool draw -r 150 -F png (no ZIP)',
      runRaw: async (scratch) => { await tool('mutool', ['draw', '-q', '-r', '150', '-F', 'png', '-o', path.join(scratch, 'page-%d.png'), latexPath], scratch); },
    },
    {
      id: 'pdf.images', input: 'corpus 018 (1 image)', files: [pdf(imagePdf)],
      raw: 'mutool extract -a -r, then each JPEG it wrote to PNG with sharp (no ZIP)',
      runRaw: async (scratch) => {
        const dir = await mkdtemp(path.join(scratch, 'images-'));
        await tool('mutool', ['extract', '-a', '-r', imagePdfPath], dir);
        for (const name of await readdir(dir)) {
          if (name.endsWith('.jpg')) await sharp(path.join(dir, name)).png().toFile(path.join(dir, `${name}.png`));
        }
        await rm(dir, { recursive: true, force: true });
      },
    },
    { ...short.extract, quick: true },
    {
      id: 'pdf.markdown', quick: true, input: 'corpus 004 (4 pages)', files: [pdf(latex4)],
      raw: 'the Markdown work function called in-process (mutool stext + the conversion), no HTTP, no pool, no payment',
      runRaw: async (scratch) => {
        const copy = path.join(scratch, 'input.pdf');
        await writeFile(copy, latex4);
        await markdownWork({
          operation: 'pdf.markdown', files: [{ bytes: latex4, path: copy, pages: 4 }], params: {}, jobDir: scratch,
          deadline: Date.now() + TIMEOUT, settings: { modelConcurrency: 1, modelDpi: 150, ocrEngine: 'tesseract', ocrLanguages: 'eng', maxZipBytes: 0 },
        });
      },
    },
    {
      id: 'pdf.blocks', input: 'corpus 004 (4 pages), chunk_chars=1500', fields: { chunk_chars: 1500 }, files: [pdf(latex4)],
      raw: 'the blocks work function called in-process (mutool stext + the conversion + chunks), no HTTP, no pool, no payment',
      runRaw: async (scratch) => {
        const copy = path.join(scratch, 'input.pdf');
        await writeFile(copy, latex4);
        await blocksWork({
          operation: 'pdf.blocks', files: [{ bytes: latex4, path: copy, pages: 4 }], params: { chunkChars: 1500 }, jobDir: scratch,
          deadline: Date.now() + TIMEOUT, settings: { modelConcurrency: 1, modelDpi: 150, ocrEngine: 'tesseract', ocrLanguages: 'eng', maxZipBytes: 0 },
        });
      },
    },
    {
      id: 'pdf.from-markdown', input: `generated Markdown (${Math.round(markdownBytes.length / 1024)} KB, 12 sections with tables)`, fields: { title: 'Benchmark' },
      files: [{ bytes: markdownBytes, name: 'doc.md', type: 'text/markdown' }],
      raw: 'markdown-it to the same HTML, then the weasyprint CLI',
      runRaw: async (scratch) => {
        const html = renderMarkdownHtml(new TextDecoder().decode(markdownBytes), 'Benchmark');
        await tool('weasyprint', ['-', path.join(scratch, 'out.pdf')], scratch, { input: new TextEncoder().encode(html) });
      },
    },
    {
      id: 'pdf.ocr', input: 'corpus 002 (1 page)', files: [pdf(writer1)],
      raw: 'mutool draw 300 dpi gray PNG + tesseract (OCR_ENGINE=tesseract)',
      runRaw: async (scratch) => {
        const png = await renderFirstPage(writerPath, 300, scratch, true);
        await tool('tesseract', ['stdin', 'stdout', '-l', 'eng', '--dpi', '300'], scratch, { input: png, env: { OMP_THREAD_LIMIT: '1' } });
      },
    },
    {
      id: 'pdf.searchable', input: 'corpus 002 scanned (1 page, 200 dpi grey image)', files: [pdf(scanned1)], pairs: 5,
      raw: 'ocrmypdf with the service\'s options (--skip-text --output-type pdf --optimize 0 --jobs 1, one tesseract thread)',
      runRaw: async (scratch) => {
        await tool('ocrmypdf', ocrmypdfArgs({ input: scannedPath, output: path.join(scratch, 'out.pdf'), languages: ['eng'] }), scratch, { env: { OMP_THREAD_LIMIT: '1' } });
      },
    },
    {
      id: 'pdf.tables', quick: true, input: 'corpus 011 (1 page)', files: [pdf(gdoc1)],
      raw: 'mutool draw 150 dpi + one chat completion to the same local fake provider',
      runRaw: async (scratch) => { await providerCall(providerUrl, await renderFirstPage(gdocPath, 150, scratch), 'page_tables', pageTablesSchema); },
    },
    {
      id: 'pdf.structured', input: 'corpus 011 (1 page), a 2-field schema', fields: { schema: STRUCTURED_SCHEMA }, files: [pdf(gdoc1)],
      raw: 'mutool draw 150 dpi + one chat completion to the same local fake provider',
      runRaw: async (scratch) => { await providerCall(providerUrl, await renderFirstPage(gdocPath, 150, scratch), 'extraction', JSON.parse(STRUCTURED_SCHEMA)); },
    },
    {
      // Both sides start a browser: the service starts one per job, about 2 s of the call on the development machine.
      id: 'pdf.from-html', input: `the from-markdown document's HTML (${Math.round(htmlBytes.length / 1024)} KB)`, files: [{ bytes: htmlBytes, name: 'page.html', type: 'text/html' }],
      raw: 'chromium --headless --print-to-pdf on the same page (a fresh profile, no interception, no proxy)',
      runRaw: async (scratch) => {
        const page = path.join(scratch, 'page.html');
        await writeFile(page, htmlBytes);
        await chromiumPrint(scratch, `file://${page}`);
      },
    },
    {
      // The same page served by a loopback site named in URL_FETCH_ALLOW: the service's browser gets it
      // through the worker's channel and the vetted fetcher, the raw browser straight from the site.
      id: 'pdf.from-url', input: `the from-html row's page on a loopback site (${Math.round(htmlBytes.length / 1024)} KB)`, files: [],
      fields: { url: `${site.origin}/` },
      raw: 'chromium --headless --print-to-pdf on the same URL (a fresh profile, no interception, no proxy)',
      runRaw: (scratch) => chromiumPrint(scratch, `${site.origin}/`),
    },
    {
      id: 'pdf.stamp', input: 'corpus 004 (4 pages), "Page {n} of {total}"', fields: { text: 'Page {n} of {total}', position: 'bottom' }, files: [pdf(latex4)],
      raw: 'the MuPDF.js stamping process (node mupdf-js-process.js) run directly on the file',
      runRaw: (scratch) => mupdfJs(scratch, {
        command: 'stamp',
        request: { text: 'Page {n} of {total}', numbering: { start: 1 }, position: 'bottom', fontSize: 12, color: '#000000', opacity: 1, rotation: 0, layer: 'over' },
      }, latexPath),
    },
    {
      id: 'pdf.form-fields', input: 'generated form (2 pages, 7 fields)', files: [pdf(formPdf)],
      raw: 'the MuPDF.js process reading the form (node mupdf-js-process.js), once; the service reads it before payment and answers that reading',
      runRaw: (scratch) => mupdfJs(scratch, { command: 'form-fields' }, formPath),
    },
    {
      id: 'pdf.form-fill', input: 'generated form (2 pages), 4 values', fields: { values: JSON.stringify(formValues) }, files: [pdf(formPdf)],
      raw: 'the MuPDF.js process filling the form, once (the service also reads the form before payment, for the quote and again for the paid call)',
      runRaw: (scratch) => mupdfJs(scratch, { command: 'form-fill', request: { values: formValues, flatten: false } }, formPath),
    },
    {
      id: 'pdf.flatten', input: 'generated form (2 pages)', files: [pdf(formPdf)],
      raw: 'the MuPDF.js process flattening, once (the service also reads the form before payment, to refuse XFA)',
      runRaw: (scratch) => mupdfJs(scratch, { command: 'flatten' }, formPath),
    },
    {
      id: 'pdf.metadata', input: 'corpus 004 (4 pages)', files: [pdf(latex4)],
      raw: 'the MuPDF.js process reading Info and XMP (node mupdf-js-process.js) on the file',
      runRaw: (scratch) => mupdfJs(scratch, { command: 'metadata' }, latexPath),
    },
    {
      id: 'pdf.set-metadata', input: 'corpus 004 (4 pages)', fields: { title: 'Benchmark', author: 'Ada' }, files: [pdf(latex4)],
      raw: 'the MuPDF.js process writing Info and XMP on the file',
      runRaw: (scratch) => mupdfJs(scratch, { command: 'set-metadata', request: { title: 'Benchmark', author: 'Ada' }, now: new Date().toISOString() }, latexPath),
    },
    {
      id: 'pdf.from-images', input: '12 MP JPEG + 1600x520 PNG (2 pages)', files: [jpeg(photo), { bytes: textPng, name: 'text.png', type: 'image/png' }],
      raw: 'mutool convert -o out.pdf photo.jpg text.png (Debian\'s MuPDF 1.21; it keeps the JPEG\'s bytes too, but shows an Adobe CMYK JPEG inverted)',
      runRaw: async (scratch) => {
        await writeFile(path.join(scratch, 'photo.jpg'), photo);
        await writeFile(path.join(scratch, 'text.png'), textPng);
        await tool('mutool', ['convert', '-o', path.join(scratch, 'out.pdf'), path.join(scratch, 'photo.jpg'), path.join(scratch, 'text.png')], scratch);
      },
    },
    {
      id: 'office.pdf', input: 'generated DOCX (2 pages)', files: [{ bytes: officeDocx, name: 'report.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' }],
      raw: 'soffice --headless --convert-to pdf on the same file, with a fresh profile of its own (as every service job has)',
      runRaw: async (scratch) => {
        const input = path.join(scratch, 'report.docx');
        await writeFile(input, officeDocx);
        await tool('soffice', ['--headless', '--norestore', `-env:UserInstallation=file://${scratch}/profile`, '--convert-to', 'pdf', '--outdir', scratch, input], scratch);
      },
    },
    // The same commands on the long document (see LONG above).
    {
      id: 'pdf.merge', longDocument: true, input: `${LONG} + corpus 006`, files: [pdf(longDoc, 'a.pdf'), pdf(outline4, 'b.pdf')],
      raw: 'qpdf --empty --object-streams=generate --pages a b -- out, then the service\'s outline script (mutool run)',
      runRaw: (scratch) => mergeWithOutlines(scratch, [longPath, 117], [outlinePath, 4]),
    },
    ...Object.values(longCases).map((c) => ({ ...c, longDocument: true })),
  ];
}

export interface OperationResult extends Comparison {
  id: string;
  input: string;
  raw: string;
  /** Paid request minus the facilitator's verify and settle: upload, checks, pool, work, download. */
  processingRatio: number | undefined;
  /** What the payment path added per call (quote request, signing, verify, settle), median ms. */
  paymentMs: number;
  /** The HTTP floor for this row's upload and result (see lib/floor.ts), measured in the same rounds as the pairs. */
  floorMs: Summary;
  /** (raw + floor) / raw at the medians: the best ratio any HTTP service could show on this row here. */
  floorRatio: number | undefined;
  /** The service's processing time beyond raw + floor, median ms: what the service itself adds. */
  beyondFloorMs: number;
  longDocument?: boolean;
}

let documents = 0;
/**
 * Each paid call sends a PDF the service has not seen, as users do: a unique comment after %%EOF
 * (which every reader ignores) keeps the quote from finding an earlier call's inspection in the
 * service's cache. The quote and its paid retry still carry identical bytes, as x402 clients send.
 */
function asNewDocument(upload: Upload): Upload {
  if (upload.type !== 'application/pdf') return upload;
  return { ...upload, bytes: Buffer.concat([upload.bytes, Buffer.from(`\n% benchmark call ${++documents}\n`)]) };
}

async function main(): Promise<void> {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  // A run of some rows is a check, not the committed table: it goes where --quick runs go.
  const args = only ? { ...parseStepArgs(), outDir: parseStepArgs(['--quick']).outDir } : parseStepArgs();
  const began = start();
  const work = await mkdtemp(path.join('/dev/shm', 'paydoc-bench-ops-'));
  const fake = await startFakeProvider(providerScript);
  const site = await startLoopbackSite();
  let bench: BenchService | undefined;
  let floor: HttpFloor | undefined;
  const results: OperationResult[] = [];
  const failures: Array<{ id: string; error: string }> = [];
  try {
    const all = await cases(work, fake.baseUrl, site);
    const missing = operations.map((o) => o.id).filter((id) => !all.some((c) => c.id === id && !c.longDocument));
    if (missing.length) throw new Error(`no benchmark case for ${missing.join(', ')}`);
    const chosen = all.filter((c) => (only ? only.includes(c.id) : !args.quick || c.quick));
    bench = await startBenchService({
      config: { modelBaseUrl: fake.baseUrl, modelApiKey: 'sk-bench', modelName: FAKE_MODEL, ocrEngine: 'tesseract', urlFetchAllow: site.hostPort },
    });
    const service = bench;
    const bare = floor = await startHttpFloor();
    for (const [index, c] of chosen.entries()) {
      const route = operations.find((o) => o.id === c.id)!.path;
      const scratchRoot = await mkdtemp(path.join(work, 'raw-'));
      let scratch = '';
      let reply = { bytes: 0, mediaType: '' };
      try {
        const full = { warmup: 2, runs: c.pairs ?? 9, maxMs: c.pairs ? 60_000 : 15_000 };
        const runs = args.quick ? { warmup: 1, runs: 3, maxMs: 10_000 } : full;
        const comparison = await compare(c.id, {
          label: 'service (paid)',
          // The service's workers run libvips with one thread each (the pool gives the parallelism).
          prepare: () => sharp.concurrency(1),
          run: async () => {
            const r = await service.paidCall(route, () => form(c.files.map(asNewDocument), c.fields));
            reply = { bytes: r.body.byteLength, mediaType: r.mediaType };
            return {
              quoteMs: r.quoteMs, signMs: r.signMs, paidMs: r.paidMs, verifyMs: r.verifyMs, settleMs: r.settleMs, workMs: r.workMs,
              processingMs: r.paidMs - r.verifyMs - r.settleMs,
              paymentMs: r.quoteMs + r.signMs + r.verifyMs + r.settleMs,
            };
          },
        }, {
          label: 'raw tool',
          // sharp's default: one libvips thread per core. The scratch directory is made and removed
          // outside the timing: a command run from a shell does not pay for either.
          prepare: () => { sharp.concurrency(0); scratch = mkdtempSync(path.join(scratchRoot, 'run-')); },
          run: () => c.runRaw(scratch),
          after: () => rmSync(scratch, { recursive: true, force: true }),
        }, runs, [{
          label: 'HTTP floor',
          // Timed from the request on, as the paid request's processing time is.
          run: async () => ({ requestMs: await bare.call(c.files.map(asNewDocument), c.fields, reply) }),
        }]);
        const floorMs = comparison.also[0].parts.requestMs!;
        const processing = comparison.a.parts.processingMs!;
        const result: OperationResult = {
          ...comparison, id: c.id, input: c.input, raw: c.raw, ...(c.longDocument ? { longDocument: true } : {}),
          processingRatio: ratio(processing.median, comparison.b.ms.median),
          paymentMs: comparison.a.parts.paymentMs!.median,
          floorMs, floorRatio: ratio(comparison.b.ms.median + floorMs.median, comparison.b.ms.median),
          beyondFloorMs: Math.round((processing.median - comparison.b.ms.median - floorMs.median) * 10) / 10,
        };
        results.push(result);
        progress(`[${index + 1}/${chosen.length}] ${(c.id + (c.longDocument ? ' (long)' : '')).padEnd(20)} service ${fmt(result.a.ms.median)} ms, raw ${fmt(result.b.ms.median)} ms, ratio ${result.ratio ?? '-'}, without payment ${fmt(processing.median)} ms (x${result.processingRatio ?? '-'}), HTTP floor ${fmt(floorMs.median)} ms (best x${result.floorRatio ?? '-'}), beyond it ${result.beyondFloorMs} ms`);
      } catch (err) {
        failures.push({ id: c.id, error: err instanceof Error ? err.message.slice(0, 300) : String(err) });
        progress(`[${index + 1}/${chosen.length}] ${c.id}: FAILED ${failures.at(-1)!.error}`);
      } finally {
        await rm(scratchRoot, { recursive: true, force: true });
      }
    }
  } finally {
    await bench?.stop();
    await floor?.stop();
    await fake.close();
    await site.close();
    await rm(work, { recursive: true, force: true });
  }
  const main = results.filter((r) => !r.longDocument);
  const long = results.filter((r) => r.longDocument);
  const medianOf = (rows: OperationResult[], pick: (r: OperationResult) => number | undefined) =>
    summarize(rows.map((r) => pick(r) ?? Number.NaN).filter(Number.isFinite)).median;
  const file = await writeResult(args, 'operations', {
    method: 'Each operation: warm-up calls of each side, then pairs in alternating order (service then raw, raw then service, ...). '
      + 'The service side is the whole paid call with the standard @x402/fetch client against the real service on loopback, '
      + 'paying on the local Base chain (anvil) through the local facilitator: the unpaid request and its 402 quote, signing, '
      + 'the paid request (upload, checks, verify, work in the worker pool, settle on chain, download). processingMs is the paid '
      + 'request minus the facilitator\'s verify and settle; paymentMs is quote + signing + verify + settle. The raw side runs the '
      + 'same commands on the same input from the benchmark process, writing to a RAM disk (a scratch directory made and removed outside '
      + 'the timing); a binary is started through the '
      + 'runner\'s small launcher process, as from a shell, so the raw side does not pay for forking the large benchmark process '
      + '(sharp runs in-process). Where the service does more than one command for a result (compress, merge\'s outline pass, '
      + 'JPEG to PNG), the raw side runs the same steps. The four model operations use a local '
      + 'fake OpenAI-compatible provider (test/support/fake-provider.ts) that answers at once; OCR uses the local tesseract engine; '
      + 'from-url prints a page of a loopback site named in URL_FETCH_ALLOW, which the raw browser loads directly. '
      + 'In every round a third side, the HTTP floor, runs with the same files and fields: a bare hapi route with the service\'s multipart '
      + 'settings, called with the same fetch client the way the x402 client sends a paid retry, that takes the uploads as the service does '
      + 'and answers a body of the size and media type of the service\'s result, doing nothing else (bench/lib/floor.ts). Raw plus floor is the best any HTTP service could reach on this machine; '
      + 'beyondFloorMs is what the service adds on top (checks, job directory, pool hand-off, reading the result back).',
    summary: {
      operations: main.length,
      medianRatio: medianOf(main, (r) => r.ratio),
      medianProcessingRatio: medianOf(main, (r) => r.processingRatio),
      medianFloorRatio: medianOf(main, (r) => r.floorRatio),
      medianBeyondFloorMs: medianOf(main, (r) => r.beyondFloorMs),
      longDocument: {
        operations: long.length,
        medianProcessingRatio: medianOf(long, (r) => r.processingRatio),
        maxProcessingRatio: Math.max(...long.map((r) => r.processingRatio ?? 0)),
        medianBeyondFloorMs: medianOf(long, (r) => r.beyondFloorMs),
      },
    },
    operations: results,
    failures,
  }, began);
  progress(`wrote ${path.relative(process.cwd(), file)}`);
  if (failures.length) process.exitCode = 1;
}

function fmt(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms.toFixed(1);
}

await main();

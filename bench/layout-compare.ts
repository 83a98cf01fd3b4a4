// The layout engine's output on every page of the Markdown benchmark, written one file per
// document, and compared file by file with an earlier run: a refactoring of the engine is shown
// to change nothing when every file is byte-identical.
//
//   node dist/bench/layout-compare.js --out=/tmp/layout-before
//   node dist/bench/layout-compare.js --out=/tmp/layout-after --against=/tmp/layout-before [--scanned] [--stext-cache=<dir>]
//
// Each benchmark page (bench/markdown/pages.ts: 100 ground-truth pages, each typeset in every style: tuning, held-out and unseen)
// is read once by mutool, as the engine reads it (readStextChunks), and the structured text and
// drawings are cached in the temporary folder: what is compared is the layout engine alone. For
// each PDF, <out>/<style>/<id>.md is the Markdown as /v1/pdf/markdown assembles it (scanned pages
// left as notes) and <id>.tables.json the tables as /v1/pdf/tables returns them on the local
// engine. --scanned adds the benchmark's scanned subset (20 pages in each style, as its
// markdown-scanned step): each page rendered at 200 dpi, its hOCR from tesseract cached, then
// read by the engine as the scanned path does (<out>/scanned/<style>/<id>.md).
// Each document is also scored against its ground truth (bench/markdown/metrics.ts, scorePage:
// the benchmark's overall, the mean of NID, TEDS and MHS) into <out>/scores.json; against an
// earlier run, every page whose score fell is named, and each set of styles (tuning, held-out,
// unseen) is summed up by column count. --styles=a,b limits the run to some styles.
// <id>.blocks.json is the answer of /v1/pdf/blocks (with chunks of BLOCK_CHUNK_CHARS). --real adds every
// PDF of the shared real-file corpora (../shared/corpus/sample-files and robustness) read the same
// three ways, as real/<corpus>/<file>.{md,tables,blocks}; a PDF mutool cannot read is written as its refusal.
// Exits 1 when a file differs from, or is missing against, the earlier run.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile, copyFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { warmLauncher } from '../tools/process/run-tool.js';
import type { Job } from '../core/job.js';
import { renderPage, TESSERACT_DPI, TESSERACT_MAX_SIDE } from '../workers/model/pages.js';
import { tesseractHocr } from '../tools/engines/tesseract.js';
import { layoutStext, markdownOf, type PageDrawing } from '../workers/layout/convert.js';
import { readStextChunks } from '../workers/layout/index.js';
import { rulesOf } from '../workers/layout/rules.js';
import { hocrFragments, pngSize, snapSizes } from '../workers/layout/scanned.js';
import { tablesOfStext, type PageTable } from '../workers/layout/tables.js';
import { documentBlocks, type LaidOutBlock, type PageOut } from '../workers/layout/blocks.js';
import { chunksOf } from '../workers/layout/chunks.js';
import { ServiceError } from '../core/errors.js';
import { CACHE, groundTruth, pageCount, scanPdf, STYLES, stylePage } from './markdown/pages.js';
import { scorePage, type PageScores } from './markdown/metrics.js';

warmLauncher();
// --stext-cache=<dir> reads the PDFs again into another folder (mutool's reading checked too).
const STEXT_CACHE = process.argv.find((a) => a.startsWith('--stext-cache='))?.slice('--stext-cache='.length) ?? path.join(os.tmpdir(), 'paydoc-layout-compare');

interface Chunk { xml: string; drawings: PageDrawing[]; first: number; last: number }
interface Read { pages: number; chunks: Chunk[] }

function job(jobDir: string, pdf: string, pages: number): Job {
  return {
    operation: 'pdf.markdown', params: {}, jobDir, deadline: Date.now() + 600_000,
    files: [{ bytes: new Uint8Array(), path: pdf, pages }],
    settings: { modelConcurrency: 1, modelDpi: 150, ocrEngine: 'tesseract', ocrLanguages: 'eng', maxZipBytes: 0, markdownOcr: 'off' },
  };
}

/** mutool's structured text and drawings of one PDF, read once and cached by the PDF's content. */
async function stextOf(pdf: string): Promise<Read> {
  const bytes = await readFile(pdf);
  const key = createHash('sha256').update(bytes).digest('hex').slice(0, 24);
  const cached = path.join(STEXT_CACHE, 'stext', `${key}.json`);
  if (existsSync(cached)) return JSON.parse(await readFile(cached, 'utf8')) as Read;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-layout-job-'));
  try {
    await copyFile(pdf, path.join(dir, 'input.pdf'));
    const pages = await pageCount(pdf);
    const chunks: Chunk[] = [];
    for await (const chunk of readStextChunks(job(dir, path.join(dir, 'input.pdf'), pages), path.join(dir, 'input.pdf'), pages, 'too much text')) chunks.push(chunk);
    const read = { pages, chunks };
    await mkdir(path.dirname(cached), { recursive: true });
    await writeFile(cached, JSON.stringify(read));
    return read;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The Markdown as the work function assembles it from its chunks (index.ts, `markdown`). */
function markdownOfChunks(chunks: Chunk[]): string {
  const body = chunks.map(({ xml, drawings, first }) => markdownOf(layoutStext(xml, drawings, first))).filter((p) => p.trim()).join('\n');
  return body.trim() ? body : '(NO_CONTENT)\n';
}

/** The tables as the local tables engine returns them (tables.ts, `localTables`). */
function tablesOfChunks(read: Read): string {
  const tables: PageTable[] = [];
  let scanned = 0;
  for (const { xml, drawings, first } of read.chunks) {
    const chunk = tablesOfStext(xml, drawings, first);
    scanned += chunk.pagesWithoutText;
    tables.push(...chunk.tables);
  }
  return scanned === read.pages ? '(NO_CONTENT)\n' : JSON.stringify({ tables });
}

const BLOCK_CHUNK_CHARS = 1000;

/** The blocks answer as the blocks work function assembles it (index.ts, `blocks`). */
function blocksOfChunks(read: Read): string {
  const found: LaidOutBlock[] = [];
  const pages: PageOut[] = [];
  for (const { xml, drawings, first } of read.chunks) {
    const chunk = documentBlocks(layoutStext(xml, drawings, first), drawings);
    found.push(...chunk.blocks);
    pages.push(...chunk.pages);
  }
  if (!found.some((b) => b.out.text)) return '(NO_CONTENT)\n';
  return JSON.stringify({ pageCount: read.pages, pages, blocks: found.map((b) => b.out), chunks: chunksOf(found, BLOCK_CHUNK_CHARS) });
}

const REAL_CORPORA = ['sample-files', 'robustness'];

/** Every PDF under a folder, by path relative to it, in name order. */
async function pdfsUnder(dir: string, prefix = ''): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  const found: string[] = [];
  for (const entry of (await readdir(path.join(dir, prefix), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const name = path.join(prefix, entry.name);
    if (entry.isDirectory()) found.push(...await pdfsUnder(dir, name));
    else if (entry.name.toLowerCase().endsWith('.pdf')) found.push(name);
  }
  return found;
}

/**
 * tesseract's hOCR and the rendered width of each scanned page of a PDF (as readScannedPages
 * renders and reads it), cached by the PDF's content; null for a page the engine does not OCR.
 */
async function hocrOf(pdf: string, read: Read): Promise<({ hocr: string; width: number } | null)[]> {
  const key = createHash('sha256').update(await readFile(pdf)).digest('hex').slice(0, 24);
  const cached = path.join(STEXT_CACHE, 'hocr', `${key}.json`);
  if (existsSync(cached)) return JSON.parse(await readFile(cached, 'utf8')) as ({ hocr: string; width: number } | null)[];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-layout-job-'));
  try {
    await copyFile(pdf, path.join(dir, 'input.pdf'));
    const input = job(dir, path.join(dir, 'input.pdf'), read.pages);
    const pages = read.chunks.flatMap(({ xml, drawings, first }) => layoutStext(xml, drawings, first).pages);
    const hocr: ({ hocr: string; width: number } | null)[] = [];
    for (const [index, page] of pages.entries()) {
      if (page.scan === 'none') { hocr.push(null); continue; }
      const png = await renderPage(input, index + 1, { dpi: TESSERACT_DPI, maxSide: TESSERACT_MAX_SIDE, gray: true });
      const { width } = png.length > 24 ? pngSize(png) : { width: 0 };
      if (!(width > 0 && page.width > 0)) { hocr.push({ hocr: '', width }); continue; }
      hocr.push({ hocr: await tesseractHocr(input, png, { dpi: Math.round(72 / (page.width / width)) }), width });
    }
    await mkdir(path.dirname(cached), { recursive: true });
    await writeFile(cached, JSON.stringify(hocr));
    return hocr;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The Markdown of a scanned PDF as the scanned path makes it (scanned.ts, readScannedPages), from cached hOCR. */
function scannedMarkdown(read: Read, hocr: ({ hocr: string; width: number } | null)[]): string {
  const parts = read.chunks.map(({ xml, drawings, first }) => {
    const layout = layoutStext(xml, drawings, first);
    for (const [index, page] of layout.pages.entries()) {
      if (page.scan === 'none') continue;
      const { hocr: text, width } = hocr[first - 1 + index] ?? { hocr: '', width: 0 };
      if (!(width > 0 && page.width > 0)) continue;
      const fragments = hocrFragments(text, page.width / width);
      if (fragments.length) {
        page.fragments = fragments;
        page.rules = rulesOf([]);
        page.ocr = 'read';
      } else {
        page.ocr = 'empty';
      }
    }
    snapSizes(layout.pages.filter((p) => p.ocr === 'read').flatMap((p) => p.fragments));
    return markdownOf(layout);
  });
  const body = parts.filter((p) => p.trim()).join('\n');
  return body.trim() ? body : '(NO_CONTENT)\n';
}

const fmt = (v: number | null) => (v === null ? '–' : v.toFixed(3));

/** The benchmark's page means (NID over every page, TEDS over pages with tables, MHS over pages with headings) and their mean. */
function overallOf(rows: PageScores[]): { overall: number; nid: number | null; teds: number | null; mhs: number | null } {
  const mean = (key: 'nid' | 'teds' | 'mhs') => {
    const values = rows.map((r) => r[key]).filter((v): v is number => v !== null);
    return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
  };
  const nid = mean('nid'), teds = mean('teds'), mhs = mean('mhs');
  const parts = [nid, teds, mhs].filter((v): v is number => v !== null);
  return { overall: parts.reduce((a, b) => a + b, 0) / Math.max(1, parts.length), nid, teds, mhs };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const out = arg('out');
  if (!out) throw new Error('--out=<folder> is required');
  const against = arg('against');
  const all = await groundTruth();
  await mkdir(CACHE, { recursive: true });
  const files: string[] = [];
  let pages = 0;
  const write = async (name: string, text: string) => {
    await mkdir(path.dirname(path.join(out, name)), { recursive: true });
    await writeFile(path.join(out, name), text);
    files.push(name);
  };
  const only = arg('styles')?.split(',');
  const styles = STYLES.filter((s) => !only || only.includes(s.id));
  const scores: Record<string, number> = {};
  const byGroup = new Map<string, PageScores[]>();
  for (const style of styles) {
    for (const [id, markdown] of all) {
      const { pdf, truth } = await stylePage(style, id, markdown);
      const read = await stextOf(pdf);
      pages += read.pages;
      const output = markdownOfChunks(read.chunks);
      await write(`${style.id}/${id}.md`, output);
      await write(`${style.id}/${id}.tables.json`, tablesOfChunks(read));
      await write(`${style.id}/${id}.blocks.json`, blocksOfChunks(read));
      const score = scorePage(truth, output);
      scores[`${style.id}/${id}`] = overallOf([score]).overall;
      const group = `${style.set}, ${style.columns} column${style.columns > 1 ? 's' : ''}`;
      byGroup.set(group, [...(byGroup.get(group) ?? []), score]);
    }
    process.stderr.write(`${style.id}: ${all.size} documents\n`);
  }
  let scannedPages = 0;
  if (args.includes('--scanned')) {
    // The benchmark's scanned subset (run.ts, scannedMain with --limit=20): 10 pages with tables, 10 without.
    const ids = [...all.keys()];
    const withTables = ids.filter((id) => all.get(id)!.includes('<table'));
    const chosen = [...withTables.slice(0, 10), ...ids.filter((id) => !withTables.includes(id)).slice(0, 10)].sort();
    for (const style of styles) {
      for (const id of chosen) {
        const scan = await scanPdf((await stylePage(style, id, all.get(id)!)).pdf);
        const read = await stextOf(scan);
        scannedPages += read.pages;
        await write(`scanned/${style.id}/${id}.md`, scannedMarkdown(read, await hocrOf(scan, read)));
      }
      process.stderr.write(`scanned ${style.id}: ${chosen.length} documents\n`);
    }
  }
  let realPages = 0;
  if (args.includes('--real')) {
    const corpusRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../shared/corpus');
    for (const corpus of REAL_CORPORA) {
      const pdfs = await pdfsUnder(path.join(corpusRoot, corpus));
      for (const name of pdfs) {
        const base = `real/${corpus}/${name}`;
        let read: Read;
        try {
          read = await stextOf(path.join(corpusRoot, corpus, name));
        } catch (error) {
          await write(`${base}.md`, `(refused: ${error instanceof ServiceError ? error.code : String(error)})\n`);
          continue;
        }
        realPages += read.pages;
        const guarded = (make: () => string) => { try { return make(); } catch (error) { return `(threw: ${String(error)})\n`; } };
        await write(`${base}.md`, guarded(() => markdownOfChunks(read.chunks)));
        await write(`${base}.tables.json`, guarded(() => tablesOfChunks(read)));
        await write(`${base}.blocks.json`, guarded(() => blocksOfChunks(read)));
      }
      process.stderr.write(`real ${corpus}: ${pdfs.length} PDFs\n`);
    }
  }
  pages += realPages;
  const documents = files.filter((f) => f.endsWith('.md')).length;
  console.log(`${documents} documents written to ${out}: ${pages} text-layer pages (Markdown and tables), ${scannedPages} scanned pages`);
  await writeFile(path.join(out, 'scores.json'), JSON.stringify(scores, null, 1));
  for (const [group, rows] of [...byGroup].sort()) {
    const s = overallOf(rows);
    console.log(`${group.padEnd(22)} ${String(rows.length).padStart(4)} pages  overall ${s.overall.toFixed(3)}  NID ${fmt(s.nid)}  TEDS ${fmt(s.teds)}  MHS ${fmt(s.mhs)}`);
  }
  if (!against) return;
  if (existsSync(path.join(against, 'scores.json'))) {
    const before = JSON.parse(await readFile(path.join(against, 'scores.json'), 'utf8')) as Record<string, number>;
    const changed = Object.entries(scores).filter(([page, score]) => before[page] !== undefined && Math.abs(score - before[page]!) > 1e-9);
    const worse = changed.filter(([page, score]) => score < before[page]!).sort((a, b) => (a[1] - before[a[0]]!) - (b[1] - before[b[0]]!));
    console.log(`scores: ${changed.length - worse.length} pages better, ${worse.length} worse than ${against}`);
    for (const [page, score] of worse) console.log(`  worse: ${page} ${before[page]!.toFixed(3)} -> ${score.toFixed(3)}`);
  }
  const differing: string[] = [];
  for (const name of files) {
    const before = path.join(against, name);
    if (!existsSync(before) || !(await readFile(before)).equals(await readFile(path.join(out, name)))) differing.push(name);
  }
  if (differing.length) {
    console.log(`${differing.length} of ${files.length} files differ from ${against}:\n${differing.join('\n')}`);
    process.exit(1);
  }
  console.log(`all ${files.length} files identical to ${against} (${documents} documents, ${pages + scannedPages} pages)`);
}

await main();

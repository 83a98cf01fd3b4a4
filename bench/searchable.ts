// Searchable PDFs: the CPU time per scanned page of OCRmyPDF as /v1/pdf/searchable runs it,
// beside tesseract as /v1/pdf/ocr runs it locally (mutool at 300 dpi, then tesseract with one
// thread), on the same pages: ground-truth pages of the Markdown benchmark typeset by WeasyPrint
// and scanned at 200 dpi in grey, with the word recall of each against the ground truth (for
// OCRmyPDF, of pdftotext on its output).
//   node dist/bench/searchable.js [--quick] [--pages=N]   -> bench/results/searchable.json
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import MarkdownIt from 'markdown-it';
import type { Job } from '../core/job.js';
import { pdfOcr } from '../workers/model/ocr.js';
import { runTool, runToolsInThisProcess } from '../tools/process/run-tool.js';
import { ocrmypdfArgs } from '../tools/engines/ocrmypdf.js';
import { groundTruthText, wordRecall } from '../test/support/word-recall.js';
import { ROOT, parseStepArgs, progress, start, writeResult } from './lib/common.js';

// CPU time is read from the children this process waits for (/proc/self/stat cutime), so the
// tools start from here rather than from a launcher process.
runToolsInThisProcess();

const GROUND_TRUTH = path.resolve(ROOT, '../shared/corpus/markdown-gt');
const STYLE = '@page{size:A4;margin:2.2cm 2cm} body{font:11pt/1.4 "DejaVu Serif"} h1{font-size:17pt}';

/** CPU seconds of finished children (and theirs): independent of other load on the machine. */
async function childCpuSeconds(): Promise<number> {
  const stat = await readFile('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

async function tool(
  name: string, args: string[], cwd: string, options: { input?: Uint8Array; env?: Record<string, string> } = {},
): Promise<Buffer> {
  const result = await runTool(name, args, { cwd, timeoutMs: 300_000, maxStdout: 256 * 1024 * 1024, ...options });
  if (result.exitCode !== 0) throw new Error(`${name} exited with ${result.exitCode}`);
  return Buffer.from(result.stdout);
}

async function measure<T>(fn: () => Promise<T>): Promise<{ value: T; cpu: number; wall: number }> {
  const cpuBefore = await childCpuSeconds();
  const started = performance.now();
  const value = await fn();
  return { value, cpu: (await childCpuSeconds()) - cpuBefore, wall: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const args = parseStepArgs();
  const began = start();
  const count = Number(process.argv.find((a) => a.startsWith('--pages='))?.slice(8) ?? (args.quick ? 3 : 12));
  const work = await mkdtemp(path.join('/dev/shm', 'paydoc-bench-searchable-'));
  try {
    const ids = (await readdir(GROUND_TRUTH)).filter((f) => f.endsWith('.md')).sort().slice(0, count * 2);
    const pages: Array<{ id: string; truth: string; scan: string }> = [];
    const md = new MarkdownIt({ html: true });
    for (const file of ids) {
      if (pages.length === count) break;
      const markdown = await readFile(path.join(GROUND_TRUTH, file), 'utf8');
      // Pages of running text, as scanners mostly see them; tables are the Markdown benchmark's subject.
      if (markdown.includes('<table') || markdown.split(/\s+/).length < 100) continue;
      const id = file.replace(/\.md$/, '');
      const html = `<!doctype html><html><head><meta charset="utf-8"><style>${STYLE}</style></head><body>${md.render(markdown).replace(/<img\b[^>]*>/gi, '')}</body></html>`;
      await tool('weasyprint', ['-', `${id}.pdf`], work, { input: new TextEncoder().encode(html) });
      await tool('mutool', ['draw', '-q', '-r', '200', '-c', 'gray', '-o', `${id}.png`, `${id}.pdf`, '1'], work);
      await tool('mutool', ['convert', '-o', `${id}-scan.pdf`, `${id}.png`], work);
      pages.push({ id, truth: groundTruthText(markdown), scan: path.join(work, `${id}-scan.pdf`) });
    }
    interface Side { cpuSeconds: number; wallSeconds: number; recall: number }
    const rows: Array<{ id: string; ocrmypdf: Side; tesseract: Side }> = [];
    for (const page of pages) {
      const output = path.join(work, `${page.id}-searchable.pdf`);
      const ocrmypdf = await measure(() => tool('ocrmypdf', ocrmypdfArgs({ input: page.scan, output, languages: ['eng'] }), work, { env: { OMP_THREAD_LIMIT: '1' } }));
      const layer = (await tool('pdftotext', [output, '-'], work)).toString('utf8');
      const bytes = new Uint8Array(await readFile(page.scan));
      const job: Job = {
        operation: 'pdf.ocr', files: [{ bytes, path: page.scan, pages: 1 }], params: {}, jobDir: work, deadline: Date.now() + 300_000,
        settings: { modelConcurrency: 1, modelDpi: 150, ocrEngine: 'tesseract', ocrLanguages: 'eng', maxZipBytes: 0 },
      };
      const tesseract = await measure(() => pdfOcr(job));
      const text = (JSON.parse(Buffer.from(tesseract.value.body).toString('utf8')) as { text: string }).text;
      const row = {
        id: page.id,
        ocrmypdf: { cpuSeconds: ocrmypdf.cpu, wallSeconds: ocrmypdf.wall, recall: wordRecall(page.truth, layer) },
        tesseract: { cpuSeconds: tesseract.cpu, wallSeconds: tesseract.wall, recall: wordRecall(page.truth, text) },
      };
      rows.push(row);
      progress(`${page.id}: OCRmyPDF ${row.ocrmypdf.cpuSeconds.toFixed(2)} s CPU, recall ${row.ocrmypdf.recall.toFixed(3)}; tesseract ${row.tesseract.cpuSeconds.toFixed(2)} s CPU, recall ${row.tesseract.recall.toFixed(3)}`);
    }
    const mean = (pick: (r: typeof rows[number]) => number) => rows.reduce((sum, r) => sum + pick(r), 0) / Math.max(1, rows.length);
    const toolSummary = (tool: 'ocrmypdf' | 'tesseract') => ({
      cpuSecondsPerPage: mean((r) => r[tool].cpuSeconds), wallSecondsPerPage: mean((r) => r[tool].wallSeconds),
      recall: mean((r) => r[tool].recall), recallMin: Math.min(...rows.map((r) => r[tool].recall)),
    });
    const summary = {
      pages: rows.length,
      ocrmypdf: toolSummary('ocrmypdf'),
      tesseract: toolSummary('tesseract'),
    };
    const out = await writeResult(args, 'searchable', {
      method: 'Ground-truth pages of running text (no tables, at least 100 words) typeset by WeasyPrint (DejaVu Serif 11pt, A4), drawn at 200 dpi in grey and wrapped as image-only PDFs. '
        + 'OCRmyPDF: one run per page with the options of /v1/pdf/searchable (the page read at its image\'s 200 dpi), its Python start included; recall of pdftotext on the output. '
        + 'tesseract: the local path of /v1/pdf/ocr (mutool draws the page at 300 dpi, tesseract reads it with one thread); recall of its text. '
        + 'CPU: the children this process waited for (OCRmyPDF with its tesseract and Ghostscript; mutool and tesseract), per page, one page at a time.',
      summary, rows,
    }, began);
    progress(`OCRmyPDF ${summary.ocrmypdf.cpuSecondsPerPage.toFixed(2)} s CPU/page (recall ${summary.ocrmypdf.recall.toFixed(3)}), tesseract ${summary.tesseract.cpuSecondsPerPage.toFixed(2)} s CPU/page (recall ${summary.tesseract.recall.toFixed(3)}) -> ${path.relative(ROOT, out)}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();

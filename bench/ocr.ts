// Local OCR throughput: pages per second of the tesseract path of /v1/pdf/ocr (mutool at 300 dpi,
// then tesseract with one thread) on a few corpus pages, with the word recall against each PDF's
// own text layer. Run: npx tsc -p tsconfig.json && node dist/bench/ocr.js  -> bench/results/ocr.json
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Job } from '../core/job.js';
import { pdfOcr } from '../workers/model/ocr.js';
import { TESSERACT_DPI } from '../workers/model/pages.js';
import { runTool, runToolsInThisProcess } from '../tools/process/run-tool.js';
import { wordRecall } from '../test/support/word-recall.js';

// This benchmark counts the tools' CPU time from the children this process waits for
// (/proc/self/stat cutime), so it starts them itself rather than through a launcher process.
runToolsInThisProcess();

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const corpus = path.resolve(projectRoot, '../shared/corpus/sample-files');

const SAMPLES = [
  { file: '004-pdflatex-4-pages/pdflatex-4-pages.pdf', first: 1, last: 2, kind: 'dense single-column LaTeX' },
  { file: '026-latex-multicolumn/multicolumn.pdf', first: 1, last: 2, kind: 'two-column LaTeX' },
  { file: '011-google-doc-document/google-doc-document.pdf', first: 1, last: 1, kind: 'Google Docs export' },
  { file: '002-trivial-libre-office-writer/002-trivial-libre-office-writer.pdf', first: 1, last: 1, kind: 'LibreOffice Writer' },
];

/** CPU seconds used by finished child processes (mutool, tesseract): independent of other load. */
async function childCpuSeconds(): Promise<number> {
  const stat = await readFile('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticksPerSecond = 100;
  return (Number(fields[13]) + Number(fields[14])) / ticksPerSecond;
}

async function text(tool: string, args: string[]): Promise<string> {
  return Buffer.from((await runTool(tool, args, { timeoutMs: 60_000 })).stdout).toString('utf8');
}

async function main(): Promise<void> {
  const results = [];
  let totalPages = 0;
  let totalSeconds = 0;
  let totalCpuSeconds = 0;
  for (const sample of SAMPLES) {
    const jobDir = await mkdtemp(path.join(tmpdir(), 'bench-ocr-'));
    try {
      const source = path.join(corpus, sample.file);
      const subset = path.join(jobDir, 'input.pdf');
      await runTool('qpdf', [source, '--pages', '.', `${sample.first}-${sample.last}`, '--', subset], { timeoutMs: 60_000 });
      const pages = sample.last - sample.first + 1;
      const bytes = new Uint8Array(await readFile(subset));
      const input: Job = {
        operation: 'pdf.ocr', files: [{ bytes, path: subset, pages }], params: {}, jobDir,
        deadline: Date.now() + 600_000,
        settings: { modelConcurrency: 4, modelDpi: 150, ocrEngine: 'tesseract', ocrLanguages: 'eng', maxZipBytes: 0 },
      };
      const started = performance.now();
      const cpuBefore = await childCpuSeconds();
      const output = await pdfOcr(input);
      const seconds = (performance.now() - started) / 1000;
      const cpuSeconds = (await childCpuSeconds()) - cpuBefore;
      totalCpuSeconds += cpuSeconds;
      const recognised = (JSON.parse(Buffer.from(output.body).toString('utf8')) as { text: string }).text;
      const reference = await text('pdftotext', ['-f', String(sample.first), '-l', String(sample.last), source, '-']);
      totalPages += pages;
      totalSeconds += seconds;
      results.push({
        file: sample.file, kind: sample.kind, pages: `${sample.first}-${sample.last}`,
        seconds: Number(seconds.toFixed(2)), pagesPerSecond: Number((pages / seconds).toFixed(3)),
        toolCpuSecondsPerPage: Number((cpuSeconds / pages).toFixed(2)),
        wordRecall: Number(wordRecall(reference, recognised).toFixed(4)),
      });
      process.stdout.write(`${sample.file} pages ${sample.first}-${sample.last}: ${seconds.toFixed(2)} s\n`);
    } finally {
      await rm(jobDir, { recursive: true, force: true });
    }
  }
  const report = {
    measured: new Date().toISOString(),
    engine: (await text('tesseract', ['--version'])).split('\n')[0],
    dpi: TESSERACT_DPI,
    threadsPerPage: 1,
    cpus: cpus().length,
    loadAverageAtEnd: loadavg()[0],
    note: 'One job at a time; pages run sequentially within a job. Wall time includes rendering. The machine was shared, so load inflates wall times; toolCpuSecondsPerPage (mutool + tesseract CPU time) does not depend on load.',
    pages: totalPages,
    seconds: Number(totalSeconds.toFixed(2)),
    pagesPerSecond: Number((totalPages / totalSeconds).toFixed(3)),
    toolCpuSecondsPerPage: Number((totalCpuSeconds / totalPages).toFixed(2)),
    /** What one idle core would do: the figure to size a deployment with. */
    pagesPerSecondPerIdleCore: Number((totalPages / totalCpuSeconds).toFixed(3)),
    samples: results,
  };
  const out = path.join(projectRoot, 'bench/results/ocr.json');
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${report.pagesPerSecond} pages/s over ${totalPages} pages -> ${path.relative(projectRoot, out)}\n`);
}

await main();

// /v1/pdf/from-markdown typesetting time for about 10 and 100 pages, side by side with headless
// Chromium printing the same HTML (the same document and print stylesheet).
// Run: npx tsc -p tsconfig.json && node dist/bench/from-markdown.js  -> bench/results/from-markdown.json
// Chromium is optional (`apt-get install chromium`); without it only our renderer is measured.
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Job } from '../core/job.js';
import { fromMarkdown, renderMarkdownHtml } from '../workers/pdf/from-markdown.js';
import { runTool, runToolsInThisProcess } from '../tools/runner.js';

// This benchmark counts the tools' CPU time from the children this process waits for
// (/proc/self/stat cutime), so it starts them itself rather than through a launcher process.
runToolsInThisProcess();

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = 3;
const TIMEOUT_MS = 300_000;
// One section fills about half an A4 page with the service's stylesheet.
const SECTIONS_FOR = { 10: 19, 100: 210 } as const;

const SENTENCES = [
  'The quarterly figures were reviewed by the committee before the meeting closed.',
  'Each region reported its own numbers, and the totals were checked twice.',
  'Shipping delays in the second month explain most of the difference.',
  'Η ομάδα συμφώνησε να επανεξετάσει τα στοιχεία τον επόμενο μήνα.',
  'Команда согласилась пересмотреть данные в следующем месяце.',
  'Further detail is in the appendix, together with the raw measurements.',
];

function section(index: number): string {
  const sentence = (offset: number) => SENTENCES[(index + offset) % SENTENCES.length];
  const paragraph = (offset: number) => Array.from({ length: 5 }, (_, k) => sentence(offset + k)).join(' ');
  return [
    `## Section ${index + 1}`,
    '',
    `${paragraph(0)} See [the report](https://example.com/report/${index + 1}) for *context* and **totals**.`,
    '',
    `- ${sentence(1)}`,
    `- ${sentence(2)}`,
    `  1. ${sentence(3)}`,
    '',
    `> ${sentence(4)}`,
    '',
    '```',
    `function total${index}(rows) { return rows.reduce((sum, row) => sum + row.amount * row.rate, 0); }`,
    '```',
    '',
    '| Region | Units | Note |',
    '|---|--:|---|',
    ...Array.from({ length: 4 }, (_, k) => `| Region ${k + 1} | ${(index + 1) * (k + 3)} | ${sentence(k).split(' ').slice(0, 4).join(' ')} |`),
    '',
  ].join('\n');
}

function document(sections: number): string {
  return [`# Benchmark document (${sections} sections)`, '', ...Array.from({ length: sections }, (_, i) => section(i))].join('\n');
}

/** CPU seconds used by finished child processes: independent of other load on the machine. */
async function childCpuSeconds(): Promise<number> {
  const fields = (await readFile('/proc/self/stat', 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

async function pageCount(pdf: Uint8Array): Promise<number> {
  const info = Buffer.from((await runTool('pdfinfo', ['-'], { input: pdf, timeoutMs: 30_000 })).stdout).toString('utf8');
  return Number(/^Pages:\s+(\d+)$/m.exec(info)?.[1] ?? 0);
}

interface Measurement { pages: number; bytes: number; wallSeconds: number[]; medianWallSeconds: number; cpuSeconds: number }

async function measure(run: () => Promise<Uint8Array>): Promise<Measurement> {
  const wallSeconds: number[] = [];
  let cpu = 0;
  let pdf: Uint8Array = new Uint8Array();
  for (let i = 0; i < RUNS; i += 1) {
    const cpuBefore = await childCpuSeconds();
    const started = performance.now();
    pdf = await run();
    wallSeconds.push(Number(((performance.now() - started) / 1000).toFixed(2)));
    cpu += (await childCpuSeconds()) - cpuBefore;
  }
  const sorted = [...wallSeconds].sort((a, b) => a - b);
  return {
    pages: await pageCount(pdf), bytes: pdf.length, wallSeconds,
    medianWallSeconds: sorted[Math.floor(sorted.length / 2)]!, cpuSeconds: Number((cpu / RUNS).toFixed(2)),
  };
}

async function ours(markdown: string, workDir: string): Promise<Uint8Array> {
  const jobDir = await mkdtemp(path.join(workDir, 'job-'));
  const input: Job<{ title?: string }> = {
    operation: 'pdf.from-markdown', files: [{ bytes: new TextEncoder().encode(markdown) }],
    params: { title: 'Benchmark' }, jobDir, deadline: Date.now() + TIMEOUT_MS,
    settings: { modelConcurrency: 1, modelDpi: 150, ocrEngine: 'tesseract', ocrLanguages: 'eng', maxZipBytes: 0 },
  };
  try {
    return (await fromMarkdown(input)).body;
  } finally {
    await rm(jobDir, { recursive: true, force: true });
  }
}

async function findChromium(): Promise<string | undefined> {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      const result = await runTool(name, ['--version'], { timeoutMs: 30_000 });
      if (result.exitCode === 0) return name;
    } catch { /* not installed */ }
  }
  return undefined;
}

async function chromium(binary: string, html: string, workDir: string): Promise<Uint8Array> {
  const jobDir = await mkdtemp(path.join(workDir, 'chromium-'));
  try {
    const page = path.join(jobDir, 'document.html');
    const output = path.join(jobDir, 'document.pdf');
    await writeFile(page, html);
    const result = await runTool(binary, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
      `--user-data-dir=${path.join(jobDir, 'profile')}`, '--no-pdf-header-footer', `--print-to-pdf=${output}`,
      pathToFileURL(page).href,
    ], { cwd: jobDir, timeoutMs: TIMEOUT_MS });
    if (result.exitCode !== 0) throw new Error(`${binary} exited with ${result.exitCode}`);
    return new Uint8Array(await readFile(output));
  } finally {
    await rm(jobDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const workDir = await mkdtemp(path.join(tmpdir(), 'bench-from-markdown-'));
  const browser = await findChromium();
  if (!browser) process.stdout.write('chromium is not installed (apt-get install chromium): measuring only WeasyPrint\n');
  const sizes = [];
  try {
    for (const [target, sections] of Object.entries(SECTIONS_FOR)) {
      const markdown = document(sections);
      const html = renderMarkdownHtml(markdown, 'Benchmark');
      const weasyprint = await measure(() => ours(markdown, workDir));
      process.stdout.write(`~${target} pages, WeasyPrint: ${weasyprint.pages} pages, median ${weasyprint.medianWallSeconds} s\n`);
      const chrome = browser ? await measure(() => chromium(browser, html, workDir)) : undefined;
      if (chrome) process.stdout.write(`~${target} pages, Chromium: ${chrome.pages} pages, median ${chrome.medianWallSeconds} s\n`);
      sizes.push({ targetPages: Number(target), markdownBytes: Buffer.byteLength(markdown), weasyprint, chromium: chrome ?? null });
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const versionOf = async (tool: string, args: string[]) => Buffer.from((await runTool(tool, args, { timeoutMs: 30_000 })).stdout).toString('utf8').trim();
  const report = {
    measured: new Date().toISOString(),
    weasyprint: await versionOf('weasyprint', ['--version']),
    chromium: browser ? await versionOf(browser, ['--version']) : 'not installed',
    cpus: cpus().length,
    loadAverageAtEnd: Number(loadavg()[0]!.toFixed(2)),
    runsPerMeasurement: RUNS,
    note: 'Both engines print the same HTML (the service\'s Markdown rendering and print stylesheet). WeasyPrint time is the whole work function (markdown-it, Python start-up and import, typesetting). Chromium time is one headless --print-to-pdf process per document, start-up included. cpuSeconds is the CPU time of the finished child processes per run and does not depend on other load (for Chromium it likely undercounts: its renderer processes are forked by a zygote and may not be reaped through the chain that /proc/self/stat counts); wall times on a shared machine do.',
    sizes,
  };
  const resultsDir = path.join(projectRoot, 'bench/results');
  await mkdir(resultsDir, { recursive: true });
  await writeFile(path.join(resultsDir, 'from-markdown.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`wrote bench/results/from-markdown.json (${(await stat(path.join(resultsDir, 'from-markdown.json'))).size} bytes)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});

// /v1/pdf/from-markdown typesetting time for about 10 and 100 pages, side by side with headless
// Chromium printing the same HTML (the same document and print stylesheet); then hostile
// Markdown, shapes built to make WeasyPrint slow, side by side with WeasyPrint on markdown-it's
// plain HTML (the renderer before break opportunities, text-node bounds and the layout budget).
// Run: npx tsc -p tsconfig.json && node dist/bench/from-markdown.js [--only=pages|hostile] [--keep-raw] [--shapes=a,b]
//   -> bench/results/from-markdown.json (--only keeps the other part of an earlier result; --keep-raw
//   takes raw WeasyPrint's figures from the earlier result instead of measuring them again: they do
//   not depend on the service's check; --shapes measures only the hostile shapes whose names contain
//   one of the words, and keeps the earlier result of the others and of the benchmark document)
// Chromium is optional (`apt-get install chromium`); without it only our renderer is measured.
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import MarkdownIt from 'markdown-it';
import type { Job } from '../core/job.js';
import { ServiceError } from '../core/errors.js';
import { inspectMarkdown, layoutBudgetMs, LAYOUT_BASE_MS, LAYOUT_DEADLINE_SHARE, LAYOUT_MS_PER_KB } from '../checks/markdown.js';
import { estimatedLayoutMs } from '../checks/markdown-estimate.js';
import { PDF_TIMEOUT_MS } from '../operations/shared.js';
import { fromMarkdown, renderHtmlToPdf, renderMarkdownHtml } from '../workers/pdf/from-markdown.js';
import { PRINT_STYLESHEET } from '../workers/pdf/markdown-html.js';
import { RunFailure, runTool, runToolsInThisProcess } from '../tools/process/run-tool.js';

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

// ---- Hostile Markdown ------------------------------------------------------------------------
// Each shape at 10 and 40 KB, and typeset by the service at the largest size its pre-payment
// check accepts (up to the 1 MB limit; past it, the refusal and how long the check took). The
// raw side is WeasyPrint (the same fetch-refusing script) on markdown-it's plain HTML with the
// same stylesheet, stopped at RAW_CAP_MS; `one word` is also measured at 150 KB, the size that
// ran past the 120 s job deadline. One run each: CPU seconds are the figure to read.
const RAW_CAP_MS = 60_000;
const HOSTILE_SIZES = [10_000, 40_000];
const repeat = (unit: string, bytes: number) => unit.repeat(Math.max(1, Math.floor(bytes / Buffer.byteLength(unit))));
const word = (bytes: number) => repeat('abcdefghij', bytes);
const CODE_LINE = 'function total(rows) { return rows.reduce((sum, row) => sum + row.amount, 0); }';
const HOSTILE: Array<{ shape: string; make: (bytes: number) => string; extraSizes?: number[] }> = [
  { shape: 'one word', make: (n) => `${word(n)}\n`, extraSizes: [150_000] },
  { shape: 'one word across inline elements (ab**cd**ab**cd**…)', make: (n) => `${repeat('ab**cd**', n)}\n` },
  { shape: 'one line in a code block', make: (n) => `\`\`\`\n${word(n)}\n\`\`\`\n` },
  { shape: 'one inline code span', make: (n) => `\`${word(n)}\`\n` },
  { shape: 'one URL (autolink)', make: (n) => `<https://example.com/${word(n)}>\n` },
  { shape: 'one word in a table cell', make: (n) => `| a | b |\n|---|---|\n| ${word(n)} | x |\n` },
  { shape: 'narrow letters (i i i …)', make: (n) => `${repeat('i ', n)}\n` },
  { shape: 'tab-separated line in a code block', make: (n) => `\`\`\`\n${repeat('abc\t', n)}\n\`\`\`\n` },
  { shape: 'one-letter list items', make: (n) => repeat('- a\n', n) },
  { shape: 'one-letter code spans', make: (n) => `${repeat('`a` ', n)}\n` },
  { shape: 'one-letter lines ending in a line break', make: (n) => `${repeat('a\\\n', n)}a\n` },
  { shape: 'one-letter paragraphs', make: (n) => repeat('a\n\n', n) },
  { shape: 'one-letter headings', make: (n) => repeat('# a\n', n) },
  { shape: 'a table row of one-letter columns', make: (n) => { const row = `${repeat('|a', n / 3)}|\n`; return `${row}${row.replace(/a/g, '-')}${row}`; } },
  { shape: 'rows of a two-column table', make: (n) => `| a | b |\n|---|---|\n${repeat('| a | b |\n', n)}` },
  { shape: 'one-letter lists three deep', make: (n) => repeat('- - - a\n', n) },
  { shape: 'one-letter numbered items', make: (n) => repeat('1. a\n', n) },
  { shape: 'one-letter lines ending in two spaces', make: (n) => repeat('a  \n', n) },
  { shape: 'one-letter emphasis', make: (n) => `${repeat('*a* ', n)}\n` },
  { shape: 'links', make: (n) => `${repeat('[a](https://e.com/) ', n)}\n` },
  { shape: 'autolinks', make: (n) => `${repeat('<https://e.com/> ', n)}\n` },
  { shape: 'running text in paragraphs', make: (n) => repeat(`${SENTENCES.join(' ')}\n\n`, n) },
  { shape: 'running text in one paragraph', make: (n) => `${repeat(`${SENTENCES[0]} `, n)}\n` },
  { shape: 'Greek and Cyrillic text', make: (n) => `${repeat(`${SENTENCES[3]} ${SENTENCES[4]} `, n)}\n` },
  { shape: 'CJK text (drawn as U+FFFD)', make: (n) => `${repeat('漢字仮名交じり文 ', n)}\n` },
  { shape: 'code block of 80-character lines', make: (n) => `\`\`\`\n${repeat(`${CODE_LINE}\n`, n)}\`\`\`\n` },
  { shape: 'indented code of 80-character lines', make: (n) => repeat(`    ${CODE_LINE}\n`, n) },
  { shape: 'long headings', make: (n) => repeat(`# ${SENTENCES[0]} ${SENTENCES[1]}\n`, n) },
  { shape: 'one-cell tables', make: (n) => repeat('|a|\n|-|\n\n', n) },
  // Many pages for their bytes: WeasyPrint spends more on each page the more pages there are.
  { shape: 'two-letter lines in a code block', make: (n) => `\`\`\`\n${repeat('ab\n', n)}\`\`\`\n` },
  { shape: 'short headings', make: (n) => Array.from({ length: Math.floor(n / 24) }, (_, i) => `## Section ${String(i).padStart(6, '0')} title\n`).join('') },
];

interface Timing { cpuSeconds: number; wallSeconds: number }

async function timed<T>(run: () => Promise<T>): Promise<Timing & { value: T }> {
  const cpuBefore = await childCpuSeconds();
  const started = performance.now();
  const value = await run();
  const wallSeconds = Number(((performance.now() - started) / 1000).toFixed(2));
  const cpuSeconds = Number(((await childCpuSeconds()) - cpuBefore).toFixed(2));
  return { value, wallSeconds, cpuSeconds };
}

const plainParser = new MarkdownIt('default', { html: false, linkify: false, typographer: false });

async function raw(markdown: string, workDir: string): Promise<Timing & { pages?: number; stoppedAfterSeconds?: number }> {
  const html = `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><style>${PRINT_STYLESHEET}</style></head>\n<body>\n${plainParser.render(markdown)}</body></html>\n`;
  const jobDir = await mkdtemp(path.join(workDir, 'raw-'));
  try {
    const { value: pdf, ...timing } = await timed(async () => {
      try {
        return await renderHtmlToPdf(html, { workDir: jobDir, timeoutMs: RAW_CAP_MS });
      } catch (error) {
        if (error instanceof RunFailure && error.kind === 'timeout') return undefined;
        throw error;
      }
    });
    return pdf ? { ...timing, pages: await pageCount(pdf) } : { ...timing, stoppedAfterSeconds: RAW_CAP_MS / 1000 };
  } finally {
    await rm(jobDir, { recursive: true, force: true });
  }
}

interface ServiceTiming extends Partial<Timing> { checkMilliseconds: number; pages?: number; refused?: string; failedAfterCheck?: string }

async function service(markdown: string, workDir: string): Promise<ServiceTiming> {
  const bytes = new TextEncoder().encode(markdown);
  const checkStarted = performance.now();
  try {
    inspectMarkdown(bytes, PDF_TIMEOUT_MS);
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    return { checkMilliseconds: Number((performance.now() - checkStarted).toFixed(1)), refused: `${error.status} ${error.code}` };
  }
  const checkMilliseconds = Number((performance.now() - checkStarted).toFixed(1));
  const cpuBefore = await childCpuSeconds();
  try {
    const { value: pdf, ...timing } = await timed(() => ours(markdown, workDir));
    return { checkMilliseconds, ...timing, pages: await pageCount(pdf) };
  } catch (error) {
    // Accepted, then refused by the work (the renderer's memory cap): uncharged, but a bound missed.
    if (!(error instanceof ServiceError)) throw error;
    return { checkMilliseconds, cpuSeconds: Number(((await childCpuSeconds()) - cpuBefore).toFixed(2)), failedAfterCheck: `${error.status} ${error.code}` };
  }
}

// The upload limit, less room for the few bytes a shape adds around its repeated part.
const LARGEST = 1024 * 1024 - 64;

const accepted = (markdown: string) => estimatedLayoutMs(markdown) <= layoutBudgetMs(Buffer.byteLength(markdown), PDF_TIMEOUT_MS);

/** The largest size, up to the upload limit, whose layout estimate the check accepts. */
function largestAccepted(make: (bytes: number) => string): number {
  const fits = (bytes: number) => accepted(make(bytes));
  let low = 100;
  let high = LARGEST;
  if (fits(high)) return high;
  while (high - low > low / 100) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle)) low = middle; else high = middle;
  }
  return low;
}

type Measured = { bytes: number; raw?: unknown };
/** Raw WeasyPrint's figure for the shape and size in an earlier result (--keep-raw). */
type EarlierRaw = (shape: string, bytes: number) => unknown;

type ShapeResult = { shape: string; sizes: Measured[] };

async function hostile(workDir: string, earlierRaw?: EarlierRaw, only?: { words: string[]; earlier: ShapeResult[] }): Promise<unknown[]> {
  if (only) {
    const chosen = (shape: string) => only.words.some((word) => shape.includes(word));
    const kept = (entry: ShapeResult) => entry.shape.startsWith('the benchmark document') || (!chosen(entry.shape) && HOSTILE.some((h) => h.shape === entry.shape));
    const results: unknown[] = only.earlier.filter(kept);
    for (const entry of HOSTILE.filter((h) => chosen(h.shape))) results.push(await hostileShape(entry, workDir, earlierRaw));
    // In the order of HOSTILE, the benchmark document first.
    const rank = (entry: unknown) => HOSTILE.findIndex((h) => h.shape === (entry as ShapeResult).shape);
    return results.sort((a, b) => rank(a) - rank(b));
  }
  // The yardstick in the same run: the benchmark document at the most sections the check accepts.
  const fitsSections = (sections: number) => Buffer.byteLength(document(sections)) <= LARGEST && accepted(document(sections));
  let sections = 1;
  let tooMany = 2;
  while (fitsSections(tooMany)) tooMany *= 2;
  while (tooMany - sections > 1) {
    const middle = Math.floor((sections + tooMany) / 2);
    if (fitsSections(middle)) sections = middle; else tooMany = middle;
  }
  const reference = document(sections);
  const referenceService = await service(reference, workDir);
  process.stdout.write(`the benchmark document, ${referenceService.pages} pages: service ${referenceService.cpuSeconds} s CPU\n`);
  const results: unknown[] = [{ shape: `the benchmark document at the largest size accepted (${referenceService.pages} pages)`, sizes: [{ bytes: Buffer.byteLength(reference), layoutUnits: Math.round(estimatedLayoutMs(reference)), service: referenceService }] }];
  for (const entry of HOSTILE) results.push(await hostileShape(entry, workDir, earlierRaw));
  return results;
}

async function hostileShape(
  { shape, make, extraSizes = [] }: (typeof HOSTILE)[number], workDir: string, earlierRaw?: EarlierRaw,
): Promise<ShapeResult> {
  const sizes: Measured[] = [];
  const largest = largestAccepted(make);
  for (const target of [...HOSTILE_SIZES, ...extraSizes, largest, ...(largest < LARGEST ? [LARGEST] : [])]) {
    const markdown = make(target);
    const layoutUnits = Math.round(estimatedLayoutMs(markdown));
    const measured: Measured & Record<string, unknown> = { bytes: Buffer.byteLength(markdown), layoutUnits };
    measured.service = await service(markdown, workDir);
    if (target <= 150_000) measured.raw = earlierRaw?.(shape, Buffer.byteLength(markdown)) ?? await raw(markdown, workDir);
    const show = (t: { cpuSeconds?: number; stoppedAfterSeconds?: number; refused?: string; failedAfterCheck?: string } | undefined) => !t ? '–'
      : t.refused ? `refused (${t.refused})` : t.failedAfterCheck ? `accepted, then ${t.failedAfterCheck} after ${t.cpuSeconds} s CPU`
        : t.stoppedAfterSeconds ? `stopped after ${t.stoppedAfterSeconds} s` : `${t.cpuSeconds} s CPU`;
    process.stdout.write(`${shape}, ${measured.bytes} bytes: service ${show(measured.service as never)}, raw WeasyPrint ${show(measured.raw as never)}\n`);
    sizes.push(measured);
  }
  return { shape, sizes };
}

async function pageSizes(workDir: string): Promise<{ browser?: string; sizes: unknown[] }> {
  const browser = await findChromium();
  if (!browser) process.stdout.write('chromium is not installed (apt-get install chromium): measuring only WeasyPrint\n');
  const sizes = [];
  for (const [target, sections] of Object.entries(SECTIONS_FOR)) {
    const markdown = document(sections);
    const html = renderMarkdownHtml(markdown, 'Benchmark');
    const weasyprint = await measure(() => ours(markdown, workDir));
    process.stdout.write(`~${target} pages, WeasyPrint: ${weasyprint.pages} pages, median ${weasyprint.medianWallSeconds} s\n`);
    const chrome = browser ? await measure(() => chromium(browser, html, workDir)) : undefined;
    if (chrome) process.stdout.write(`~${target} pages, Chromium: ${chrome.pages} pages, median ${chrome.medianWallSeconds} s\n`);
    const layoutUnits = Math.round(estimatedLayoutMs(markdown));
    const markdownBytes = Buffer.byteLength(markdown);
    sizes.push({ targetPages: Number(target), markdownBytes, layoutUnits, weasyprint, chromium: chrome ?? null });
  }
  return { browser, sizes };
}

async function main(): Promise<void> {
  const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
  const keepRaw = process.argv.includes('--keep-raw');
  const resultsDir = path.join(projectRoot, 'bench/results');
  const resultsFile = path.join(resultsDir, 'from-markdown.json');
  const earlier = only || keepRaw || process.argv.some((arg) => arg.startsWith('--shapes=')) ? JSON.parse(await readFile(resultsFile, 'utf8').catch(() => '{}')) as Record<string, unknown> : {};
  const earlierShapes = (earlier.hostile ?? []) as ShapeResult[];
  const earlierRaw: EarlierRaw | undefined = keepRaw
    ? (shape, bytes) => earlierShapes.find((entry) => entry.shape === shape)?.sizes.find((size) => size.bytes === bytes)?.raw
    : undefined;
  const workDir = await mkdtemp(path.join(tmpdir(), 'bench-from-markdown-'));
  let pages: { browser?: string; sizes: unknown[] } | undefined;
  let hostileShapes: unknown[] | undefined;
  try {
    if (only !== 'hostile') pages = await pageSizes(workDir);
    const shapeWords = process.argv.find((arg) => arg.startsWith('--shapes='))?.slice('--shapes='.length).split(',');
    if (only !== 'pages') hostileShapes = await hostile(workDir, earlierRaw, shapeWords ? { words: shapeWords, earlier: earlierShapes } : undefined);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const versionOf = async (tool: string, args: string[]) => Buffer.from((await runTool(tool, args, { timeoutMs: 30_000 })).stdout).toString('utf8').trim();
  const report = {
    ...(only ? earlier : {}),
    measured: new Date().toISOString(),
    weasyprint: await versionOf('weasyprint', ['--version']),
    ...(pages ? { chromium: pages.browser ? await versionOf(pages.browser, ['--version']) : 'not installed' } : {}),
    cpus: cpus().length,
    loadAverageAtEnd: Number(loadavg()[0]!.toFixed(2)),
    runsPerMeasurement: RUNS,
    note: 'Both engines print the same HTML (the service\'s Markdown rendering and print stylesheet). WeasyPrint time is the whole work function (markdown-it, Python start-up and import, typesetting). Chromium time is one headless --print-to-pdf process per document, start-up included. cpuSeconds is the CPU time of the finished child processes per run and does not depend on other load (for Chromium it likely undercounts: its renderer processes are forked by a zygote and may not be reaped through the chain that /proc/self/stat counts); wall times on a shared machine do.',
    ...(pages ? { sizes: pages.sizes } : {}),
    ...(hostileShapes ? {
      hostileNote: `Hostile Markdown, one run each. service: the pre-payment check (checkMilliseconds; a refusal is answered before payment), then the work function as for the documents above. raw: WeasyPrint through the same script on markdown-it's plain HTML with the same stylesheet (the renderer before break opportunities, text-node bounds and the layout budget), stopped after ${RAW_CAP_MS / 1000} s; measured up to 150 KB. Each shape is measured at 10 and 40 KB, at the largest size the check accepts (estimated layout time, layoutUnits, within ${LAYOUT_BASE_MS} ms or ${LAYOUT_MS_PER_KB} ms per KB, and at most ${PDF_TIMEOUT_MS * LAYOUT_DEADLINE_SHARE} ms; at most 1 MB) and, when that is smaller, at 1 MB. failedAfterCheck: accepted by the check, then refused by the work (uncharged).`,
      hostile: hostileShapes,
    } : {}),
  };
  await mkdir(resultsDir, { recursive: true });
  await writeFile(resultsFile, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`wrote bench/results/from-markdown.json (${(await stat(resultsFile)).size} bytes)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});

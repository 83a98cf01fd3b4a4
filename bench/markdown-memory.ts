// /v1/pdf/from-markdown's memory at the largest size its pre-payment check accepts: each shape below,
// sized by bisection to the most the layout budget lets through (up to the 1 MB upload limit), is
// typeset by the service's renderer (markdown-html.ts, then render.py under its own 1.5 GiB
// address-space cap) inside /usr/bin/time -v. Written: peak resident memory, the peak address
// space (VmPeak, what the cap counts), CPU seconds, pages, and whether the cap stopped it (exit 3).
// Run: npx tsc -p tsconfig.json && nice -n 10 node dist/bench/markdown-memory.js [--shapes=a,b]
//   -> bench/results/markdown-memory.json; the figures are quoted in bench/notes/markdown-layout-cost.md.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { layoutBudgetMs } from '../checks/markdown.js';
import { estimatedLayoutMs } from '../checks/markdown-estimate.js';
import { PDF_TIMEOUT_MS } from '../operations/shared.js';
import { renderMarkdownHtml } from '../workers/pdf/markdown-html.js';
import { rendererScript, WEASYPRINT_EXIT } from '../tools/engines/weasyprint.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LARGEST = 1024 * 1024 - 64;
const repeat = (unit: string, bytes: number) => unit.repeat(Math.max(1, Math.floor(bytes / Buffer.byteLength(unit))));
const lines = (unit: string, perLine: number, bytes: number) => repeat(`${unit.repeat(perLine).trimEnd()}\n`, bytes);
const SENTENCE = 'The quarterly figures were reviewed by the committee before the meeting closed. ';

/** README and CHANGELOG files from node_modules, joined and repeated to the size asked (real documents dense with lists and links). */
async function changelogs(): Promise<(bytes: number) => string> {
  const dir = path.join(projectRoot, 'node_modules');
  const texts: string[] = [];
  for (const name of ['es-abstract', 'qs', 'axios', 'ajv', 'markdown-it', 'convict']) {
    for (const file of await readdir(path.join(dir, name)).catch(() => [] as string[])) {
      if (/^(changelog|readme)\.md$/i.test(file)) texts.push(await readFile(path.join(dir, name, file), 'utf8'));
    }
  }
  const joined = texts.join('\n\n');
  return (bytes) => joined.repeat(Math.ceil(bytes / Buffer.byteLength(joined))).slice(0, bytes);
}

const SHAPES: Array<{ shape: string; make: (bytes: number) => string }> = [
  { shape: 'links on one line', make: (n) => `${repeat('[a](https://e.com/) ', n)}\n` },
  { shape: 'links, ten a line', make: (n) => lines('[a](https://e.com/) ', 10, n) },
  { shape: 'emphasis in running text, ten a line', make: (n) => lines('ab *cd* ', 10, n) },
  { shape: 'code spans in running text, ten a line', make: (n) => lines('ab `cd` ', 10, n) },
  { shape: 'one word across inline elements (ab**cd**…)', make: (n) => `${repeat('ab**cd**', n)}\n` },
  {
    shape: 'one table of ten short columns',
    make: (n) => { const row = `|${' abcdef |'.repeat(10)}\n`; return `${row}|${'---|'.repeat(10)}\n${repeat(row, n)}`; },
  },
  { shape: 'one table of two columns', make: (n) => `| a | b |\n|---|---|\n${repeat('| abcdefgh ijk | abcdefgh ijk |\n', n)}` },
  { shape: 'list items of a sentence', make: (n) => repeat(`- ${SENTENCE}\n`, n) },
  { shape: 'running text in paragraphs', make: (n) => repeat(`${SENTENCE.repeat(6)}\n\n`, n) },
];

const accepted = (markdown: string) => estimatedLayoutMs(markdown) <= layoutBudgetMs(Buffer.byteLength(markdown), PDF_TIMEOUT_MS);

/** The largest size, up to the upload limit, the check accepts (within 1 %). */
function largestAccepted(make: (bytes: number) => string): number {
  if (accepted(make(LARGEST))) return LARGEST;
  let low = 100;
  let high = LARGEST;
  while (high - low > low / 100) {
    const middle = Math.floor((low + high) / 2);
    if (accepted(make(middle))) low = middle; else high = middle;
  }
  return low;
}

// Prints the process's peak address space and resident memory as it exits (render.py exits 3 at its cap).
const PEAK_WRAPPER = `
import atexit, runpy, sys
def report():
    for line in open('/proc/self/status'):
        if line.startswith(('VmPeak', 'VmHWM')): sys.stderr.write('peak ' + line)
atexit.register(report)
script = sys.argv[1]
sys.argv = [script]
runpy.run_path(script, run_name='__main__')
`;

interface Row {
  shape: string; bytes: number; estimateSeconds: number; exitCode: number | null; outOfMemory: boolean;
  peakResidentMB: number; peakAddressSpaceMB: number; cpuSeconds: number; pages: number;
}

async function typeset(shape: string, markdown: string, workRoot: string): Promise<Row> {
  const dir = await mkdtemp(path.join(workRoot, 'job-'));
  try {
    const wrapper = path.join(dir, 'peak.py');
    await writeFile(wrapper, PEAK_WRAPPER);
    const run = spawnSync('/usr/bin/time', ['-v', 'python3', '-I', wrapper, rendererScript()], {
      input: renderMarkdownHtml(markdown, 'Memory'), // The environment the service gives its tools (tools/process/spawn-with-limits.ts).
      cwd: dir, env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', HOME: dir, TMPDIR: dir },
      maxBuffer: 512 * 1024 * 1024, timeout: 1_800_000,
    });
    const err = run.stderr.toString('utf8');
    const field = (pattern: RegExp) => Number(pattern.exec(err)?.[1] ?? NaN);
    const pdfPath = path.join(dir, 'out.pdf');
    await writeFile(pdfPath, run.stdout);
    const info = spawnSync('pdfinfo', [pdfPath]).stdout?.toString('utf8') ?? '';
    return {
      shape, bytes: Buffer.byteLength(markdown), estimateSeconds: Number((estimatedLayoutMs(markdown) / 1000).toFixed(1)),
      exitCode: run.status, outOfMemory: run.status === WEASYPRINT_EXIT.outOfMemory,
      peakResidentMB: Math.round(field(/Maximum resident set size \(kbytes\): (\d+)/) / 1024),
      peakAddressSpaceMB: Math.round(field(/peak VmPeak:\s+(\d+) kB/) / 1024),
      cpuSeconds: Number((field(/User time \(seconds\): ([\d.]+)/) + field(/System time \(seconds\): ([\d.]+)/)).toFixed(1)),
      pages: Number(/^Pages:\s+(\d+)$/m.exec(info)?.[1] ?? 0),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const words = process.argv.find((arg) => arg.startsWith('--shapes='))?.slice('--shapes='.length).split(',');
  const shapes = [...SHAPES, { shape: 'README and CHANGELOG files of node_modules, joined', make: await changelogs() }]
    .filter(({ shape }) => !words || words.some((word) => shape.includes(word)));
  const workRoot = await mkdtemp(path.join(tmpdir(), 'bench-markdown-memory-'));
  const rows: Row[] = [];
  try {
    for (const { shape, make } of shapes) {
      const row = await typeset(shape, make(largestAccepted(make)), workRoot);
      process.stdout.write(`${JSON.stringify(row)}\n`);
      rows.push(row);
    }
  } finally {
    await rm(workRoot, { recursive: true, force: true });
  }
  const resultsDir = path.join(projectRoot, 'bench/results');
  await mkdir(resultsDir, { recursive: true });
  const report = { measured: new Date().toISOString(), rows };
  await writeFile(path.join(resultsDir, 'markdown-memory.json'), `${JSON.stringify(report, null, 2)}\n`);
}

await main();

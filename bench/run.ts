// `npm run bench`: the whole benchmark suite, one step at a time (each a child process), then
// bench/REPORT.md with tables and SVG charts from the results. A failing step is recorded in the
// report and the suite carries on.
//   node dist/bench/run.js [--quick] [--only operations,payment,...] [--report-only]
// --quick runs a subset of each step and writes under bench/quick/, leaving the full results alone.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, machine, outDirFor } from './lib/common.js';
import { buildReport, type StepRecord } from './report.js';

interface Step {
  name: string;
  title: string;
  script: string;
  /** Result files the step writes, relative to the results folder. */
  results: string[];
  /** Steps written by others write into bench/results whatever the mode; ours follow --quick. */
  writesToFullResults?: boolean;
  /** Without a quick mode of its own the step is skipped by --quick (the report shows its last full results). */
  quick: 'own' | 'flag' | 'skip';
  timeoutMinutes: number;
  /** Arguments for the script (a variant of a shared script). */
  args?: string[];
}

const STEPS: Step[] = [
  { name: 'operations', title: 'Every operation, paid, vs the raw tool', script: 'dist/bench/operations.js', results: ['operations.json'], quick: 'own', timeoutMinutes: 12 },
  { name: 'payment', title: 'Payment path: quote, verify, settle', script: 'dist/bench/payment.js', results: ['payment.json'], quick: 'own', timeoutMinutes: 5 },
  // Two local Base chains (one mining a block every 2 s) and a service on each; 1,000 calls through one channel (200 with --quick).
  { name: 'payment-channels', title: 'Payment channels vs exact on a chain mining a block every 2 s; 1,000 calls through one channel', script: 'dist/bench/payment-channels.js', results: ['payment-channels.json'], quick: 'own', timeoutMinutes: 12 },
  { name: 'throughput', title: 'Throughput at concurrency 1, 2, 8 (12 MP JPEG to 1024 px WebP)', script: 'dist/bench/throughput.js', results: ['throughput.json'], quick: 'own', timeoutMinutes: 8 },
  { name: 'memory', title: 'Peak memory under eight concurrent 50 MB uploads', script: 'dist/bench/memory.js', results: ['memory.json'], quick: 'own', timeoutMinutes: 8 },
  { name: 'pdf-compress', title: 'PDF compression table', script: 'dist/bench/pdf-compress.js', results: ['pdf-compress.json'], quick: 'own', timeoutMinutes: 8 },
  { name: 'markdown', title: 'PDF to Markdown scores and speed, with peers', script: 'dist/bench/markdown/run.js', results: ['markdown.json', 'markdown.md'], writesToFullResults: true, quick: 'flag', timeoutMinutes: 20 },
  // A subset (20 pages, half with tables, in every style): OCR takes seconds per page on this shared machine.
  { name: 'markdown-scanned', title: 'PDF to Markdown on 200 dpi scans (local tesseract), 20 pages in each style', script: 'dist/bench/markdown/run.js', args: ['--scanned', '--limit=20'], results: ['markdown-scanned.json', 'markdown-scanned.md'], writesToFullResults: true, quick: 'skip', timeoutMinutes: 30 },
  { name: 'blocks', title: 'PDF blocks: the blocks\' Markdown and text scored beside the Markdown on its benchmark', script: 'dist/bench/blocks.js', results: ['blocks.json'], quick: 'flag', timeoutMinutes: 20 },
  { name: 'from-markdown', title: 'Markdown to PDF typesetting time vs Chromium', script: 'dist/bench/from-markdown.js', results: ['from-markdown.json'], writesToFullResults: true, quick: 'skip', timeoutMinutes: 45 },
  { name: 'searchable', title: 'Searchable PDFs: OCRmyPDF\'s CPU time and word recall per scanned page beside tesseract\'s', script: 'dist/bench/searchable.js', results: ['searchable.json'], quick: 'flag', timeoutMinutes: 10 },
  { name: 'ocr', title: 'Local OCR pages per second and word recall', script: 'dist/bench/ocr.js', results: ['ocr.json'], writesToFullResults: true, quick: 'skip', timeoutMinutes: 6 },
  // Other projects' test files (REAL_FILES_DIR, built by bench/real-files-corpus.sh): 5xx, charges without a result, over-refusals.
  { name: 'real-files', title: 'Real files nobody here made: qpdf\'s test PDFs, Office test documents, sharp\'s fixtures', script: 'dist/bench/real-files.js', results: ['real-files.json'], quick: 'own', timeoutMinutes: 60 },
  // Three service processes behind HAProxy with one Redis, 2,000 paid calls under SIGKILL, a Redis restart and a slow
  // facilitator (200 with --quick).
  { name: 'chaos', title: 'Three replicas behind HAProxy under faults: SIGKILL, Redis restart, slow facilitator', script: 'dist/bench/chaos.js', results: ['chaos.json'], quick: 'own', timeoutMinutes: 60 },
];

function runStep(step: Step, quick: boolean): Promise<{ exitCode: number | null; output: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const args = [path.join(ROOT, step.script), ...(step.args ?? []), ...(quick ? ['--quick'] : [])];
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let pending = '';
    const onData = (data: Buffer) => {
      const text = String(data);
      output = (output + text).slice(-200_000);
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) process.stdout.write(`    ${step.name} | ${line.trimStart()}\n`);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGTERM'); setTimeout(() => child.kill('SIGKILL'), 10_000).unref(); }, step.timeoutMinutes * 60_000);
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, output, timedOut });
    });
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick');
  const onlyArg = argv.find((a) => a.startsWith('--only'));
  const only = argv.includes('--report-only') ? []
    : onlyArg ? (onlyArg.includes('=') ? onlyArg.split('=')[1]! : argv[argv.indexOf(onlyArg) + 1] ?? '').split(',').filter(Boolean) : undefined;
  const unknown = only?.filter((name) => !STEPS.some((s) => s.name === name)) ?? [];
  if (unknown.length) {
    console.error(`unknown step(s): ${unknown.join(', ')}; the steps are ${STEPS.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  const outDir = outDirFor(quick);
  const resultsDir = path.join(outDir, 'results');
  const fullResultsDir = path.join(outDirFor(false), 'results');
  await mkdir(resultsDir, { recursive: true });
  const began = new Date();
  const loadAtStart = os.loadavg();
  const chosen = STEPS.filter((s) => !only || only.includes(s.name));
  console.log(`paydoc benchmarks (${quick ? 'quick subset' : 'full suite'}): ${chosen.length} step(s); results in ${path.relative(ROOT, outDir) || '.'}/`);
  console.log(`machine: ${os.availableParallelism()} cores, load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`);
  const records: StepRecord[] = [];
  for (const [index, step] of chosen.entries()) {
    const label = `[${index + 1}/${chosen.length}] ${step.name}`;
    if (!existsSync(path.join(ROOT, step.script))) {
      records.push({ name: step.name, title: step.title, status: 'missing', seconds: 0, detail: `${step.script} is not built (is the source file there?)` });
      console.log(`${label}: MISSING (${step.script})`);
      continue;
    }
    if (quick && step.quick === 'skip') {
      records.push({ name: step.name, title: step.title, status: 'skipped', seconds: 0, detail: 'no quick mode: the report shows its last full results' });
      console.log(`${label}: skipped in the quick run (no quick mode)`);
      continue;
    }
    console.log(`${label}: ${step.title} ...`);
    // Others' steps write into bench/results: in a quick run keep the full results and move the quick ones aside.
    const divert = quick && step.writesToFullResults;
    const backups: Array<{ file: string; backup: string }> = [];
    if (divert) {
      for (const name of step.results) {
        const file = path.join(fullResultsDir, name);
        if (existsSync(file)) { const backup = `${file}.tmp`; await copyFile(file, backup); backups.push({ file, backup }); }
      }
    }
    const started = performance.now();
    const { exitCode, output, timedOut } = await runStep(step, quick);
    const seconds = Math.round((performance.now() - started) / 1000);
    if (divert) {
      for (const name of step.results) {
        const file = path.join(fullResultsDir, name);
        const unchanged = backups.some((b) => b.file === file && readFileSync(b.backup).equals(readFileSync(file)));
        if (existsSync(file) && !unchanged) await rename(file, path.join(resultsDir, name));
      }
      for (const { file, backup } of backups) await rename(backup, file);
      // A quick run that only prints its tables (the Markdown step) still gets into the quick report.
      if (step.name === 'markdown') await writeFile(path.join(resultsDir, 'markdown-quick-output.txt'), output);
    }
    const status = timedOut ? 'timeout' : exitCode === 0 ? 'ok' : 'failed';
    records.push({
      name: step.name, title: step.title, status, seconds,
      ...(status === 'ok' ? {} : { detail: `${timedOut ? `stopped after ${step.timeoutMinutes} min` : `exit code ${exitCode}`}: ${output.trim().split('\n').slice(-3).join(' / ').slice(0, 400)}` }),
    });
    console.log(`${label}: ${status.toUpperCase()} in ${seconds} s`);
  }
  // A run of some steps keeps the record of the last run of the others, so the report lists every step.
  const runFile = path.join(resultsDir, 'run.json');
  // The machine is kept with the run it describes: a later run of some steps (--only) may be on another one.
  const now: { began: string; loadAtStart: number[]; loadAtEnd: number[]; wallSeconds: number; machine?: ReturnType<typeof machine> } = {
    began: began.toISOString(), loadAtStart, loadAtEnd: os.loadavg(),
    wallSeconds: Math.round((Date.now() - began.getTime()) / 1000), machine: machine(),
  };
  let header = now;
  let allRecords = records.map((r) => ({ ...r, measured: now.began }));
  if (only && existsSync(runFile)) {
    const saved = JSON.parse(readFileSync(runFile, 'utf8')) as { header: typeof now; records: Array<StepRecord & { measured: string }> };
    header = saved.header;
    allRecords = STEPS.map((step) => allRecords.find((r) => r.name === step.name) ?? saved.records.find((r) => r.name === step.name))
      .filter((r): r is StepRecord & { measured: string } => r !== undefined);
  }
  await writeFile(runFile, `${JSON.stringify({ header, records: allRecords }, null, 1)}\n`);
  const report = await buildReport({
    quick, outDir, resultsDir, fullResultsDir, records: allRecords,
    began: new Date(header.began), loadAtStart: header.loadAtStart, loadAtEnd: header.loadAtEnd,
    machine: header.machine ?? machine(), wallSeconds: header.wallSeconds, partial: only !== undefined && header !== now,
    ...(only && records.length ? { rerun: { steps: records.map((r) => r.name), at: now.began } } : {}),
  });
  console.log(`report: ${path.relative(ROOT, report)} (${Math.round((Date.now() - began.getTime()) / 1000)} s in all)`);
  await rm(path.join(resultsDir, '.keep'), { force: true });
  if (records.some((r) => r.status === 'failed' || r.status === 'timeout')) process.exitCode = 1;
}

await main();

// The compression table: for text-only, image-heavy and scanned PDFs, the output size and the
// rendered-page similarity (SSIM on greyscale renders) of the service's three levels next to
// ghostscript's /printer, /ebook and /screen presets, all on the same inputs in one run.
// Targets: balanced no larger than /ebook at SSIM >= 0.95; max no larger than /screen.
import { mkdtemp, readFile, rm, writeFile, stat } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { compress, compressToTarget } from '../workers/pdf/compress.js';
import { renderer, searchTarget } from '../workers/image/transform.js';
import { inspectImage } from '../checks/image.js';
import { ServiceError } from '../core/errors.js';
import type { ImagePlan } from '../operations/image/image-plan.js';
import { runTool } from '../tools/process/run-tool.js';
import type { Job } from '../core/job.js';
import { makePdf, photographedPage } from '../test/support/pdf-fixtures.js';
import { CORPUS, parseStepArgs, progress, start, writeResult, photoJpeg } from './lib/common.js';

const RENDER_DPI = 72;
const SSIM_PAGES = 3;

interface Input { name: string; kind: 'text-only' | 'image-heavy' | 'scanned'; bytes: Uint8Array }

async function inputs(quick: boolean): Promise<Input[]> {
  const text = new Uint8Array(await readFile(path.join(CORPUS, '026-latex-multicolumn/multicolumn.pdf')));
  const photos = await Promise.all([0, 1, 2].map(async () => {
    const jpeg = await photoJpeg(2400, 1800, 92);
    return { jpeg: { bytes: jpeg, width: 2400, height: 1800, color: true } };
  }));
  const scans = await Promise.all([0, 1].map(async () => ({ jpeg: await photographedPage(1700, 2200) })));
  const all: Input[] = [
    { name: 'latex-multicolumn (corpus)', kind: 'text-only', bytes: text },
    { name: 'three 2400x1800 photos (generated)', kind: 'image-heavy', bytes: makePdf(photos) },
    { name: 'two photographed pages (generated)', kind: 'scanned', bytes: makePdf(scans) },
  ];
  if (!quick) {
    all.push({ name: 'geotopo (corpus)', kind: 'image-heavy', bytes: new Uint8Array(await readFile(path.join(CORPUS, '009-pdflatex-geotopo/GeoTopo-komprimiert.pdf'))) });
  }
  return all;
}

/** Greyscale renders of the first pages, at a fixed size so two renders can be compared pixel for pixel. */
async function renderPages(file: string, dir: string): Promise<Array<{ data: Buffer; width: number; height: number }>> {
  const pages: Array<{ data: Buffer; width: number; height: number }> = [];
  for (let page = 1; page <= SSIM_PAGES; page++) {
    const res = await runTool('mutool', ['draw', '-q', '-r', String(RENDER_DPI), '-c', 'gray', '-F', 'png', '-o', '-', file, String(page)], { cwd: dir, timeoutMs: 60_000 });
    if (res.exitCode !== 0 || res.stdout.length === 0) break;
    const { data, info } = await sharp(res.stdout).greyscale().raw().toBuffer({ resolveWithObject: true });
    pages.push({ data, width: info.width, height: info.height });
  }
  return pages;
}

/** Mean SSIM over 8x8 windows (the standard constants for 8-bit images). */
function ssim(a: Buffer, b: Buffer, width: number, height: number): number {
  const C1 = (0.01 * 255) ** 2;
  const C2 = (0.03 * 255) ** 2;
  let sum = 0;
  let windows = 0;
  for (let y = 0; y + 8 <= height; y += 8) {
    for (let x = 0; x + 8 <= width; x += 8) {
      let ma = 0; let mb = 0;
      for (let j = 0; j < 8; j++) for (let i = 0; i < 8; i++) { const k = (y + j) * width + x + i; ma += a[k]; mb += b[k]; }
      ma /= 64; mb /= 64;
      let va = 0; let vb = 0; let cov = 0;
      for (let j = 0; j < 8; j++) for (let i = 0; i < 8; i++) {
        const k = (y + j) * width + x + i;
        const da = a[k] - ma; const db = b[k] - mb;
        va += da * da; vb += db * db; cov += da * db;
      }
      va /= 63; vb /= 63; cov /= 63;
      sum += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
      windows += 1;
    }
  }
  return windows ? sum / windows : 1;
}

async function similarity(original: Array<{ data: Buffer; width: number; height: number }>, file: string, dir: string): Promise<number> {
  const pages = await renderPages(file, dir);
  if (pages.length !== original.length) return 0;
  let total = 0;
  for (const [i, page] of pages.entries()) {
    const ref = original[i];
    if (page.width !== ref.width || page.height !== ref.height) return 0;
    total += ssim(ref.data, page.data, ref.width, ref.height);
  }
  return total / pages.length;
}

const SETTINGS = { modelConcurrency: 1, modelDpi: 150, ocrEngine: 'model' as const, ocrLanguages: 'eng', maxZipBytes: 1 << 29 };

interface TargetRow {
  input: string; what: string; targetKb: number; reached: boolean; step?: string; steps: number; bytes?: number; ms: number;
}

/**
 * The cost of compress-to-a-target (target_kb) on a PDF: a target just under balanced's size (the
 * search must go on to max or below) and a quarter of max's (deeper, or unreachable), with the
 * step that answered, how many steps ran and the time.
 */
async function pdfTargetRows(input: Input, dir: string, source: string, balancedBytes: number, maxBytes: number): Promise<TargetRow[]> {
  const rows: TargetRow[] = [];
  for (const targetKb of [Math.floor((balancedBytes - 1) / 1024), Math.max(1, Math.floor(maxBytes / 4 / 1024))]) {
    const jobDir = await mkdtemp(path.join(dir, 'target-'));
    const job: Job = { operation: 'pdf.compress', files: [{ bytes: input.bytes, path: source }], params: {}, jobDir, deadline: Date.now() + 120_000, settings: SETTINGS };
    const t0 = performance.now();
    try {
      const out = await compressToTarget(job, source, targetKb * 1024, jobDir);
      rows.push({ input: input.name, what: 'pdf', targetKb, reached: true, step: out.step, steps: out.tried.length, bytes: out.body.byteLength, ms: Math.round(performance.now() - t0) });
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code !== 'TARGET_UNREACHABLE') throw err;
      rows.push({ input: input.name, what: 'pdf', targetKb, reached: false, steps: 5, ms: Math.round(performance.now() - t0) });
    }
  }
  return rows;
}

/** The image search's cost: a 12 MP photo to half of what its ceiling quality (90) makes, per output format. */
async function imageTargetRows(): Promise<TargetRow[]> {
  const photo = await photoJpeg();
  const header = await inspectImage(photo);
  const rows: TargetRow[] = [];
  for (const format of ['jpeg', 'webp', 'avif', 'png'] as const) {
    const params: ImagePlan = { header, transform: { kind: 'compress' }, encoding: { format, quality: 90, ...(format === 'png' ? { paletteColors: 256 } : {}) } };
    const job: Job<ImagePlan> = { operation: 'image.compress', files: [{ bytes: photo }], params, jobDir: '/dev/shm', deadline: Date.now() + 300_000, settings: SETTINGS };
    const render = renderer(job);
    const ceiling = (await render(params.encoding)).byteLength;
    const targetKb = Math.floor(ceiling / 2 / 1024);
    const t0 = performance.now();
    const found = await searchTarget(render, params.encoding, targetKb * 1024);
    const row = { input: '12 MP photo (generated JPEG)', what: format, targetKb, reached: true, step: `${format === 'png' ? 'colours' : 'quality'} ${found.setting}`, steps: found.encodes, bytes: found.body.byteLength, ms: Math.round(performance.now() - t0) };
    rows.push(row);
    progress(`compress target_kb ${format.padEnd(5)} ${targetKb} KB: ${row.step}, ${row.steps} encodes, ${row.ms} ms`);
  }
  return rows;
}

async function main() {
  const args = parseStepArgs();
  const targetRows: TargetRow[] = [];
  const started = start();
  const rows: Array<Record<string, unknown>> = [];
  for (const input of await inputs(args.quick)) {
    const dir = await mkdtemp(path.join('/dev/shm', 'bench-compress-'));
    try {
      const source = path.join(dir, 'in.pdf');
      await writeFile(source, input.bytes);
      const original = await renderPages(source, dir);
      const candidates: Array<{ method: string; file: string; ms: number }> = [];
      for (const level of ['lossless', 'balanced', 'max'] as const) {
        const jobDir = await mkdtemp(path.join(dir, 'job-'));
        const t0 = performance.now();
        const job: Job<{ level: 'lossless' | 'balanced' | 'max' }> = {
          operation: 'pdf.compress', files: [{ bytes: input.bytes, path: source }], params: { level }, jobDir,
          deadline: Date.now() + 300_000,
          settings: { modelConcurrency: 1, modelDpi: 150, ocrEngine: 'model', ocrLanguages: 'eng', maxZipBytes: 1 << 29 },
        };
        const out = await compress(job);
        const file = path.join(dir, `${level}.pdf`);
        await writeFile(file, out.body);
        candidates.push({ method: `service ${level}`, file, ms: performance.now() - t0 });
      }
      for (const preset of ['printer', 'ebook', 'screen']) {
        const file = path.join(dir, `gs-${preset}.pdf`);
        const t0 = performance.now();
        await runTool('gs', ['-q', '-dNOPAUSE', '-dBATCH', '-dSAFER', '-sDEVICE=pdfwrite', `-dPDFSETTINGS=/${preset}`, `-sOutputFile=${file}`, source], { cwd: dir, timeoutMs: 300_000 });
        candidates.push({ method: `gs /${preset}`, file, ms: performance.now() - t0 });
      }
      const sizeOf = async (method: string) => (await stat(candidates.find((c) => c.method === method)!.file)).size;
      for (const row of await pdfTargetRows(input, dir, source, await sizeOf('service balanced'), await sizeOf('service max'))) {
        targetRows.push(row);
        progress(`pdf-compress ${input.kind.padEnd(11)} target_kb=${row.targetKb}: ${row.reached ? `${row.step} (${row.bytes} B)` : 'unreachable'}, ${row.steps} steps, ${row.ms} ms`);
      }
      const inputBytes = input.bytes.byteLength;
      for (const c of candidates) {
        const bytes = (await stat(c.file)).size;
        const ssim = Math.round((await similarity(original, c.file, dir)) * 10000) / 10000;
        const row = {
          input: input.name, kind: input.kind, method: c.method, inputBytes, bytes,
          ratio: Math.round((bytes / inputBytes) * 1000) / 1000, ssim, ms: Math.round(c.ms),
        };
        rows.push(row);
        progress(`pdf-compress ${input.kind.padEnd(11)} ${c.method.padEnd(17)} ${String(bytes).padStart(9)} B (${row.ratio}x)  SSIM ${row.ssim}`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const get = (input: string, method: string) => rows.find((r) => r.input === input && r.method === method)!;
  const targets = [...new Set(rows.map((r) => String(r.input)))].map((input) => ({
    input,
    balancedNoLargerThanEbook: (get(input, 'service balanced').bytes as number) <= (get(input, 'gs /ebook').bytes as number),
    balancedSsimAtLeast095: (get(input, 'service balanced').ssim as number) >= 0.95,
    maxNoLargerThanScreen: (get(input, 'service max').bytes as number) <= (get(input, 'gs /screen').bytes as number),
  }));
  targetRows.push(...await imageTargetRows());
  const file = await writeResult(args, 'pdf-compress', { renderDpi: RENDER_DPI, ssimPages: SSIM_PAGES, rows, targets, targetSearch: targetRows }, started);
  progress(`pdf-compress: wrote ${file}`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});

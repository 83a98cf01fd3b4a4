// What every benchmark step shares: where results go, the machine description stamped on each
// result, progress lines, and the generated inputs (a 12-megapixel photo-like JPEG, a text image).
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('project root not found');
    dir = up;
  }
  return dir;
}

export const ROOT = findRoot();
export const CORPUS = path.resolve(ROOT, '../shared/corpus/sample-files');

export interface StepArgs {
  quick: boolean;
  /** Where this run's results, charts and report go. */
  outDir: string;
}

/** --quick writes under bench/quick/ so that a quick run never replaces the full results. */
export function outDirFor(quick: boolean): string {
  return quick ? path.join(ROOT, 'bench/quick') : path.join(ROOT, 'bench');
}

export function parseStepArgs(argv = process.argv.slice(2)): StepArgs {
  const quick = argv.includes('--quick');
  return { quick, outDir: outDirFor(quick) };
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  loadAverage: number[];
}

export function machine(): Machine {
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export async function writeResult(
  args: StepArgs, name: string, data: Record<string, unknown>, startedAt: { time: Date; load: number[] },
): Promise<string> {
  const dir = path.join(args.outDir, 'results');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  const result = {
    benchmark: name,
    measured: new Date().toISOString(),
    quick: args.quick,
    wallSeconds: Math.round((Date.now() - startedAt.time.getTime()) / 100) / 10,
    machine: { ...machine(), loadAverageAtStart: startedAt.load },
    note: 'Times are milliseconds of wall-clock time on this machine (see machine); the machine was shared with other work, so compare sides within one run, not across runs.',
    ...data,
  };
  await writeFile(file, `${JSON.stringify(result, null, 1)}\n`);
  return file;
}

export function start(): { time: Date; load: number[] } {
  return { time: new Date(), load: os.loadavg().map((l) => Math.round(l * 100) / 100) };
}

export function progress(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

/**
 * A photo-like 12-megapixel JPEG (4032 x 3024, a phone camera's size): smooth gradients,
 * large soft shapes and sensor-like noise, so that it compresses like a photograph and
 * not like flat colour or pure noise. Deterministic.
 */
export async function photoJpeg(width = 4032, height = 3024, quality = 88): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  let seed = 0x2545f491;
  const random = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) / 0xffffffff; };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const u = x / width, v = y / height;
      const wave = Math.sin(u * 9 + Math.cos(v * 5) * 2) * 40;
      const blob = 60 * Math.exp(-(((u - 0.62) ** 2) + ((v - 0.4) ** 2)) * 18);
      const noise = (random() - 0.5) * 18;
      pixels[i] = clamp(70 + 120 * u + wave + blob + noise);
      pixels[i + 1] = clamp(90 + 80 * v - wave * 0.5 + noise);
      pixels[i + 2] = clamp(160 - 90 * u * v + blob * 0.6 + noise);
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality }).toBuffer();
}

function clamp(value: number): number {
  return value < 0 ? 0 : value > 255 ? 255 : Math.round(value);
}

/** Black text on white, about 1600 x 520 pixels: a screenshot-sized OCR input. */
export async function textImagePng(): Promise<Buffer> {
  const lines = [
    'Invoice 2024-117 from Harbour Supplies Ltd.',
    'Delivered on 14 March: 12 boxes of printer paper,',
    'three toner cartridges and one replacement drum.',
    'Total due within thirty days: 418.60 EUR.',
    'Questions? Write to accounts at harbour supplies.',
  ];
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="520"><rect width="100%" height="100%" fill="#fff"/>`
    + lines.map((line, i) => `<text x="40" y="${80 + i * 88}" font-family="DejaVu Sans" font-size="44" fill="#111">${line}</text>`).join('')
    + '</svg>';
  return sharp(Buffer.from(svg)).png().toBuffer();
}

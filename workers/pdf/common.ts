// Small pieces every PDF work function uses: where the input lives, counting a result's pages
// inside the job's deadline, and reading a result back.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Job } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { pageCountForJob } from '../../tools/engines/qpdf.js';

/** The seekable copy of file i (the front end writes PDFs to the job directory; tests may not). */
export async function inputPath(input: Job, index = 0): Promise<string> {
  const file = input.files[index];
  if (file.path) return file.path;
  const written = path.join(input.jobDir, `input-${index}.pdf`);
  writeFileSync(written, file.bytes, { mode: 0o600 });
  file.path = written;
  return written;
}

/**
 * Whether any of the job's inputs from `first` on holds one of these markers in its raw bytes:
 * a cheap look for PDF names that show outside compressed streams (an image's /DCTDecode filter,
 * the catalog's /Outlines), before deciding to run an engine for them.
 */
export async function inputsContain(input: Job, markers: readonly string[], first = 0): Promise<boolean> {
  for (let i = first; i < input.files.length; i++) {
    const given = input.files[i].bytes;
    const bytes = given.byteLength ? given : await readBytes(await inputPath(input, i));
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (markers.some((marker) => buffer.includes(marker))) return true;
  }
  return false;
}

/** An engine's result, read on the pool thread at once (see withScratch for why synchronously). */
export async function readBytes(file: string): Promise<Uint8Array> {
  const buffer = readFileSync(file);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** The page count of a file the job wrote; 0 when qpdf cannot read it. */
export async function countPages(input: Job, file: string, cwd: string): Promise<number> {
  return pageCountForJob(file, { cwd, timeoutMs: timeLeft(input) });
}

export const PDF = 'application/pdf';
export const ZIP = 'application/zip';

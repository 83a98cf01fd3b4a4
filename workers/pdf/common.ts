// Small pieces every PDF work function uses: where the input lives, running qpdf inside the
// job's deadline, and reading a result back.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Job } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { runTool, type RunResult } from '../../tools/process/run-tool.js';
import { asToolError, damaged } from '../../tools/process/tool-errors.js';
import { qpdfSucceeded } from '../../tools/engines/qpdf.js';

/** The seekable copy of file i (the front end writes PDFs to the job directory; tests may not). */
export async function inputPath(input: Job, index = 0): Promise<string> {
  const file = input.files[index];
  if (file.path) return file.path;
  const written = path.join(input.jobDir, `input-${index}.pdf`);
  writeFileSync(written, file.bytes, { mode: 0o600 });
  file.path = written;
  return written;
}

export async function runIn(input: Job, tool: string, args: readonly string[], what: string, cwd = input.jobDir, maxStdout?: number): Promise<RunResult> {
  try {
    return await runTool(tool, args, { cwd, timeoutMs: timeLeft(input), maxStdout });
  } catch (err) {
    throw asToolError(err, what);
  }
}

/** Runs qpdf; its failure on an input that passed inspection means damage the quick checks could not see. */
export async function qpdf(input: Job, args: readonly string[], cwd: string): Promise<RunResult> {
  const result = await runIn(input, 'qpdf', args, 'qpdf', cwd);
  if (!qpdfSucceeded(result)) damaged('qpdf could not rewrite it (the file is damaged)');
  return result;
}

/**
 * Whether any of the job's inputs from `first` on holds one of these markers in its raw bytes:
 * a cheap look for PDF names that show outside compressed streams (an image's /DCTDecode filter,
 * the catalog's /Outlines), before deciding to run a tool for them.
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

/** A tool's result, read on the pool thread at once (see withScratch for why synchronously). */
export async function readBytes(file: string): Promise<Uint8Array> {
  const buffer = readFileSync(file);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

export async function countPages(input: Job, file: string, cwd: string): Promise<number> {
  const result = await runIn(input, 'qpdf', ['--show-npages', file], 'qpdf', cwd);
  if (!qpdfSucceeded(result)) return 0;
  return Number.parseInt(Buffer.from(result.stdout).toString('utf8').trim(), 10) || 0;
}

export const PDF = 'application/pdf';
export const ZIP = 'application/zip';

/** Compacts a page list into qpdf's syntax: runs of consecutive pages become a-b. */
export function qpdfPageSpec(pages: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < pages.length) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j] + 1) j++;
    parts.push(i === j ? `${pages[i]}` : `${pages[i]}-${pages[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

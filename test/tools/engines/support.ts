// Shared by the engine tests: a private scratch directory per test, files written into it, and a
// look at a result through another binary than the one under test.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runTool } from '../../../tools/process/run-tool.js';

export const scratchRoot = (): string => (os.platform() === 'linux' ? '/dev/shm' : os.tmpdir());

/** Runs fn with a fresh directory, removed afterwards. */
export async function inScratch<T>(fn: (dir: string, file: (name: string, bytes: Uint8Array | string) => Promise<string>) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(scratchRoot(), 'paydoc-engine-'));
  const file = async (name: string, bytes: Uint8Array | string) => {
    const target = path.join(dir, name);
    await writeFile(target, bytes);
    return target;
  };
  try {
    return await fn(dir, file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A tool's stdout as text, for looking at a result with another binary (exit status checked). */
export async function textOf(tool: string, args: readonly string[], cwd?: string): Promise<string> {
  const result = await runTool(tool, args, { timeoutMs: 30_000, ...(cwd ? { cwd } : {}) });
  if (result.exitCode !== 0) throw new Error(`${tool} exited with ${result.exitCode}: ${result.stderr}`);
  return Buffer.from(result.stdout).toString('utf8');
}

/** A one-page PDF with one filled text field (name = Alice) and no appearance for it; NeedAppearances as asked. */
export function formPdf(needAppearances: boolean): Buffer {
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R] ${needAppearances ? '/NeedAppearances true ' : ''}/DA (/Helv 12 Tf 0 g) /DR << /Font << /Helv 5 0 R >> >> >> >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Annots [4 0 R] /Resources << >> >>',
    '<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V (Alice) /Rect [20 100 200 130] /P 3 0 R /DA (/Helv 12 Tf 0 g) /F 4 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

// The results of the tests, looked at with tools independent of the code under test (qpdf,
// poppler, unzip): facts about a PDF, the entries of a ZIP, any tool on bytes in a scratch file.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runTool } from '../../tools/process/run-tool.js';
import { jobRoot } from './jobs.js';

/** Runs a checking tool on bytes written to a scratch file. */
export async function withFile<T>(bytes: Uint8Array, ext: string, fn: (file: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(jobRoot(), 'pdf-check-'));
  try {
    const file = path.join(dir, `file.${ext}`);
    await writeFile(file, bytes);
    return await fn(file, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function tool(name: string, args: string[], cwd?: string): Promise<{ code: number; out: string; err: string }> {
  const r = await runTool(name, args, { timeoutMs: 60_000, cwd });
  return { code: r.exitCode, out: Buffer.from(r.stdout).toString('utf8'), err: r.stderr };
}

export interface PdfFacts {
  check: number;
  pages: number;
  rotations: number[];
  encrypted: boolean;
  text: string;
  outlineItems: number;
  links: number;
}

/** Facts about a PDF from qpdf and poppler, independent of the code under test. */
export async function pdfFacts(bytes: Uint8Array, password?: string): Promise<PdfFacts> {
  return withFile(bytes, 'pdf', async (file) => {
    const pw = password ? [`--password=${password}`] : [];
    const check = await tool('qpdf', [...pw, '--check', file]);
    const info = await tool('pdfinfo', [...(password ? ['-upw', password] : []), '-f', '1', '-l', '10000', file]);
    const pages = Number(/^Pages:\s+(\d+)/m.exec(info.out)?.[1] ?? -1);
    const rotations = [...info.out.matchAll(/^Page\s+\d+ rot:\s+(\d+)/gm)].map((m) => Number(m[1]));
    const enc = await tool('qpdf', [...pw, '--show-encryption', file]);
    const text = await tool('pdftotext', [...(password ? ['-upw', password] : []), file, '-']);
    // qpdf's JSON v2: the outline tree, and every object (under "qpdf") for the link annotations.
    // A failed run throws rather than counting zero, so "kept every link" can fail.
    const json = await tool('qpdf', [...pw, '--json', '--json-key=outlines', '--json-key=qpdf', file]);
    if (json.code !== 0 && json.code !== 3) throw new Error(`qpdf --json failed (${json.code}): ${json.err.slice(0, 200)}`);
    const parsed = JSON.parse(json.out) as { outlines: { kids?: unknown[] }[] };
    type Item = { kids?: unknown[] };
    const count = (items: Item[]): number => items.reduce((n, i) => n + 1 + count((i.kids ?? []) as Item[]), 0);
    const outlineItems = count(parsed.outlines);
    const links = (json.out.match(/"\/Subtype": "\/Link"/g) ?? []).length;
    return { check: check.code, pages, rotations, encrypted: !/File is not encrypted/.test(enc.out), text: text.out, outlineItems, links };
  });
}

/** Entry names and bytes of a ZIP, read with unzip. */
export async function zipEntries(bytes: Uint8Array): Promise<{ name: string; bytes: Uint8Array }[]> {
  return withFile(bytes, 'zip', async (file, dir) => {
    const list = await tool('zipinfo', ['-1', file]);
    const names = list.out.split('\n').filter(Boolean);
    const out: { name: string; bytes: Uint8Array }[] = [];
    for (const name of names) {
      const r = await runTool('unzip', ['-p', file, name], { timeoutMs: 60_000, cwd: dir });
      out.push({ name, bytes: r.stdout });
    }
    return out;
  });
}

/** A poppler tool's output on a PDF (pdftotext writes to stdout); a failing run throws with its stderr. */
export async function poppler(name: 'pdftotext' | 'pdffonts' | 'pdfimages' | 'pdfinfo', pdf: Uint8Array, ...args: string[]): Promise<string> {
  return withFile(pdf, 'pdf', async (file) => {
    const r = await tool(name, name === 'pdftotext' ? [...args, file, '-'] : [...args, file]);
    if (r.code !== 0) throw new Error(`${name} exited ${r.code}: ${r.err}`);
    return r.out;
  });
}

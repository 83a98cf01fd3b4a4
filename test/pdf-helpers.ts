// Shared by the PDF tests: run an operation the way the service does (inspection, then the
// work function in a private job directory), and look at results with independent tools.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import type { JobOutput } from '../core/job.js';
import type { OperationId } from '../operations/index.js';
import { plannedJob, type PlannedJob } from './support/jobs.js';
import { runTool } from '../tools/process/run-tool.js';

export const jobRoot = (): string => (os.platform() === 'linux' ? '/dev/shm' : os.tmpdir());

export interface RunOutcome {
  output?: JobOutput;
  error?: { code: string; status: number; message: string; field?: string };
  /** What was left in the job directory besides the inputs. */
  leftovers: string[];
  ms: number;
}

/** Runs the operation as the service does: its checks and plan, then its work function in a private job directory. */
export async function runOperation(id: OperationId, inputs: readonly Uint8Array[], fields: Record<string, string | number | undefined>,
  options: { timeoutMs?: number; maxZipBytes?: number } = {}): Promise<RunOutcome> {
  const started = Date.now();
  let planned: PlannedJob | undefined;
  try {
    planned = await plannedJob(id, inputs, Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])), {
      root: jobRoot(), ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.maxZipBytes !== undefined ? { settings: { maxZipBytes: options.maxZipBytes } } : {}),
    });
    const output = await planned.run();
    return { output, leftovers: await leftoversIn(planned.job.jobDir), ms: Date.now() - started };
  } catch (err) {
    const e = err as { code?: string; status?: number; message: string; extra?: { field?: string } };
    return {
      error: { code: e.code ?? 'THROWN', status: e.status ?? 0, message: e.message, field: e.extra?.field },
      leftovers: planned ? await leftoversIn(planned.job.jobDir) : [], ms: Date.now() - started,
    };
  } finally {
    await planned?.jobDir.remove();
  }
}

/** What a job left in its directory besides the uploads the service wrote there. */
async function leftoversIn(jobDir: string): Promise<string[]> {
  return (await readdir(jobDir)).filter((n) => !/^input-\d+\.pdf$/.test(n));
}

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
    const count = (items: { kids?: unknown[] }[]): number => items.reduce((n, i) => n + 1 + count((i.kids ?? []) as { kids?: unknown[] }[]), 0);
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

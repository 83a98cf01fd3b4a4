// PDFs typeset at test time by WeasyPrint from HTML and a stylesheet, as the benchmark's styles are,
// and the local tables engine's answer for one, as the service would run the job.
import { mkdtemp, readFile } from 'node:fs/promises';
import path from 'node:path';
import Code from '@hapi/code';
import { runTool } from '../../tools/process/run-tool.js';
import { plannedJob } from './jobs.js';

const { expect } = Code;

export interface Table { page: number; title: string | null; headers: string[]; rows: string[][] }

/** The PDF WeasyPrint makes of `body` under `css`, typeset in a new folder under `scratch`. */
export async function pdfFromHtml(scratch: string, css: string, body: string): Promise<Uint8Array> {
  const dir = await mkdtemp(path.join(scratch, 'render-'));
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head><body>${body}</body></html>`;
  const r = await runTool('weasyprint', ['-', 'out.pdf'], { cwd: dir, input: new TextEncoder().encode(html), timeoutMs: 60_000 });
  expect(r.exitCode).to.equal(0);
  return new Uint8Array(await readFile(path.join(dir, 'out.pdf')));
}

export const LOCAL_TABLES = { config: { modelBaseUrl: '', tablesEngine: 'local' as const }, settings: { tablesEngine: 'local' as const } };

/** The pdf.tables job the service would run for the upload, checked and planned as it would be, on the local engine. */
export async function localTablesOf(scratch: string, pdf: Uint8Array): Promise<Table[]> {
  const planned = await plannedJob('pdf.tables', [pdf], {}, { root: scratch, ...LOCAL_TABLES });
  const out = await planned.run().finally(() => planned.jobDir.remove());
  expect(out.mediaType).to.equal('application/json');
  return (JSON.parse(Buffer.from(out.body).toString('utf8')) as { tables: Table[] }).tables;
}

// Real files nobody here made: other projects' test PDFs, Office documents and odd images, each
// through a few operations of the service (in-process, local Base chain, the standard x402
// client), with the payer's balance read around every call, beside the raw tool on the same file.
// What it looks for: 5xx answers, a balance that moved without a 200, and refusals of files the
// raw tool handles.
//   sh bench/real-files-corpus.sh MIRRORS_DIR /tmp/real-files   (the corpus; not committed)
//   REAL_FILES_DIR=/tmp/real-files node dist/bench/real-files.js [--quick]
// -> bench/results/real-files.json (bench/quick/results with --quick: 8 files of each kind)
import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { wrapFetchWithPayment } from '@x402/fetch';
import { operations } from '../operations/index.js';
import { createPayer } from '../client/payer.js';
import { runTool } from '../tools/process/run-tool.js';
import { parseStepArgs, progress, start, writeResult } from './lib/common.js';
import { startBenchService, form } from './lib/service.js';

type Kind = 'qpdf' | 'office' | 'images';

const CALLS: Record<Kind, Array<{ id: string; fields?: Record<string, string | number> }>> = {
  qpdf: [
    { id: 'pdf.extract' }, { id: 'pdf.compress' }, { id: 'pdf.pages', fields: { rotate: 90 } },
    { id: 'pdf.sanitize' }, { id: 'pdf.markdown' }, { id: 'pdf.render', fields: { dpi: 72 } },
  ],
  office: [{ id: 'office.pdf' }],
  images: [{ id: 'image.resize', fields: { width: 64 } }, { id: 'image.compress', fields: { quality: 70 } }],
};

const SOURCES: Record<Kind, string> = {
  qpdf: 'qpdf/qpdf qpdf/qtest/qpdf (PDFs)',
  office: 'apache/poi test-data, python-docx and python-pptx test files (Office)',
  images: 'lovell/sharp test/fixtures (images)',
};

const TYPES: Record<string, string> = {
  pdf: 'application/pdf', doc: 'application/msword', xls: 'application/vnd.ms-excel', ppt: 'application/vnd.ms-powerpoint',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text', ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation', rtf: 'application/rtf',
  jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif', tif: 'image/tiff',
  tiff: 'image/tiff', avif: 'image/avif', heic: 'image/heic', svg: 'image/svg+xml',
};

const CALL_TIMEOUT_MS = 180_000;

export interface CallRecord {
  kind: Kind;
  file: string;
  bytes: number;
  operation: string;
  /** The unpaid request's status (402 is a quote) and its error code when it is an error. */
  quoteStatus: number;
  quoteCode?: string;
  /** The paid retry's status and error code (absent when nothing was quoted). */
  paidStatus?: number;
  paidCode?: string;
  message?: string;
  /** The payer's balance moved during the call. */
  charged: boolean;
  /** The raw tool handles the file (exit 0, or qpdf's 3 for warnings). */
  rawHandles: boolean;
  rawDetail: string;
  ms: number;
}

/** The raw tool a person would run on the file: does it read it? */
async function rawTool(kind: Kind, file: string, scratch: string): Promise<{ handles: boolean; detail: string }> {
  const run = async (name: string, args: string[], okCodes = [0]) => {
    const r = await runTool(name, args, { cwd: scratch, timeoutMs: CALL_TIMEOUT_MS });
    return { ok: okCodes.includes(r.exitCode ?? -1), detail: `${name} exit ${r.exitCode}` };
  };
  if (kind === 'qpdf') {
    const check = await run('qpdf', ['--check', file], [0, 3]);
    const text = await run('pdftotext', ['-q', file, path.join(scratch, 'out.txt')]);
    return { handles: check.ok && text.ok, detail: `${check.detail}, ${text.detail}` };
  }
  if (kind === 'images') {
    // libvips through sharp, as a script would call it: does it decode every pixel?
    try {
      const { info } = await sharp(file, { failOn: 'none', limitInputPixels: false }).raw().toBuffer({ resolveWithObject: true });
      return { handles: true, detail: `sharp decodes ${info.width}x${info.height}` };
    } catch (error) {
      return { handles: false, detail: `sharp: ${String(error).slice(0, 120)}` };
    }
  }
  const profile = `-env:UserInstallation=file://${scratch}/profile`;
  const r = await runTool('soffice', [profile, '--headless', '--convert-to', 'pdf', '--outdir', scratch, file],
    { cwd: scratch, timeoutMs: CALL_TIMEOUT_MS });
  const produced = (await readdir(scratch)).some((f) => f.endsWith('.pdf'));
  return { handles: r.exitCode === 0 && produced, detail: `soffice exit ${r.exitCode}, ${produced ? 'a PDF' : 'no PDF'}` };
}

function errorOf(bytes: Uint8Array): { code?: string; message?: string } {
  try {
    const body = JSON.parse(Buffer.from(bytes).toString('utf8')) as { error?: { code?: string; message?: string } };
    return { code: body.error?.code, message: body.error?.message };
  } catch {
    return { message: Buffer.from(bytes.subarray(0, 200)).toString('utf8') };
  }
}

async function main(): Promise<void> {
  const args = parseStepArgs();
  const dir = process.env.REAL_FILES_DIR;
  if (!dir) {
    console.error('REAL_FILES_DIR is not set: build the corpus with `sh bench/real-files-corpus.sh MIRRORS_DIR DIR` (see its header)');
    process.exit(2);
  }
  const startedAt = start();
  const perKind = args.quick ? 8 : Number(process.env.REAL_FILES_LIMIT ?? Infinity);
  const bench = await startBenchService();
  const work = await mkdtemp(path.join(os.tmpdir(), 'paydoc-real-files-'));
  const records: CallRecord[] = [];
  try {
    const payer = await createPayer({ chain: 'base', evmKey: bench.evm.payerKey, maxUsd: '20' });
    for (const kind of Object.keys(CALLS) as Kind[]) {
      const names = (await readdir(path.join(dir, kind))).sort().slice(0, perKind);
      for (const name of names) {
        const file = path.join(dir, kind, name);
        const bytes = new Uint8Array(await readFile(file));
        const extension = name.split('.').pop()!.toLowerCase();
        const results: CallRecord[] = [];
        for (const call of CALLS[kind]) {
          const route = operations.find((o) => o.id === call.id)!.path;
          const statuses: Array<{ status: number; body?: Uint8Array }> = [];
          const recording: typeof fetch = async (input, init) => {
            const res = await fetch(input, { ...init, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
            statuses.push({ status: res.status });
            return res;
          };
          const before = await bench.evm.balanceOf(bench.evm.payerAddress);
          const began = performance.now();
          let last: { status: number; body: Uint8Array };
          try {
            const res = await wrapFetchWithPayment(recording, payer)(`${bench.url}${route}`, {
              method: 'POST', body: form([{ bytes, name, type: TYPES[extension] ?? 'application/octet-stream' }], call.fields ?? {}),
            });
            last = { status: res.status, body: new Uint8Array(await res.arrayBuffer()) };
          } catch (error) {
            // A connection closed under the client, or the client's own refusal to pay: recorded as status 0.
            const body = JSON.stringify({ error: { code: 'CLIENT', message: String(error).slice(0, 300) } });
            last = { status: 0, body: new TextEncoder().encode(body) };
          }
          const ms = Math.round(performance.now() - began);
          const after = await bench.evm.balanceOf(bench.evm.payerAddress);
          const quoted = statuses[0]?.status === 402 && statuses.length > 1;
          const error = last.status === 200 ? {} : errorOf(last.body);
          const record: CallRecord = {
            kind, file: name, bytes: bytes.byteLength, operation: call.id,
            quoteStatus: statuses[0]?.status ?? last.status,
            ...(quoted ? { paidStatus: last.status, ...(error.code ? { paidCode: error.code } : {}) }
              : error.code ? { quoteCode: error.code } : {}),
            ...(error.message ? { message: error.message.slice(0, 300) } : {}),
            charged: after !== before, rawHandles: true, rawDetail: '', ms,
          };
          results.push(record);
        }
        // soffice is slow: it runs only where the service refused or failed, which is where it decides anything.
        const anyFailure = results.some((r) => (r.paidStatus ?? r.quoteStatus) !== 200);
        if (kind !== 'office' || anyFailure) {
          const scratch = await mkdtemp(path.join(work, 'raw-'));
          const raw = await rawTool(kind, file, scratch)
            .catch((error: unknown) => ({ handles: false, detail: String(error).slice(0, 120) }));
          await rm(scratch, { recursive: true, force: true });
          for (const r of results) { r.rawHandles = raw.handles; r.rawDetail = raw.detail; }
        } else {
          for (const r of results) r.rawDetail = 'not run (the service converted it)';
        }
        records.push(...results);
        // Written after every file, so a run stopped by its time limit still leaves what it measured.
        await writeResult(args, 'real-files', { sources: SOURCES, summary: summarize(records), records }, startedAt);
        const line = (r: CallRecord) =>
          `${r.operation} ${r.quoteStatus}${r.paidStatus ? `/${r.paidStatus}` : ''}${r.charged ? ' charged' : ''}`;
        progress(`${kind} ${name}: ${results.map(line).join(', ')}`);
      }
    }
  } finally {
    await bench.stop();
    await rm(work, { recursive: true, force: true });
  }
  const summary = summarize(records);
  await writeResult(args, 'real-files', { sources: SOURCES, summary, records }, startedAt);
  console.log(JSON.stringify(summary, null, 1));
}

export interface RealFilesSummary {
  files: Record<string, number>;
  calls: number;
  ok: number;
  refusedBeforePayment: number;
  failedAfterPayment4xx: number;
  failedAfterPayment5xx: number;
  chargedWithoutResult: number;
  /** 5xx answers other than 501 NOT_IMPLEMENTED (the specification's answer to inputs not supported yet, before payment). */
  serverErrors: number;
  notImplemented: number;
  refusedButRawHandles: number;
}

export function summarize(records: CallRecord[]): RealFilesSummary {
  const final = (r: CallRecord) => r.paidStatus ?? r.quoteStatus;
  const files: Record<string, number> = {};
  for (const kind of Object.keys(CALLS)) files[kind] = new Set(records.filter((r) => r.kind === kind).map((r) => r.file)).size;
  return {
    files,
    calls: records.length,
    ok: records.filter((r) => final(r) === 200).length,
    refusedBeforePayment: records.filter((r) => r.paidStatus === undefined && r.quoteStatus >= 400 && r.quoteStatus < 500
      && r.quoteStatus !== 402).length,
    failedAfterPayment4xx: records.filter((r) => r.paidStatus !== undefined && r.paidStatus >= 400 && r.paidStatus < 500).length,
    failedAfterPayment5xx: records.filter((r) => r.paidStatus !== undefined && r.paidStatus >= 500).length,
    chargedWithoutResult: records.filter((r) => r.charged && final(r) !== 200).length,
    serverErrors: records.filter((r) => (r.quoteStatus >= 500 && r.quoteCode !== 'NOT_IMPLEMENTED') || (r.paidStatus ?? 0) >= 500
      || final(r) === 0).length,
    notImplemented: records.filter((r) => r.quoteCode === 'NOT_IMPLEMENTED').length,
    refusedButRawHandles: records.filter((r) => final(r) !== 200 && r.rawHandles).length,
  };
}

if (process.argv[1]?.endsWith('real-files.js')) {
  await main();
}

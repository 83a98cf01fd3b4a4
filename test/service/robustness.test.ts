// Hostile and odd real files (the pdf.js test corpus) through every PDF endpoint over HTTP, paid
// on the local Base chain with the standard x402 client. The bar: every call ends in 200 or a
// clean 4xx within its deadline, never a 5xx or a hang; nothing is left in the job directory;
// the payer pays exactly the quoted price of each 200 and nothing for anything else.
//
// By default a deterministic subset runs (every file through the quote path of one endpoint, a
// spread of files through every endpoint, paid). The whole corpus through every endpoint:
//   FULL_CORPUS=1 npx lab dist/test/service/robustness.test.js
// (ROBUSTNESS_VERBOSE=1 prints one line per call; FULL_CORPUS_FROM=name resumes a full run at that file, in sorted order;
// ROBUSTNESS_ENDPOINTS=pdf.searchable,pdf.ocr sends the paid calls to those endpoints only.)
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentResponseHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import { startTestService, form, type TestService } from '../support/service.js';
import { FAKE_MODEL, startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { createPayer } from '../../client/payer.js';
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { fillValuesFor } from '../support/form-values.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const corpusDir = path.resolve(projectRoot, '../shared/corpus/robustness');
const FULL = process.env.FULL_CORPUS === '1';
const VERBOSE = process.env.ROBUSTNESS_VERBOSE === '1';
const FULL_FROM = process.env.FULL_CORPUS_FROM ?? '';
const ONLY_ENDPOINTS = process.env.ROBUSTNESS_ENDPOINTS?.split(',');
/** Files sent through every endpoint by default: a fixed spread over the sorted corpus, plus the named ones. */
const SUBSET_SIZE = 10;
/**
 * Known-hostile files always in the default run: damaged beyond repair, fuzzed, encrypted, fonts
 * mupdf cannot draw, and one with no text at all (its Markdown once came back empty, as a paid 204).
 */
const ALWAYS = ['PDFBOX-4352-0.pdf', 'poppler-742-0-fuzzed.pdf', 'issue6010_2.pdf', 'ArabicCIDTrueType.pdf', 'bug1989304.pdf'];
/** Inspection (up to three 10 s qpdf steps, run for the quote and again for the paid call) and settlement on top of the job's own limit. */
const DEADLINE_MARGIN_MS = 75_000;
/** The quote path runs inspection only. */
const QUOTE_DEADLINE_MS = 35_000;
/** Requests in flight at once: as many as the pool has workers, so both stay busy. */
const LANES = FULL ? 3 : 2;

const STRUCTURED_SCHEMA = JSON.stringify({
  type: 'object', additionalProperties: false, required: ['title'], properties: { title: { type: 'string' } },
});

interface EndpointCall {
  fields: Record<string, string | number>;
  pairWithGoodPdf?: boolean;
  /** Fields that depend on the file, added to `fields` (form-fill's values name a field of the file's own form). */
  fieldsFor?: (pdf: Uint8Array) => Promise<Record<string, string>>;
}

/** What each endpoint is sent besides the corpus file. Operations that take no PDF are not here (see NOT_HERE). */
const ENDPOINTS: Record<string, EndpointCall> = {
  'pdf.compress': { fields: { level: 'balanced' } },
  'pdf.merge': { fields: {}, pairWithGoodPdf: true },
  // Ghostscript is driven by compress on every file already; lossless keeps the default run short.
  'pdf.merge-compress': { fields: { level: FULL ? 'max' : 'lossless' }, pairWithGoodPdf: true },
  'pdf.pages': { fields: { pages: 'z,1', rotate: 90 } },
  'pdf.split': { fields: { ranges: '1,1-z' } },
  'pdf.protect': { fields: { password: 'robust' } },
  'pdf.unlock': { fields: { password: 'robust' } },
  'pdf.render': { fields: { dpi: 36 } },
  'pdf.images': { fields: {} },
  'pdf.extract': { fields: {} },
  'pdf.markdown': { fields: {} },
  'pdf.blocks': { fields: { chunk_chars: 1000 } },
  'pdf.ocr': { fields: {} },
  'pdf.searchable': { fields: {} },
  'pdf.tables': { fields: {} },
  'pdf.structured': { fields: { schema: STRUCTURED_SCHEMA } },
  'pdf.stamp': { fields: { text: 'Page {n} of {total}', position: 'bottom-right', rotation: 30, opacity: 0.5, layer: 'under' } },
  'pdf.form-fields': { fields: {} },
  // A field of the file's own form when it has one (filled and paid for); a name none has otherwise (a clean 422 before payment).
  'pdf.form-fill': { fields: { flatten: 'true' }, fieldsFor: async (pdf) => ({ values: await fillValuesFor(pdf) }) },
  'pdf.flatten': { fields: {} },
  'pdf.metadata': { fields: {} },
  'pdf.set-metadata': { fields: { title: 'Robust' } },
};

/** PDF operations whose corpus run is elsewhere, with where: every other PDF operation must be in ENDPOINTS. */
const NOT_HERE: Record<string, string> = {
  'pdf.redact': 'test/service/operations/pdf-corpus.test.ts and pdf-redact.test.ts (every sample file)',
  'pdf.sanitize': 'test/service/operations/pdf-corpus.test.ts and pdf-sanitize.test.ts (the whole corpus)',
};

interface CallResult { status: number; code: string; ms: number; paid: bigint }

/** Answers every model request in the shape the endpoint asks for, instantly. */
function fakeAnswers(fake: FakeProvider) {
  fake.reset((request) => {
    const name = request.responseFormat?.json_schema?.name;
    if (name === 'page_tables') return { json: { tables: [] } };
    if (request.responseFormat) return { json: { title: 'a title' } };
    return { content: 'recognised text' };
  });
}

describe('robustness corpus over HTTP, paid on the local chain', () => {
  let t: TestService;
  let fake: FakeProvider;
  let files: string[];
  const good = makePdf(textPages(1));
  let payer: Awaited<ReturnType<typeof createPayer>>;

  before(async () => {
    fake = await startFakeProvider(() => ({ content: '' }));
    fakeAnswers(fake);
    t = await startTestService({
      config: { modelBaseUrl: fake.baseUrl, modelName: FAKE_MODEL, modelDpi: 72, logLevel: 'warn' },
    });
    // The full run buys thousands of results; the rig's default balance is not meant for that.
    await t.evm.mint(t.evm.payerAddress, 100_000_000_000n);
    files = (await readdir(corpusDir)).filter((n) => n.toLowerCase().endsWith('.pdf')).sort();
    payer = await createPayer({ chain: 'base', evmKey: t.evm.payerKey });
    // The standard client refuses to pay more than $1 by default; a long corpus file on a model endpoint costs more.
    payer.setSpendControls({ maxAmountPerPayment: '$100' });
  });

  after(async () => {
    await t?.stop();
    await fake?.close();
  });

  async function call(op: Operation, bytes: Uint8Array, paid: boolean, deadlineMs: number): Promise<CallResult> {
    const spec = ENDPOINTS[op.id];
    const uploads = spec.pairWithGoodPdf ? [bytes, good] : [bytes];
    const fields = { ...spec.fields, ...(await spec.fieldsFor?.(bytes)) };
    // The standard client over a fetch that notes the amount each payment it sends authorises.
    const paidAmounts: bigint[] = [];
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const header = request.headers.get('payment-signature');
      if (header) paidAmounts.push(BigInt(decodePaymentSignatureHeader(header).accepted.amount));
      return fetch(request);
    };
    const send = paid ? wrapFetchWithPayment(recording, payer) as typeof fetch : fetch;
    const started = performance.now();
    let res: Response;
    try {
      res = await send(`${t.url}${op.path}`, { method: 'POST', body: form(uploads, fields), signal: AbortSignal.timeout(deadlineMs) });
    } catch (err) {
      return { status: 0, code: (err as Error).name === 'TimeoutError' ? 'HANG' : 'NETWORK', ms: performance.now() - started, paid: 0n };
    }
    const body = Buffer.from(await res.arrayBuffer());
    const ms = performance.now() - started;
    let code = String(res.status);
    if (res.status === 200) {
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') ?? '');
      code = receipt.success && paidAmounts.length === 1 ? 'ok' : 'ok-without-receipt';
      return { status: 200, code, ms, paid: paidAmounts.at(-1) ?? 0n };
    }
    if (res.status !== 402) {
      try { code = (JSON.parse(body.toString('utf8')) as { error: { code: string } }).error.code; } catch { code = `${res.status}-unparsed`; }
    }
    return { status: res.status, code, ms, paid: 0n };
  }

  /** Runs tasks with `lanes` in flight at once (the pool has two workers: two lanes keep both busy). */
  async function inLanes<T>(items: readonly T[], lanes: number, task: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    await Promise.all(Array.from({ length: lanes }, async () => {
      while (next < items.length) await task(items[next++]);
    }));
  }

  function clean(result: CallResult, paid: boolean): boolean {
    if (result.status === 200) return result.code === 'ok';
    // Unpaid, 402 is the quote; paid, a 402 would mean the payment was refused or settlement failed.
    if (result.status === 402) return !paid;
    return result.status >= 400 && result.status < 500;
  }

  function summary(title: string, table: Map<string, Map<string, number>>, times: Map<string, number>): string {
    const lines = [...table].map(([op, row]) => {
      const ok = row.get('ok') ?? 0;
      const refused = [...row].filter(([k]) => k !== 'ok').reduce((s, [, v]) => s + v, 0);
      const codes = [...row].filter(([k]) => k !== 'ok').sort().map(([k, v]) => `${k} ${v}`).join(', ');
      return `    ${op.padEnd(20)} 200: ${String(ok).padStart(3)}  4xx: ${String(refused).padStart(3)}  ${codes ? `(${codes})` : ''}  ${Math.round((times.get(op) ?? 0) / 1000)} s`;
    });
    return `\n  ${title}\n${lines.join('\n')}`;
  }

  it('every operation that takes a PDF runs here, or names where its corpus run is', () => {
    const pdfOperations = operations.filter((o) => o.input.kind === 'pdf').map((o) => o.id);
    expect(pdfOperations.filter((id) => !(id in ENDPOINTS) && !(id in NOT_HERE))).to.equal([]);
    expect(Object.keys(ENDPOINTS).filter((id) => !pdfOperations.includes(id))).to.equal([]);
  });

  it('every file gets a quote (402) or a clean 4xx before payment, quickly, leaving nothing behind', { timeout: 0 }, async () => {
    const op = operations.find((o) => o.id === 'pdf.extract')!;
    const table = new Map<string, Map<string, number>>([[op.path, new Map()]]);
    const problems: string[] = [];
    let totalMs = 0;
    await inLanes(files, LANES, async (name) => {
      const bytes = new Uint8Array(await readFile(path.join(corpusDir, name)));
      const result = await call(op, bytes, false, QUOTE_DEADLINE_MS);
      totalMs += result.ms;
      const row = table.get(op.path)!;
      const label = result.status === 402 ? 'quote 402' : result.code;
      row.set(label, (row.get(label) ?? 0) + 1);
      if (VERBOSE) console.log('quote', name, result.status, result.code, Math.round(result.ms));
      if (!clean(result, false)) problems.push(`${name}: ${result.status} ${result.code}`);
      if (result.ms > QUOTE_DEADLINE_MS) problems.push(`${name}: quoted in ${Math.round(result.ms)} ms`);
    });
    console.log(summary(`quote path: ${files.length} files`, table, new Map([[op.path, totalMs]])));
    expect(await t.jobDirsLeft()).to.equal([]);
    expect(problems).to.equal([]);
  });

  it('every PDF endpoint, paid: 200 or a clean 4xx within the deadline; the payer pays exactly the 200s', { timeout: 0 }, async () => {
    const step = Math.ceil(files.length / SUBSET_SIZE);
    const chosen = FULL ? files.filter((name) => name >= FULL_FROM) : files.filter((name, i) => i % step === 0 || ALWAYS.includes(name));
    expect(files).to.include(ALWAYS);
    const endpoints = operations.filter((o) => o.id in ENDPOINTS && (!ONLY_ENDPOINTS || ONLY_ENDPOINTS.includes(o.id)));
    expect(endpoints.length).to.equal(ONLY_ENDPOINTS?.length ?? Object.keys(ENDPOINTS).length);
    const payerBefore = await t.evm.balanceOf(t.evm.payerAddress);
    const payToBefore = await t.evm.balanceOf(t.evm.payTo);
    const table = new Map<string, Map<string, number>>();
    const times = new Map<string, number>();
    const problems: string[] = [];
    let charged = 0n;
    const calls = chosen.flatMap((name) => endpoints.map((op) => ({ name, op })));
    await inLanes(calls, LANES, async ({ name, op }) => {
      const bytes = new Uint8Array(await readFile(path.join(corpusDir, name)));
      const deadline = op.timeoutMs + DEADLINE_MARGIN_MS;
      const result = await call(op, bytes, true, deadline);
      charged += result.paid;
      const row = table.get(op.path) ?? new Map<string, number>();
      row.set(result.code, (row.get(result.code) ?? 0) + 1);
      table.set(op.path, row);
      times.set(op.path, (times.get(op.path) ?? 0) + result.ms);
      if (VERBOSE) console.log(op.id, name, result.status, result.code, Math.round(result.ms));
      if (!clean(result, true)) problems.push(`${op.path} ${name}: ${result.status} ${result.code}`);
      if (result.ms > deadline) problems.push(`${op.path} ${name}: took ${Math.round(result.ms)} ms`);
      if (result.status === 200 && result.paid <= 0n) problems.push(`${op.path} ${name}: 200 without a recorded payment`);
    });
    console.log(summary(`paid: ${chosen.length} of ${files.length} files x ${endpoints.length} endpoints`, table, times));
    expect(await t.jobDirsLeft()).to.equal([]);
    expect(problems).to.equal([]);
    expect(t.service.app.pool.busy).to.equal(0);
    const payerAfter = await t.evm.balanceOf(t.evm.payerAddress);
    const payToAfter = await t.evm.balanceOf(t.evm.payTo);
    expect(payerBefore - payerAfter).to.equal(charged);
    expect(payToAfter - payToBefore).to.equal(charged);
    expect(charged > 0n).to.be.true();
  });
});

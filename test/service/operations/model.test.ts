// The four model-backed operations, run as work functions against a local OpenAI-compatible
// server, and the local tesseract engine against the text layer of real corpus PDFs.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { ServiceError, type ErrorCode } from '../../../core/errors.js';
import { compileUserSchema, loadUserSchema } from '../../../checks/schema.js';
import type { Job, WorkerSettings } from '../../../core/job.js';
import type { OperationId } from '../../../operations/index.js';
import { plannedJob } from '../../support/jobs.js';
import { runTool } from '../../../tools/process/run-tool.js';
import { imageOcr, pdfOcr } from '../../../workers/model/ocr.js';
import { pdfTables, PAGE_TABLES_SCHEMA } from '../../../workers/model/tables.js';
import { pdfStructured, qualifiesForStrict } from '../../../workers/model/structured.js';
import { wordRecall } from '../../support/word-recall.js';
import { FAKE_MODEL, pngWidth, startFakeProvider, type FakeProvider, type ReceivedRequest } from '../../support/fake-provider.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const corpus = path.resolve(projectRoot, '../shared/corpus/sample-files');

// ---- fixtures ----------------------------------------------------------------------------

/** Page k (1-based) is PAGE_BASE + PAGE_STEP * k points wide, so a rendered image names its page. */
const PAGE_BASE = 100;
const PAGE_STEP = 12;

function pageOfImage(url: string, dpi = 150): number {
  return Math.round((pngWidth(url) * 72 / dpi - PAGE_BASE) / PAGE_STEP);
}

/** A valid PDF of `count` small pages, each reading "Page k", written by hand (no tool needed). */
function tinyPdf(count: number): Uint8Array {
  const objects: string[] = [];
  const pageIds: number[] = [];
  const fontId = 3;
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  for (let k = 1; k <= count; k++) {
    const pageId = 2 + 2 * k;
    const contentId = pageId + 1;
    const stream = `BT /F1 18 Tf 10 20 Td (Page ${k}) Tj ET`;
    objects[pageId] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${PAGE_BASE + PAGE_STEP * k} 60] /Contents ${contentId} 0 R /Resources << /Font << /F1 ${fontId} 0 R >> >> >>`;
    objects[contentId] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
    pageIds.push(pageId);
  }
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${count} >>`;
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = out.length;
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

const jobDirs: string[] = [];

async function newJobDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'model-test-'));
  jobDirs.push(dir);
  return dir;
}

let fake: FakeProvider;

function settings(overrides: Partial<WorkerSettings> = {}): WorkerSettings {
  return {
    modelBaseUrl: fake.baseUrl, modelApiKey: 'sk-test', modelName: FAKE_MODEL,
    modelConcurrency: 4, modelDpi: 150, ocrEngine: 'model', ocrLanguages: 'eng', maxZipBytes: 100 * 1024 * 1024,
    ...overrides,
  };
}

interface JobOptions {
  settings?: Partial<WorkerSettings>;
  fields?: Record<string, string>;
  deadlineMs?: number;
  /** Leave the page count out, as if the front end had not counted. */
  uncounted?: boolean;
}

/** The job the service would hand the pool: its checks and the operation's plan on the upload. */
async function pdfJob(operation: OperationId, bytes: Uint8Array, pages: number, options: JobOptions = {}): Promise<Job<never>> {
  const { job } = await plannedJob(operation, [bytes], options.fields ?? {}, {
    root: await newJobDir(), timeoutMs: options.deadlineMs ?? 60_000, settings: settings(options.settings),
  });
  expect(job.files[0].pages).to.equal(pages);
  if (options.uncounted) delete job.files[0].pages;
  return job as Job<never>;
}

async function writeInto(dir: string, bytes: Uint8Array): Promise<string> {
  const file = path.join(dir, 'other.pdf');
  await writeFile(file, bytes);
  return file;
}

async function imageJob(bytes: Uint8Array, _format: string, options: JobOptions = {}): Promise<Job<never>> {
  const { job } = await plannedJob('image.ocr', [bytes], {}, {
    root: await newJobDir(), timeoutMs: options.deadlineMs ?? 60_000, settings: settings(options.settings),
  });
  return job as Job<never>;
}

function parse(body: Uint8Array): any {
  return JSON.parse(Buffer.from(body).toString('utf8'));
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error('expected the job to fail');
}

function ocrAnswer(request: ReceivedRequest) {
  return { content: `text of page ${pageOfImage(request.imageUrls[0] as string)}` };
}

const INVOICE_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['number', 'total', 'lines'],
  properties: {
    number: { type: 'string' },
    total: { type: 'number' },
    lines: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['item', 'amount'], properties: { item: { type: 'string' }, amount: { type: 'number' } } },
    },
  },
};
const INVOICE = { number: 'INV-7', total: 12.5, lines: [{ item: 'paper', amount: 12.5 }] };

// ---- model provider ----------------------------------------------------------------------

describe('model provider work functions', () => {
  before(async () => {
    fake = await startFakeProvider(ocrAnswer);
  });

  after(async () => {
    await fake.close();
    await Promise.all(jobDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('image OCR sends one image as a data URL to the configured model and returns { text }', async () => {
    fake.reset(() => ({ content: 'Invoice 42\nTotal: 12.50' }));
    const png = await sharp({ create: { width: 300, height: 120, channels: 3, background: '#ffffff' } }).png().toBuffer();
    const output = await imageOcr(await imageJob(png, 'png'));
    expect(output.mediaType).to.equal('application/json');
    expect(parse(output.body)).to.equal({ text: 'Invoice 42\nTotal: 12.50' });
    expect(fake.received).to.have.length(1);
    const [request] = fake.received as [ReceivedRequest];
    expect(request.model).to.equal(FAKE_MODEL);
    expect(request.authorization).to.equal('Bearer sk-test');
    expect(request.imageUrls).to.have.length(1);
    expect(Buffer.from((request.imageUrls[0] as string).split(',')[1] as string, 'base64').equals(png)).to.be.true();
    expect(request.responseFormat).to.be.undefined();
  });

  it('image OCR sends an oversized, EXIF-rotated photo upright and within 2048 px', async () => {
    fake.reset(() => ({ content: '```\nrotated text\n```' }));
    // Stored 3000 x 1000 with orientation 6: upright it is 1000 wide and 3000 tall.
    const jpeg = await sharp({ create: { width: 3000, height: 1000, channels: 3, background: '#eeeeee' } })
      .jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const output = await imageOcr(await imageJob(jpeg, 'jpeg'));
    expect(parse(output.body)).to.equal({ text: 'rotated text' });
    const url = fake.received[0]?.imageUrls[0] as string;
    expect(url.startsWith('data:image/jpeg;base64,')).to.be.true();
    const sent = await sharp(Buffer.from(url.split(',')[1] as string, 'base64')).metadata();
    expect(sent.height).to.equal(2048);
    expect(sent.width).to.equal(683);
    expect(sent.orientation ?? 1).to.equal(1);
  });

  it('PDF OCR: 7 pages, concurrency 2, answered out of order, come back in page order with form feeds', async () => {
    // Early pages answer slowest, so completion order is the reverse of page order.
    fake.reset((request) => ({ ...ocrAnswer(request), delayMs: (8 - pageOfImage(request.imageUrls[0] as string)) * 40 }));
    const output = await pdfOcr(await pdfJob('pdf.ocr', tinyPdf(7), 7, { settings: { modelConcurrency: 2 } }));
    const expected = [1, 2, 3, 4, 5, 6, 7].map((k) => `text of page ${k}`).join('\f');
    expect(parse(output.body)).to.equal({ text: expected });
    expect(fake.received).to.have.length(7);
    expect(fake.received.every((r) => r.imageUrls.length === 1)).to.be.true();
    expect(fake.maxInFlight).to.equal(2);
    expect(fake.received.map((r) => pageOfImage(r.imageUrls[0] as string)).sort((a, b) => a - b)).to.equal([1, 2, 3, 4, 5, 6, 7]);
  });

  it('PDF OCR renders pages at the configured dpi', async () => {
    fake.reset((request) => ({ content: String(pngWidth(request.imageUrls[0] as string)) }));
    const output = await pdfOcr(await pdfJob('pdf.ocr', tinyPdf(1), 1, { settings: { modelDpi: 72 } }));
    expect(parse(output.body)).to.equal({ text: String(PAGE_BASE + PAGE_STEP) });
  });

  it('PDF OCR sends all 30 pages of a 30-page PDF, one image per request, and refuses 31 before sending anything', async () => {
    fake.reset(ocrAnswer);
    const output = await pdfOcr(await pdfJob('pdf.ocr', tinyPdf(30), 30, { settings: { modelConcurrency: 8 } }));
    expect(parse(output.body).text.split('\f')).to.have.length(30);
    expect(fake.received).to.have.length(30);
    expect(fake.received.reduce((sum, r) => sum + r.imageUrls.length, 0)).to.equal(30);

    fake.reset(ocrAnswer);
    // Refused before payment by the page limit; the work function refuses too if it is ever handed more.
    const refused = await failure(pdfJob('pdf.ocr', tinyPdf(31), 31));
    expect(refused.code).to.equal('LIMIT_EXCEEDED');
    const handed = await pdfJob('pdf.ocr', tinyPdf(30), 30);
    handed.files = [{ bytes: tinyPdf(31), path: await writeInto(handed.jobDir, tinyPdf(31)), pages: 31 }];
    const counted = await failure(pdfOcr(handed));
    expect(counted.code).to.equal('LIMIT_EXCEEDED');
    const unknownCount = await pdfJob('pdf.tables', tinyPdf(30), 30);
    unknownCount.files = [{ bytes: tinyPdf(31), path: await writeInto(unknownCount.jobDir, tinyPdf(31)) }];
    const uncounted = await failure(pdfTables(unknownCount));
    expect(uncounted.code).to.equal('LIMIT_EXCEEDED');
    expect(uncounted.message).to.contain('31 pages');
    expect(fake.received).to.have.length(0);
  });

  it('tables: one strict request per page, page numbers assigned, tables in page order', async () => {
    fake.reset((request) => {
      const page = pageOfImage(request.imageUrls[0] as string);
      if (page === 2) return { json: { tables: [{ title: 'Prices', headers: ['Item', 'Price'], rows: [['Tea', '2.00'], ['Cake', '3.50']] }, { title: null, headers: [], rows: [['a', 'b']] }] } };
      if (page === 3) return { json: { tables: [{ title: null, headers: ['X'], rows: [['1']] }] }, delayMs: 10 };
      return { json: { tables: [] }, delayMs: 60 };
    });
    const output = await pdfTables(await pdfJob('pdf.tables', tinyPdf(3), 3));
    expect(parse(output.body)).to.equal({
      tables: [
        { page: 2, title: 'Prices', headers: ['Item', 'Price'], rows: [['Tea', '2.00'], ['Cake', '3.50']] },
        { page: 2, title: null, headers: [], rows: [['a', 'b']] },
        { page: 3, title: null, headers: ['X'], rows: [['1']] },
      ],
    });
    expect(fake.received).to.have.length(3);
    for (const request of fake.received) {
      expect(request.imageUrls).to.have.length(1);
      expect(request.responseFormat?.type).to.equal('json_schema');
      expect(request.responseFormat?.json_schema?.strict).to.equal(true);
      expect(request.responseFormat?.json_schema?.schema).to.equal(PAGE_TABLES_SCHEMA as unknown as Record<string, unknown>);
    }
  });

  it('tables: malformed JSON is asked again once, with the reason, and then succeeds', async () => {
    fake.reset((request) => (request.index === 0
      ? { content: '{"tables": [{"title": "cut off' }
      : { content: '```json\n{"tables": [{"title": null, "headers": ["A"], "rows": [["1"]]}]}\n```' }));
    const output = await pdfTables(await pdfJob('pdf.tables', tinyPdf(1), 1));
    expect(parse(output.body)).to.equal({ tables: [{ page: 1, title: null, headers: ['A'], rows: [['1']] }] });
    expect(fake.received).to.have.length(2);
    const retry = fake.received[1] as ReceivedRequest;
    expect(retry.messages.at(-2)?.role).to.equal('assistant');
    expect(String(retry.messages.at(-1)?.content)).to.contain('not valid JSON');
  });

  it('tables: answers that never match the schema fail the job with PROVIDER_FAILED after two attempts', async () => {
    fake.reset(() => ({ json: { tables: [{ title: 5, headers: 'A', rows: [] }] } }));
    const err = await failure(pdfTables(await pdfJob('pdf.tables', tinyPdf(1), 1)));
    expect(err.code).to.equal('PROVIDER_FAILED');
    expect(err.status).to.equal(502);
    expect(fake.received).to.have.length(2);
  });

  it('structured: a strict-ready schema goes strict; the answer comes back as { data }', async () => {
    fake.reset(() => ({ json: INVOICE }));
    const input = await pdfJob('pdf.structured', tinyPdf(3), 3, { fields: { schema: JSON.stringify(INVOICE_SCHEMA) } });
    const output = await pdfStructured(input);
    expect(parse(output.body)).to.equal({ data: INVOICE });
    expect(fake.received).to.have.length(1);
    const [request] = fake.received as [ReceivedRequest];
    expect(request.imageUrls.map((url) => pageOfImage(url))).to.equal([1, 2, 3]);
    expect(request.responseFormat?.json_schema?.strict).to.equal(true);
    expect(request.responseFormat?.json_schema?.schema).to.equal(INVOICE_SCHEMA);
  });

  it('structured: an open schema goes non-strict with the schema in the prompt, and the answer is still validated', async () => {
    const open = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 1 }, year: { type: 'integer' } } };
    fake.reset((request) => (request.index === 0 ? { json: { title: '' } } : { json: { title: 'Annual report', year: 2023, extra: true } }));
    const output = await pdfStructured(await pdfJob('pdf.structured', tinyPdf(2), 2, { fields: { schema: JSON.stringify(open) } }));
    expect(parse(output.body)).to.equal({ data: { title: 'Annual report', year: 2023, extra: true } });
    expect(fake.received).to.have.length(2);
    const first = fake.received[0] as ReceivedRequest;
    expect(first.responseFormat?.json_schema?.strict).to.equal(false);
    expect(first.responseFormat?.json_schema?.schema).to.not.include('$schema');
    expect(first.userTexts.join('\n')).to.contain('"minLength":1');
    expect(String(fake.received[1]?.messages.at(-1)?.content)).to.contain('/title');
  });

  it('structured: malformed JSON then valid JSON succeeds; never-valid JSON fails with PROVIDER_FAILED', async () => {
    const schema = JSON.stringify(INVOICE_SCHEMA);
    fake.reset((request) => (request.index === 0 ? { content: '{"number": "INV-7", "total": 12.5, ' } : { json: INVOICE }));
    const output = await pdfStructured(await pdfJob('pdf.structured', tinyPdf(1), 1, { fields: { schema } }));
    expect(parse(output.body)).to.equal({ data: INVOICE });
    expect(fake.received).to.have.length(2);

    fake.reset(() => ({ json: { number: 7 } }));
    const err = await failure(pdfStructured(await pdfJob('pdf.structured', tinyPdf(1), 1, { fields: { schema } })));
    expect(err.code).to.equal('PROVIDER_FAILED');
    expect(err.message).to.contain('after 2 attempts');
    expect(fake.received).to.have.length(2);
  });

  it('structured: a provider that refuses strict mode (400) is asked again with strict false', async () => {
    fake.reset((request) => (request.responseFormat?.json_schema?.strict ? { status: 400 } : { json: INVOICE }));
    const output = await pdfStructured(await pdfJob('pdf.structured', tinyPdf(1), 1, { fields: { schema: JSON.stringify(INVOICE_SCHEMA) } }));
    expect(parse(output.body)).to.equal({ data: INVOICE });
    expect(fake.received.map((r) => r.responseFormat?.json_schema?.strict)).to.equal([true, false]);
  });

  it('structured: 30 pages go in one request of 30 images, in page order', async () => {
    fake.reset(() => ({ json: INVOICE }));
    await pdfStructured(await pdfJob('pdf.structured', tinyPdf(30), 30, { fields: { schema: JSON.stringify(INVOICE_SCHEMA) } }));
    expect(fake.received).to.have.length(1);
    expect(fake.received[0]?.imageUrls.map((url) => pageOfImage(url))).to.equal(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  it('429 and then success, and 500 and then success, are retried inside the job', async () => {
    fake.reset((request) => (request.index === 0 ? { status: 429, headers: { 'retry-after-ms': '50' } } : ocrAnswer(request)));
    const afterLimit = await pdfOcr(await pdfJob('pdf.ocr', tinyPdf(1), 1));
    expect(parse(afterLimit.body)).to.equal({ text: 'text of page 1' });
    expect(fake.received).to.have.length(2);

    fake.reset((request) => (request.index < 2 ? { status: request.index === 0 ? 500 : 503 } : { json: INVOICE }));
    const afterErrors = await pdfStructured(await pdfJob('pdf.structured', tinyPdf(1), 1, { fields: { schema: JSON.stringify(INVOICE_SCHEMA) } }));
    expect(parse(afterErrors.body)).to.equal({ data: INVOICE });
    expect(fake.received).to.have.length(3);
  });

  it('a provider that keeps failing, or refuses the request, fails the job with PROVIDER_FAILED', async () => {
    fake.reset(() => ({ status: 502, headers: { 'retry-after-ms': '10' } }));
    const persistent = await failure(pdfOcr(await pdfJob('pdf.ocr', tinyPdf(1), 1)));
    expect(persistent.code).to.equal('PROVIDER_FAILED');
    expect(fake.received).to.have.length(5);

    fake.reset(() => ({ status: 401 }));
    const refused = await failure(pdfOcr(await pdfJob('pdf.ocr', tinyPdf(1), 1)));
    expect(refused.code).to.equal('PROVIDER_FAILED');
    expect(fake.received).to.have.length(1);

    const wrongModel = await failure(imageOcr(await imageJob(
      await sharp({ create: { width: 10, height: 10, channels: 3, background: '#fff' } }).png().toBuffer(), 'png',
      { settings: { modelName: 'no-such-model' } })));
    expect(wrongModel.code).to.equal('PROVIDER_FAILED');
  });

  it('a provider that hangs past the deadline fails the job with JOB_TIMEOUT before the deadline', async () => {
    fake.reset(() => ({ hang: true }));
    const input = await pdfJob('pdf.ocr', tinyPdf(3), 3, { deadlineMs: 1500 });
    const err = await failure(pdfOcr(input));
    expect(err.code).to.equal('JOB_TIMEOUT');
    expect(err.status).to.equal(504);
    expect(Date.now()).to.be.below(input.deadline);
  });

  it('429 answers that would need a wait past the deadline stop the retries in time', async () => {
    fake.reset(() => ({ status: 429, headers: { 'retry-after': '20' } }));
    const input = await pdfJob('pdf.tables', tinyPdf(1), 1, { deadlineMs: 3000 });
    const err = await failure(pdfTables(input));
    expect(err.code).to.equal('PROVIDER_FAILED');
    expect(Date.now()).to.be.below(input.deadline);
    expect(fake.received).to.have.length(1);
  });

  it('an unconfigured provider answers PROVIDER_DISABLED without a request', async () => {
    fake.reset(ocrAnswer);
    const err = await failure(pdfOcr(await pdfJob('pdf.ocr', tinyPdf(1), 1, { settings: { modelName: undefined } })));
    expect(err.code).to.equal('PROVIDER_DISABLED');
    expect(fake.received).to.have.length(0);
  });

  it('nothing about the request or the answer reaches the console', async () => {
    const calls: unknown[] = [];
    const saved = { log: console.log, info: console.info, warn: console.warn, error: console.error, debug: console.debug };
    for (const name of Object.keys(saved) as Array<keyof typeof saved>) console[name] = (...args: unknown[]) => { calls.push(args); };
    try {
      fake.reset((request) => (request.index === 0 ? { content: 'not json' } : { json: INVOICE }));
      await pdfStructured(await pdfJob('pdf.structured', tinyPdf(2), 2, { fields: { schema: JSON.stringify(INVOICE_SCHEMA) } }));
      fake.reset(() => ({ status: 500 }));
      await failure(pdfOcr(await pdfJob('pdf.ocr', tinyPdf(1), 1, { deadlineMs: 2000 })));
    } finally {
      Object.assign(console, saved);
    }
    expect(calls).to.equal([]);
  });
});

// ---- the schema field ------------------------------------------------------------------------

describe('structured schema field (checked before payment)', () => {
  function rejection(text: string): ServiceError {
    try {
      compileUserSchema(text);
    } catch (err) {
      if (err instanceof ServiceError) return err;
      throw err;
    }
    throw new Error('expected the schema to be refused');
  }

  it('accepts draft-07 and 2020-12 object schemas with local references', () => {
    compileUserSchema(JSON.stringify(INVOICE_SCHEMA));
    compileUserSchema(JSON.stringify({
      $schema: 'https://json-schema.org/draft/2020-12/schema', properties: { a: { $ref: '#/$defs/b' } }, $defs: { b: { type: 'string' } },
    }));
  });

  it('keeps no client schema between calls: two schemas with the same $id each validate as written', () => {
    const id = 'https://example.com/invoice.json';
    const first = loadUserSchema(JSON.stringify({ $id: id, type: 'object', required: ['total'], properties: { total: { type: 'number' } } })).validate;
    const second = loadUserSchema(JSON.stringify({ $id: id, type: 'object', required: ['total'], properties: { total: { type: 'string' } } })).validate;
    expect([first({ total: 3 }), first({ total: 'three' })]).to.equal([true, false]);
    expect([second({ total: 3 }), second({ total: 'three' })]).to.equal([false, true]);
    // A schema that failed to compile leaves nothing behind either.
    expect(() => loadUserSchema(JSON.stringify({ $id: id, type: 'object', properties: { total: { type: 'nope' } } }))).to.throw(ServiceError);
    expect(loadUserSchema(JSON.stringify({ $id: id, type: 'object', properties: { total: { type: 'boolean' } } })).validate({ total: true })).to.be.true();
  });

  it('refuses text that is not JSON with the position and no quoted content', () => {
    const err = rejection('{"secret-name": 1,}');
    expect([err.code, err.status, err.extra.field]).to.equal(['FIELD_INVALID' as ErrorCode, 422, 'schema']);
    expect(err.message).to.startWith('schema is not valid JSON');
    expect(err.message).to.contain('position 18');
    expect(err.message).to.not.contain('secret-name');
    expect(rejection('{"secret": tru}').message).to.not.contain('secret');
  });

  it('refuses schemas that do not describe an object, do not compile, or reference other documents', () => {
    expect(rejection('[1, 2]').message).to.contain('must be a JSON object');
    expect(rejection('{"type": "array", "items": {}}').message).to.contain('must describe an object');
    const invalid = rejection('{"type": "object", "properties": {"a": {"type": "text"}}}');
    expect(invalid.message).to.contain('/properties/a/type');
    expect(rejection('{"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}').message).to.contain('not a valid JSON Schema');
    const remote = rejection('{"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}');
    expect(remote.message).to.contain('/properties/a/$ref');
    expect(remote.message).to.not.contain('example.com');
    expect(rejection('{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}').message).to.contain('unsupported draft');
  });

  it('tells strict-ready schemas from open ones', () => {
    expect(qualifiesForStrict(INVOICE_SCHEMA)).to.be.true();
    expect(qualifiesForStrict(PAGE_TABLES_SCHEMA as unknown as Record<string, unknown>)).to.be.true();
    expect(qualifiesForStrict({ ...INVOICE_SCHEMA, required: ['number'] })).to.be.false();
    expect(qualifiesForStrict({ type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'object' } } })).to.be.false();
    expect(qualifiesForStrict({ type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'string', minLength: 2 } } })).to.be.false();
  });
});

// ---- local tesseract engine ----------------------------------------------------------------

async function textLayer(file: string, first: number, last: number): Promise<string> {
  const out = await runTool('pdftotext', ['-f', String(first), '-l', String(last), file, '-'], { timeoutMs: 30_000 });
  return Buffer.from(out.stdout).toString('utf8');
}

describe('local tesseract OCR engine', () => {
  const tesseract: Partial<WorkerSettings> = { ocrEngine: 'tesseract', ocrLanguages: 'eng', modelName: undefined, modelBaseUrl: undefined };

  after(async () => {
    await Promise.all(jobDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('PDF OCR of two two-column LaTeX pages reaches a word recall of at least 0.95 against the text layer', async () => {
    const source = path.join(corpus, '026-latex-multicolumn/multicolumn.pdf');
    const dir = await newJobDir();
    const twoPages = path.join(dir, 'two.pdf');
    const cut = await runTool('qpdf', [source, '--pages', '.', '2-3', '--', twoPages], { timeoutMs: 30_000 });
    expect(cut.exitCode).to.equal(0);
    const input = await pdfJob('pdf.ocr', new Uint8Array(await readFile(twoPages)), 2, { settings: tesseract });
    const output = await pdfOcr(input);
    const text: string = parse(output.body).text;
    expect(text.split('\f')).to.have.length(2);
    const recall = wordRecall(await textLayer(source, 2, 3), text);
    process.stdout.write(`\n    tesseract word recall, multicolumn pages 2-3 at 300 dpi: ${recall.toFixed(4)}\n`);
    expect(recall).to.be.at.least(0.95);
  });

  it('image OCR of a page rendered at 300 dpi reaches a word recall of at least 0.95', async () => {
    const source = path.join(corpus, '011-google-doc-document/google-doc-document.pdf');
    const render = await runTool('mutool', ['draw', '-q', '-r', '300', '-F', 'png', '-o', '-', source, '1'], { timeoutMs: 30_000 });
    const png = render.stdout;
    const output = await imageOcr(await imageJob(png, 'png', { settings: tesseract }));
    const recall = wordRecall(await textLayer(source, 1, 1), parse(output.body).text);
    process.stdout.write(`    tesseract word recall, google-doc page 1 at 300 dpi: ${recall.toFixed(4)}\n`);
    expect(recall).to.be.at.least(0.95);
  });

  it('PDF OCR reads the values of a filled form that leaves drawing them to the reader (NeedAppearances)', async () => {
    const source = path.join(corpus, '012-libreoffice-form/libreoffice-form.pdf');
    const input = await pdfJob('pdf.ocr', new Uint8Array(await readFile(source)), 1, { settings: tesseract });
    const text: string = parse((await pdfOcr(input)).body).text;
    expect(text).to.contain('First Name');
    expect(text).to.match(/\bAlice\b/);
  });

  it('a language that is not installed is a deployment problem (UNAVAILABLE), not the client\'s', async () => {
    const png = await sharp({ create: { width: 50, height: 50, channels: 3, background: '#fff' } }).png().toBuffer();
    const missing = await failure(imageOcr(await imageJob(png, 'png', { settings: { ...tesseract, ocrLanguages: 'xyz' } })));
    expect(missing.code).to.equal('UNAVAILABLE');
    const malformed = await failure(imageOcr(await imageJob(png, 'png', { settings: { ...tesseract, ocrLanguages: 'eng; rm' } })));
    expect(malformed.code).to.equal('UNAVAILABLE');
  });
});

// /v1/pdf/form-fields, /v1/pdf/form-fill and /v1/pdf/flatten on a form made in code (text,
// checkbox, radio, choice, signature and button fields on a rotated, cropped page; a filled field
// without an appearance and a FreeText annotation on page 2). Filled forms are read back by this
// service and by qpdf's JSON, and drawn by poppler and by Debian's MuPDF 1.21 (not the MuPDF.js
// that fills them): the reported rectangles are where the drawn values are. Flattened output holds
// the values as page text (pdftotext) and no fields (qpdf). XFA and bad values are refused in the
// quote, uncharged. Paid over HTTP on the local Base chain with balances read, and over MCP.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { ACRO_FORM_FIELDS, acroFormPdf, makePdf, textPages } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { tool, withFile } from '../../support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';
import { FORM_FIELDS_SCHEMA } from '../../../operations/pdf/form-fields.js';
import type { FormField } from '../../../tools/engines/mupdf-js.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../../shared/corpus/robustness');
const validAnswer = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(FORM_FIELDS_SCHEMA);

const FILLED = { name: 'Zoe Smith', agree: true, color: 'blue', country: 'Japan', notes: 'second note' };

async function fields(pdf: Uint8Array): Promise<FormField[]> {
  const { output, error } = await runOperation('pdf.form-fields', [pdf], {});
  expect(error, error?.message).to.not.exist();
  const answer = JSON.parse(Buffer.from(output!.body).toString('utf8')) as { fields: FormField[] };
  expect(validAnswer(answer), JSON.stringify(validAnswer.errors)).to.be.true();
  return answer.fields;
}

async function fill(pdf: Uint8Array, values: Record<string, unknown>, flatten = false): Promise<Uint8Array> {
  const { output, error } = await runOperation('pdf.form-fill', [pdf], { values: JSON.stringify(values), flatten: String(flatten) });
  expect(error, error?.message).to.not.exist();
  return output!.body;
}

interface QpdfField { fullname: string; fieldtype: string; value: unknown; annotation: { appearancestate: string }; pageposfrom1: number }

/** qpdf's view of the form: whether there is one, its fields (one row per widget), and the subtypes of the annotations the pages list. */
async function qpdfForm(pdf: Uint8Array): Promise<{ hasAcroForm: boolean; fields: QpdfField[]; annotations: string[] }> {
  return withFile(pdf, 'pdf', async (file, dir) => {
    const json = JSON.parse((await tool('qpdf', ['--json=2', '--json-key=acroform', '--json-key=qpdf', file], dir)).out) as {
      acroform: { hasacroform: boolean; fields: QpdfField[] }; qpdf: [unknown, Record<string, { value?: unknown }>];
    };
    const objects = json.qpdf[1];
    const resolve = (value: unknown): unknown => (typeof value === 'string' && / R$/.test(value) ? objects[`obj:${value}`]?.value : value);
    const annotations: string[] = [];
    for (const object of Object.values(objects)) {
      const page = object.value as Record<string, unknown> | undefined;
      if (page?.['/Type'] !== '/Page') continue;
      const list = resolve(page['/Annots']);
      for (const entry of Array.isArray(list) ? list : []) {
        const subtype = (resolve(entry) as Record<string, unknown> | undefined)?.['/Subtype'];
        if (typeof subtype === 'string') annotations.push(subtype);
      }
    }
    return { hasAcroForm: json.acroform.hasacroform, fields: json.acroform.fields, annotations };
  });
}

/** A page drawn in grey at 72 dpi (1 pixel a point), as displayed, by poppler or by Debian's mutool. */
async function drawn(pdf: Uint8Array, page: number, by: 'poppler' | 'mutool'): Promise<{ width: number; height: number; pixels: Uint8Array }> {
  return withFile(pdf, 'pdf', async (file, dir) => {
    const out = path.join(dir, 'page.pgm');
    if (by === 'poppler') await tool('pdftoppm', ['-r', '72', '-gray', '-cropbox', '-f', String(page), '-l', String(page), '-singlefile', file, path.join(dir, 'page')], dir);
    else await tool('mutool', ['draw', '-q', '-r', '72', '-c', 'gray', '-o', out, file, String(page)], dir);
    const pgm = await readFile(out);
    const header = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(pgm.subarray(0, 40).toString('latin1'))!;
    return { width: Number(header[1]), height: Number(header[2]), pixels: new Uint8Array(pgm.subarray(header[0].length)) };
  });
}

/** The share of dark pixels inside a rectangle [x, y, width, height] of a drawn page. */
function darkShare(image: { width: number; pixels: Uint8Array }, [x, y, w, h]: readonly number[]): number {
  let dark = 0;
  let all = 0;
  for (let row = Math.ceil(y); row < Math.floor(y + h); row++) {
    for (let col = Math.ceil(x); col < Math.floor(x + w); col++) {
      all += 1;
      if (image.pixels[row * image.width + col] < 128) dark += 1;
    }
  }
  return dark / all;
}

async function pageText(pdf: Uint8Array): Promise<string> {
  return withFile(pdf, 'pdf', async (file, dir) => (await tool('pdftotext', [file, '-'], dir)).out);
}

describe('reading a form', () => {
  it('lists every kind of field with its value, options, page and rectangle as the rotated, cropped page is displayed', async () => {
    const found = await fields(acroFormPdf());
    expect(found.map((f) => f.name)).to.equal([...ACRO_FORM_FIELDS]);
    const byName = Object.fromEntries(found.map((f) => [f.name, f]));
    // Page 1: MediaBox 612 x 792, CropBox [10 20 602 782], rotated 90°: displayed 762 wide, 592 high;
    // the text field's PDF rectangle [100 600 300 620] is at x = 600 - 20, y = 100 - 10, 20 wide, 200 high.
    expect(byName.name).to.equal({ name: 'name', type: 'text', value: null, options: [], page: 1, rect: [580, 90, 20, 200], readOnly: false, maxLength: 40, editable: false });
    expect(byName.agree).to.include({ type: 'checkbox', value: false, options: ['Yes'], page: 1, rect: [540, 90, 14, 14] });
    expect(byName.color).to.include({ type: 'radio', value: null, options: ['red', 'blue'], page: 1 });
    expect(byName.color.widgets).to.equal([{ page: 1, rect: [500, 90, 14, 14], option: 'red' }, { page: 1, rect: [500, 130, 14, 14], option: 'blue' }]);
    expect(byName.country).to.include({ type: 'choice', value: null, options: ['France', 'Germany', 'Japan'], editable: false });
    expect(byName.signature).to.include({ type: 'signature', value: false });
    expect(byName.submit).to.include({ type: 'button', value: null });
    expect(byName.notes).to.include({ type: 'text', value: 'first note', page: 2, rect: [50, 82, 250, 60] });
  });

  it('a PDF without a form answers no fields', async () => {
    expect(await fields(makePdf(textPages(2)))).to.equal([]);
  });

  it('an XFA form is refused before payment by all three', async () => {
    for (const [id, extra] of [['pdf.form-fields', {}], ['pdf.flatten', {}], ['pdf.form-fill', { values: '{"name":"x"}' }]] as const) {
      const { error } = await runOperation(id, [acroFormPdf({ xfa: true })], extra);
      expect(error, id).to.include({ code: 'UNSUPPORTED_TYPE', status: 422, field: 'file' });
      expect(error!.message).to.contain('XFA');
    }
  });
});

describe('filling a form', () => {
  it('the fields hold the values (this service and qpdf read them) and their appearances show them (poppler and mutool draw them where form-fields says)', async () => {
    const blank = acroFormPdf();
    const filled = await fill(blank, FILLED);
    const back = Object.fromEntries((await fields(filled)).map((f) => [f.name, f.value]));
    expect(back).to.include({ ...FILLED, signature: false, submit: null });

    const qpdf = await qpdfForm(filled);
    const row = (name: string, state?: string) =>
      qpdf.fields.find((f) => f.fullname === name && (state === undefined || f.annotation.appearancestate === state))!;
    expect(row('name').value).to.equal('u:Zoe Smith');
    expect(row('agree').value).to.equal('/Yes');
    expect(row('agree').annotation.appearancestate).to.equal('/Yes');
    expect(row('color', '/blue').value).to.equal('/blue');
    expect(row('color', '/Off')).to.exist();
    expect(row('country').value).to.equal('u:Japan');
    expect(row('notes').value).to.equal('u:second note');

    const places = Object.fromEntries((await fields(blank)).map((f) => [f.name, f]));
    for (const by of ['poppler', 'mutool'] as const) {
      const before = await drawn(blank, 1, by);
      const after = await drawn(filled, 1, by);
      expect([after.width, after.height], by).to.equal([762, 592]);
      for (const name of ['name', 'agree', 'country']) {
        expect(darkShare(before, places[name].rect), `${by} ${name} before`).to.equal(0);
        expect(darkShare(after, places[name].rect), `${by} ${name} after`).to.be.above(0.01);
      }
      const [red, blue] = places.color.widgets!;
      expect(darkShare(after, blue.rect), `${by} blue`).to.be.above(0.2);
      expect(darkShare(after, red.rect), `${by} red`).to.equal(0);
      const notesBefore = await drawn(blank, 2, by);
      const notesAfter = await drawn(filled, 2, by);
      expect(darkShare(notesAfter, places.notes.rect), `${by} notes`).to.be.above(0.005);
      expect(notesAfter.pixels).to.not.equal(notesBefore.pixels);
    }
  });

  it('a checkbox set back to false, a choice by another option, a value with non-ASCII text', async () => {
    const once = await fill(acroFormPdf(), { agree: true, country: 'France' });
    const twice = await fill(once, { agree: false, country: 'Germany', name: 'Zoë Ñandú' });
    const back = Object.fromEntries((await fields(twice)).map((f) => [f.name, f.value]));
    expect(back).to.include({ agree: false, country: 'Germany', name: 'Zoë Ñandú' });
    expect((await qpdfForm(twice)).fields.find((f) => f.fullname === 'agree')!.annotation.appearancestate).to.equal('/Off');
  });

  it('with flatten=true the values are page text and no field is left', async () => {
    const flat = await fill(acroFormPdf(), FILLED, true);
    const text = await pageText(flat);
    for (const value of ['Zoe Smith', 'Japan', 'second note', 'Reviewed', 'Application form']) expect(text).to.contain(value);
    const qpdf = await qpdfForm(flat);
    expect(qpdf.hasAcroForm).to.be.false();
    expect(qpdf.fields).to.equal([]);
    expect(qpdf.annotations.filter((s) => s === '/Widget' || s === '/FreeText')).to.equal([]);
  });

  it('unknown names and values their fields cannot take are refused before payment, each named', async () => {
    const { error } = await runOperation('pdf.form-fill', [acroFormPdf()], {
      values: JSON.stringify({ nmae: 'x', agree: 'yes', color: 'green', country: 'Atlantis', signature: 'me', submit: 'go', name: 'x'.repeat(41) }),
    });
    expect(error).to.include({ code: 'FIELD_INVALID', status: 422, field: 'values' });
    for (const part of ['no field named "nmae"', '"agree" is a checkbox', '"color" is a radio group: its value is one of "red", "blue"',
      '"country" is a choice: its value is one of "France", "Germany", "Japan"', '"signature" is a signature field', '"submit" is a push button',
      '"name" takes at most 40 characters']) {
      expect(error!.message).to.contain(part);
    }
    for (const [values, message] of [['[1]', 'JSON object'], ['{"a"', 'not valid JSON'], ['{}', 'names no field'], ['{"name": 3}', 'must be a string']]) {
      const refused = await runOperation('pdf.form-fill', [acroFormPdf()], { values });
      expect(refused.error, values).to.include({ code: 'FIELD_INVALID', field: 'values' });
      expect(refused.error!.message, values).to.contain(message);
    }
  });
});

describe('flattening', () => {
  it('fields (a value viewers were asked to draw among them) and annotations become page content; no fields, no widgets', async () => {
    expect((await qpdfForm(acroFormPdf())).annotations).to.include(['/Widget', '/FreeText']);
    const flat = (await runOperation('pdf.flatten', [acroFormPdf({ needAppearances: true })], {})).output!.body;
    const text = await pageText(flat);
    expect(text).to.contain('first note');
    expect(text).to.contain('Reviewed');
    // The unsigned signature field had no appearance: nothing is drawn for it.
    expect(text).to.not.contain('SIGN');
    const qpdf = await qpdfForm(flat);
    expect(qpdf.hasAcroForm).to.be.false();
    expect(qpdf.annotations.filter((s) => s === '/Widget' || s === '/FreeText')).to.equal([]);
    expect(await fields(flat)).to.equal([]);
  });

  it('the robustness corpus through form-fields and flatten: an answer of the schema or a 4xx, never a 5xx; no fields after flattening', { timeout: 600_000 }, async () => {
    const names = (await readdir(corpus)).filter((n) => n.toLowerCase().endsWith('.pdf')).sort();
    // Every sixteenth file and every file that holds a form; the whole corpus runs in the robustness suite (FULL_CORPUS=1).
    const problems: string[] = [];
    let forms = 0;
    let flattened = 0;
    for (const [i, name] of names.entries()) {
      const bytes = new Uint8Array(await readFile(path.join(corpus, name)));
      if (i % 16 !== 0 && !Buffer.from(bytes).includes('/AcroForm')) continue;
      const read = await runOperation('pdf.form-fields', [bytes], {}, { timeoutMs: 60_000 });
      if (read.error) {
        if (read.error.status >= 500) problems.push(`${name} form-fields: ${read.error.code}`);
        continue;
      }
      const answer = JSON.parse(Buffer.from(read.output!.body).toString('utf8')) as { fields: FormField[] };
      if (!validAnswer(answer)) problems.push(`${name} form-fields: ${JSON.stringify(validAnswer.errors).slice(0, 200)}`);
      if (answer.fields.length > 0) forms += 1;
      const flat = await runOperation('pdf.flatten', [bytes], {}, { timeoutMs: 60_000 });
      if (flat.error) {
        if (flat.error.status >= 500) problems.push(`${name} flatten: ${flat.error.code}`);
        continue;
      }
      const after = await qpdfForm(flat.output!.body).catch(() => undefined);
      if (!after) problems.push(`${name} flatten: qpdf cannot read the output`);
      else if (after.fields.length > 0 || after.annotations.includes('/Widget')) problems.push(`${name} flatten: ${after.fields.length} fields and ${after.annotations.filter((a) => a === '/Widget').length} widgets left`);
      flattened += 1;
    }
    console.log(`\n  forms on the corpus: ${forms} files with fields, ${flattened} flattened`);
    expect(problems).to.equal([]);
    expect(forms).to.be.at.least(3);
  });
});

describe('forms paid over HTTP on the local Base chain, and over MCP', () => {
  let t: TestService;
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('HTTP: form-fields, form-fill and flatten at 0.005 USD a page (the form has 2 pages)', async () => {
    const payFetch = await t.payFetch('base');
    const start = await balancesOf(t.evm);
    const read = await payFetch(`${t.url}/v1/pdf/form-fields`, { method: 'POST', body: form([acroFormPdf()]) });
    expect(read.status).to.equal(200);
    expect(((await read.json()) as { fields: FormField[] }).fields.map((f) => f.name)).to.equal([...ACRO_FORM_FIELDS]);
    const filled = await payFetch(`${t.url}/v1/pdf/form-fill`, { method: 'POST', body: form([acroFormPdf()], { values: JSON.stringify(FILLED) }) });
    expect(filled.status).to.equal(200);
    expect(filled.headers.get('content-type')).to.equal('application/pdf');
    const filledPdf = new Uint8Array(await filled.arrayBuffer());
    expect((await qpdfForm(filledPdf)).fields.find((f) => f.fullname === 'name')!.value).to.equal('u:Zoe Smith');
    const flat = await payFetch(`${t.url}/v1/pdf/flatten`, { method: 'POST', body: form([filledPdf]) });
    expect(flat.status).to.equal(200);
    expect(await pageText(new Uint8Array(await flat.arrayBuffer()))).to.contain('Zoe Smith');
    const end = await balancesOf(t.evm);
    expect(start.payer - end.payer).to.equal(30000n);
    expect(end.payTo - start.payTo).to.equal(30000n);
  });

  it('HTTP: the quote reads the form: bad values and XFA get a 422 instead of a price, and paying clients are charged nothing', async () => {
    const start = await balancesOf(t.evm);
    const quote = await fetch(`${t.url}/v1/pdf/form-fill`, { method: 'POST', body: form([acroFormPdf()], { values: '{"nmae":"x","agree":"yes"}' }) });
    expect(quote.status).to.equal(422);
    const body = await quote.json() as { error: { code: string; message: string; field: string } };
    expect(body.error).to.include({ code: 'FIELD_INVALID', field: 'values' });
    expect(body.error.message).to.contain('"nmae"');
    expect(body.error.message).to.contain('"agree" is a checkbox');
    const payFetch = await t.payFetch('base');
    const xfa = await payFetch(`${t.url}/v1/pdf/flatten`, { method: 'POST', body: form([acroFormPdf({ xfa: true })]) });
    expect(xfa.status).to.equal(422);
    expect(((await xfa.json()) as { error: { code: string } }).error.code).to.equal('UNSUPPORTED_TYPE');
    const end = await balancesOf(t.evm);
    expect(end).to.equal(start);
  });

  it('MCP: svc_pdf_form_fill with values and flatten as JSON, svc_pdf_form_fields as structured content', async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const start = await balancesOf(t.evm);
      const pay = async (name: string, args: Record<string, unknown>) => {
        const unpaid = await client.callTool({ name, arguments: args }) as { structuredContent?: Record<string, unknown> };
        const quote = unpaid.structuredContent as unknown as PaymentRequired;
        expect(quote.accepts[0].amount, name).to.equal('10000');
        return await client.callTool({ name, arguments: args, _meta: { 'x402/payment': await signOnBase(quote, t.evm.payerKey) } }) as {
          isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ type: string; resource?: { blob?: string } }>;
        };
      };
      const file = { data: Buffer.from(acroFormPdf()).toString('base64') };
      const read = await pay('svc_pdf_form_fields', { file });
      expect(read.isError).to.not.equal(true);
      expect((read.structuredContent!.fields as FormField[]).map((f) => f.type)).to.equal(['text', 'checkbox', 'radio', 'choice', 'signature', 'button', 'text']);
      const filled = await pay('svc_pdf_form_fill', { file, values: JSON.stringify(FILLED), flatten: true });
      expect(filled.isError).to.not.equal(true);
      const pdf = Buffer.from(filled.content.find((c) => c.type === 'resource')!.resource!.blob!, 'base64');
      expect(await pageText(pdf)).to.contain('Japan');
      expect((await qpdfForm(pdf)).hasAcroForm).to.be.false();
      expect(start.payer - (await balancesOf(t.evm)).payer).to.equal(20000n);
    } finally {
      await client.close();
    }
  });
});

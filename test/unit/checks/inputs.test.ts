// The inspectors by input kind (checks/inputs/): one for every kind an operation declares, each
// refusing what is not of its kind and preparing the rest for the plan and the job; the PDF's
// written to the job directory, counted, cached between a quote and its paid retry, rewritten
// where qpdf repaired it, and read by MuPDF on the quote of an operation that reads pages with it.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { INSPECTORS, type InspectContext } from '../../../checks/inputs/index.js';
import { InspectionCache } from '../../../checks/cache.js';
import { ServiceError } from '../../../core/errors.js';
import { operations, operationById } from '../../../operations/index.js';
import { INPUT_KINDS } from '../../../operations/input-kinds.js';
import { LazyJobDir } from '../../../server/jobdir.js';
import { jobRoot } from '../../support/jobs.js';
import { makePdf, sampleFile, textPages } from '../../support/pdf-fixtures.js';
import { docx } from '../../support/office-fixtures.js';
import { realFile } from '../../support/real-files.js';

export const lab = Lab.script();
const { describe, it, afterEach } = lab;
const { expect } = Code;

const ENCRYPTED = '005-libreoffice-writer-password/libreoffice-writer-password.pdf';

/** The code and message an inspection refuses the bytes with. */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await expect(promise).to.reject(ServiceError);
  return { code: err.code, message: err.message };
}

describe('the inspectors by input kind', () => {
  const dirs: LazyJobDir[] = [];
  afterEach(async () => { await Promise.all(dirs.splice(0).map((d) => d.remove())); });

  /** A context as prepare gives it: a real job directory and inspection cache. */
  const context = (id: string, extra: Partial<InspectContext> = {}): InspectContext => {
    const jobDir = new LazyJobDir(path.join(jobRoot(), 'paydoc-inputs-test'));
    dirs.push(jobDir);
    const inspections = new InspectionCache();
    return { op: operationById(id), fields: {}, index: 0, paid: false, timeoutMs: 60_000, jobDir, inspections, ...extra };
  };

  it('has one inspector for every kind an operation declares, and every kind is named', () => {
    expect(Object.keys(INSPECTORS).sort()).to.equal(Object.keys(INPUT_KINDS).sort());
    for (const op of operations) expect(INSPECTORS[op.input.kind], op.id).to.be.a.function();
  });

  it('an image: its header read, the bytes as sent, no pages; what is not an image refused', async () => {
    const png = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#08f' } }).png().toBuffer();
    const prepared = await INSPECTORS.image(png, context('image.resize'));
    expect(prepared.inspected.header).to.include({ format: 'png', width: 30, height: 20 });
    expect(prepared.inspected.bytes).to.shallow.equal(png);
    expect(prepared.job).to.equal({ bytes: png });
    expect(prepared.pages).to.equal(0);
    expect(prepared.pageBoxes).to.be.undefined();
    expect((await refusal(INSPECTORS.image(makePdf(textPages(1)), context('image.resize')))).code).to.equal('UNSUPPORTED_TYPE');
  });

  it('Markdown: UTF-8 text taken as sent; invalid UTF-8 refused, naming where', async () => {
    const text = Buffer.from('# Notes\n\nA paragraph.\n');
    const prepared = await INSPECTORS.markdown(text, context('pdf.from-markdown'));
    expect(prepared).to.equal({ inspected: { kind: 'markdown', bytes: text }, job: { bytes: text }, pages: 0 });
    const bad = await refusal(INSPECTORS.markdown(Buffer.from([0x23, 0x20, 0xff, 0x0a]), context('pdf.from-markdown')));
    expect(bad).to.equal({
      code: 'CORRUPT_INPUT',
      message: 'the Markdown is not valid UTF-8: the byte 0xff at offset 2 (line 1) does not start a valid character',
    });
  });

  it('a web page: an HTML document found as such; a PDF refused', async () => {
    const html = Buffer.from('<!doctype html><html><body><p>Hello</p></body></html>');
    const prepared = await INSPECTORS.web(html, context('pdf.from-html'));
    expect(prepared).to.equal({ inspected: { kind: 'web', bytes: html, form: 'html' }, job: { bytes: html }, pages: 0 });
    expect(await refusal(INSPECTORS.web(makePdf(textPages(1)), context('pdf.from-html'))))
      .to.equal({ code: 'UNSUPPORTED_TYPE', message: 'the file is a PDF; send an HTML document or a ZIP of a page' });
  });

  it('an Office document: its format from the bytes, checked against what the request declared', async () => {
    const document = await docx();
    const prepared = await INSPECTORS.office(document, context('office.pdf'));
    expect(prepared).to.equal({ inspected: { kind: 'office', bytes: document, format: 'docx' }, job: { bytes: document }, pages: 0 });
    const mislabelled = await refusal(INSPECTORS.office(document, context('office.pdf', { declared: { extension: 'xlsx' } })));
    expect(mislabelled.code).to.equal('UNSUPPORTED_TYPE');
    expect(mislabelled.message).to.contain('its name (.xlsx) says an Excel workbook (XLSX)');
  });

  it('a PDF: written to the job directory under its place, counted, its page sizes read; the job gets the path and count', async () => {
    const pdf = makePdf(textPages(3));
    const ctx = context('pdf.split', { index: 1 });
    const prepared = await INSPECTORS.pdf(pdf, ctx);
    const { inspected } = prepared;
    expect(path.basename(inspected.path)).to.equal('input-2.pdf');
    expect((await readFile(inspected.path)).equals(pdf)).to.be.true();
    expect(inspected).to.include({ kind: 'pdf', pages: 3, encrypted: false });
    expect(inspected.bytes).to.shallow.equal(pdf);
    expect(prepared.job).to.equal({ bytes: pdf, path: inspected.path, pages: 3 });
    expect(prepared.pages).to.equal(3);
    const boxes = await prepared.pageBoxes!();
    expect(boxes).to.have.length(3);
    // Kept beside the inspection: asked again, the sizes come from the cache.
    expect(await prepared.pageBoxes!()).to.shallow.equal(boxes!);
    expect((await refusal(INSPECTORS.pdf(Buffer.from('hello'), context('pdf.split')))).code).to.equal('UNSUPPORTED_TYPE');
  });

  it('a paid retry takes its quote\'s inspection from the cache; a quote after a lighter paid pass inspects again', async () => {
    const lookups: boolean[] = [];
    const inspections = new InspectionCache({ onLookup: (hit) => lookups.push(hit) });
    const pdf = makePdf(textPages(2));
    await INSPECTORS.pdf(pdf, context('pdf.split', { inspections }));
    expect((await INSPECTORS.pdf(pdf, context('pdf.split', { inspections, paid: true }))).pages).to.equal(2);
    expect(lookups).to.equal([false, true]);
    // A corrupt content stream: the paid pass skips the deep check and counts it (rewritten by
    // qpdf, which repaired it); a quote on the same bytes still runs the check and refuses it.
    const broken = Buffer.from(makePdf([{ text: 'x' }]).toString('latin1').replace('/Length', '/Filter /FlateDecode /Length'), 'latin1');
    const paid = await INSPECTORS.pdf(broken, context('pdf.split', { inspections, paid: true }));
    expect(paid.pages).to.equal(1);
    expect(Buffer.from(paid.inspected.bytes).equals(broken)).to.be.false();
    expect(paid.job.bytes).to.shallow.equal(paid.inspected.bytes);
    // The rewrite replaces the upload on disk too: every tool after the count reads what was counted.
    expect((await readFile(paid.inspected.path)).equals(paid.inspected.bytes)).to.be.true();
    expect((await refusal(INSPECTORS.pdf(broken, context('pdf.split', { inspections })))).code).to.equal('CORRUPT_INPUT');
  });

  it('an encrypted PDF: refused where the operation does not take one; for unlock, opened with the password field', async () => {
    const locked = await sampleFile(ENCRYPTED);
    expect((await refusal(INSPECTORS.pdf(locked, context('pdf.split')))).code).to.equal('ENCRYPTED_PDF');
    const inspections = new InspectionCache();
    expect((await refusal(INSPECTORS.pdf(locked, context('pdf.unlock', { inspections, fields: { password: 'nope' } })))).code)
      .to.equal('WRONG_PASSWORD');
    const opened = await INSPECTORS.pdf(locked, context('pdf.unlock', { inspections, fields: { password: 'openpassword' } }));
    expect(opened.inspected).to.include({ pages: 1, encrypted: true });
  });

  it('a page MuPDF cannot read is refused on the quote of an operation that reads pages with it, and only there', async () => {
    const unreadable = await realFile('issue-1688b.pdf');
    const err = await refusal(INSPECTORS.pdf(unreadable, context('pdf.render')));
    expect(err).to.equal({
      code: 'CORRUPT_INPUT',
      message: 'page 1 of the PDF cannot be read by MuPDF, which /v1/pdf/render reads pages with: '
        + 'its content is damaged or uses parameters MuPDF does not support',
    });
    expect((await INSPECTORS.pdf(unreadable, context('pdf.render', { paid: true }))).pages).to.equal(1);
    expect((await INSPECTORS.pdf(unreadable, context('pdf.split'))).pages).to.equal(1);
  });
});

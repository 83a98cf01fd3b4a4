// Scanned pages in /v1/pdf/markdown, over HTTP and paid on the local Base chain, read by the real
// tesseract: a page that is only a 200 dpi image of text, the same image under a thin text layer,
// a scanned page after a text page, a document longer than the deadline allows, and MARKDOWN_OCR=off.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { runTool } from '../../../tools/process/run-tool.js';
import { form, startTestService, type TestService } from '../../support/service.js';
import { wordRecall } from '../../support/word-recall.js';
import { ocrEmptyNote, ocrNote } from '../../../workers/layout/convert.js';
import { ConfigError, installed, loadConfig } from '../../../server/config.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PAGE_RATE = 20_000n;
/** Every job's deadline in the tesseract service: short, so that the deadline test stays short. */
const JOB_TIMEOUT_MS = 20_000;

const LOREM = 'The committee reviewed each submission against the published criteria and recorded its reasons in the minutes for later reference by all members';

// A dense A4 page (about 330 words): two heading sizes over body text, as a typed report would be.
const REPORT = `<!doctype html><html><head><meta charset="utf-8"><style>
  @page { size: A4; margin: 2.2cm 2cm } body { font: 11pt/1.4 "DejaVu Serif" }
  h1 { font-size: 24pt } h2 { font-size: 17pt }</style></head><body>
<h1>Annual Field Report</h1>
<p>This report summarises the season of fieldwork along the northern ridge. ${LOREM}. Rainfall was lower than expected in March and higher in May, which delayed the survey of the lake shore by two weeks.</p>
<p>${LOREM}. Samples were labelled on site, photographed, and sent to the laboratory within three days of collection, except for the water samples, which travelled the same evening.</p>
<h2>Survey Results</h2>
<p>North ridge yielded one hundred and twenty samples, south valley ninety five and the lake shore eighty four. ${LOREM}. The share of damaged jars fell from six to two percent after the new crates arrived.</p>
<p>${LOREM}. Volunteers logged their hours in the shared spreadsheet; the totals are given in the appendix together with the travel costs and the equipment bought during the season.</p>
<h2>Next Season</h2>
<p>The team proposes to extend the survey to the eastern plateau, to replace the rain gauge at the lake shore and to train two more volunteers in sampling. ${LOREM}.</p>
</body></html>`;

const SECOND = `<!doctype html><html><head><meta charset="utf-8"><style>
  @page { size: A4; margin: 2.2cm 2cm } body { font: 11pt/1.4 "DejaVu Serif" } h1 { font-size: 24pt }</style></head><body>
<h1>Budget Overview</h1>
<p>Spending stayed within the approved budget. Travel took the largest share, followed by laboratory fees and equipment. ${LOREM}.</p>
</body></html>`;

let scratch: string;
let t: TestService;
let off: TestService;
let pay: typeof fetch;
let payOff: typeof fetch;
const fixture: Record<string, Uint8Array> = {};
const reference: Record<string, string> = {};

async function run(tool: string, args: string[], input?: Uint8Array): Promise<Uint8Array> {
  const r = await runTool(tool, args, { cwd: scratch, timeoutMs: 60_000, ...(input ? { input } : {}), maxStdout: 64 * 1024 * 1024 });
  expect(r.exitCode, `${tool} ${r.stderr}`).to.equal(0);
  return r.stdout;
}

async function htmlPdf(name: string, html: string): Promise<void> {
  await run('weasyprint', ['-', `${name}.pdf`], new TextEncoder().encode(html));
}

/** A page as a scanner would deliver it: a 200 dpi grey image, wrapped as a PDF with no text at all. */
async function scan(name: string, source: string): Promise<void> {
  await run('mutool', ['draw', '-q', '-r', '200', '-c', 'gray', '-o', `${name}.png`, `${source}.pdf`, '1']);
  // mutool sizes the page from the PNG's resolution (200 dpi): an A4 page again.
  await run('mutool', ['convert', '-o', `${name}.pdf`, `${name}.png`]);
}

async function bytes(name: string): Promise<Uint8Array> {
  return new Uint8Array(await readFile(path.join(scratch, `${name}.pdf`)));
}

async function textLayer(name: string): Promise<string> {
  return Buffer.from(await run('pdftotext', ['-layout', `${name}.pdf`, '-'])).toString('utf8');
}

async function health(service: TestService): Promise<Record<string, unknown>> {
  return (await (await fetch(`${service.url}/v1/health`)).json()) as Record<string, unknown>;
}

async function scannedPagesEntry(service: TestService): Promise<Record<string, unknown>> {
  const catalog = (await (await fetch(`${service.url}/v1/discovery`)).json()) as { items: { resource: string; metadata: Record<string, unknown> }[] };
  const item = catalog.items.find((i) => i.resource.endsWith('/v1/pdf/markdown'))!;
  return item.metadata.scannedPages as Record<string, unknown>;
}

/** A paid conversion: the Markdown, and what the payer was charged for it. */
async function convert(
  service: TestService, payFetch: typeof fetch, pdf: Uint8Array,
): Promise<{ status: number; type: string; md: string; charged: bigint; ms: number }> {
  const before = await service.evm.balanceOf(service.evm.payerAddress);
  const started = Date.now();
  const res = await payFetch(`${service.url}/v1/pdf/markdown`, { method: 'POST', body: form([{ bytes: pdf, name: 'scan.pdf', type: 'application/pdf' }]) });
  const md = await res.text();
  const ms = Date.now() - started;
  const after = await service.evm.balanceOf(service.evm.payerAddress);
  return { status: res.status, type: res.headers.get('content-type') ?? '', md, charged: before - after, ms };
}

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'markdown-scans-'));
  await htmlPdf('report', REPORT);
  await htmlPdf('second', SECOND);
  await scan('report-scan', 'report');
  await scan('second-scan', 'second');
  // The same scan under a thin text layer: a page number stamped over the picture of the page.
  const png = (await readFile(path.join(scratch, 'report-scan.png'))).toString('base64');
  await htmlPdf('stamped', `<!doctype html><html><head><style>@page { size: A4; margin: 0 } body { margin: 0 }
    img { display: block; width: 210mm; height: 297mm } .n { position: absolute; top: 8mm; right: 10mm; font: 9pt "DejaVu Sans" }</style></head>
    <body><img src="data:image/png;base64,${png}"><div class="n">7</div></body></html>`);
  // A scan fed in sideways and turned upright by the page's /Rotate, as scanners often save them.
  await sharp(path.join(scratch, 'report-scan.png')).rotate(270).withMetadata({ density: 200 }).png().toFile(path.join(scratch, 'sideways.png'));
  await run('mutool', ['convert', '-o', 'sideways.pdf', 'sideways.png']);
  await run('qpdf', ['--rotate=+90', 'sideways.pdf', 'rotated.pdf']);
  // A photo: an image with no text in it at all.
  await sharp({ create: { width: 1200, height: 1600, channels: 3, background: '#c8d2e0' } }).withMetadata({ density: 150 }).png().toFile(path.join(scratch, 'photo.png'));
  await run('mutool', ['convert', '-o', 'photo.pdf', 'photo.png']);
  // A text page followed by a scanned one; and fourteen scanned pages, more than one deadline reads.
  await run('qpdf', ['--empty', '--pages', 'second.pdf', 'report-scan.pdf', '--', 'mixed.pdf']);
  await run('qpdf', ['--empty', '--pages', ...Array.from({ length: 14 }, () => 'report-scan.pdf'), '--', 'long.pdf']);
  for (const name of ['report-scan', 'stamped', 'rotated', 'photo', 'mixed', 'long']) fixture[name] = await bytes(name);
  reference.report = await textLayer('report');
  reference.second = await textLayer('second');

  t = await startTestService({ config: { markdownOcr: 'tesseract', jobTimeoutMs: JOB_TIMEOUT_MS } });
  off = await startTestService({ rigs: { evm: t.evm }, config: { markdownOcr: 'off' } });
  pay = await t.payFetch('base');
  payOff = await off.payFetch('base');
});

after(async () => {
  await off?.stop();
  await t?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe('/v1/pdf/markdown on scanned pages (MARKDOWN_OCR=tesseract)', () => {
  it('says in health and in the catalog that scanned pages are read, locally', async () => {
    expect((await health(t)).markdownOcr).to.equal('tesseract');
    expect(await scannedPagesEntry(t)).to.include({ read: true, sendsContent: false, engine: 'tesseract (local)' });
  });

  it('reads a page that is only a 200 dpi image of text: the words, a heading per size, paid per page', { timeout: 60_000 }, async () => {
    const out = await convert(t, pay, fixture['report-scan']!);
    expect(out.status).to.equal(200);
    expect(out.type).to.startWith('text/markdown');
    expect(out.charged).to.equal(PAGE_RATE);
    const recall = wordRecall(reference.report!, out.md);
    process.stdout.write(`\n    word recall, 200 dpi scan of a report page: ${recall.toFixed(4)}\n`);
    expect(recall).to.be.at.least(0.95);
    const lines = out.md.split('\n');
    expect(lines).to.include('# Annual Field Report');
    expect(lines).to.include('## Survey Results');
    expect(lines).to.include('## Next Season');
    // Paragraphs, not one line per printed line: the first paragraph is one line of Markdown.
    const first = lines.find((l) => l.startsWith('This report summarises'))!;
    expect(first).to.contain('which delayed the survey of the lake shore by two weeks.');
    expect(out.md).to.not.contain('OCR is needed');
    expect(await t.jobDirsLeft()).to.equal([]);
  });

  it('reads a page whose thin text layer (a stamped page number) lies over an image covering the page', { timeout: 60_000 }, async () => {
    const out = await convert(t, pay, fixture.stamped!);
    expect(out.status).to.equal(200);
    expect(out.charged).to.equal(PAGE_RATE);
    expect(wordRecall(reference.report!, out.md)).to.be.at.least(0.95);
    expect(out.md.split('\n')).to.include('# Annual Field Report');
  });

  it('reads a scan stored sideways and turned upright by the page rotation', { timeout: 60_000 }, async () => {
    const out = await convert(t, pay, fixture.rotated!);
    expect(out.status).to.equal(200);
    expect(wordRecall(reference.report!, out.md)).to.be.at.least(0.95);
    expect(out.md.split('\n')).to.include('# Annual Field Report');
  });

  it('says of a scanned page with no text on it (a photo) that OCR found none, and charges the page', { timeout: 60_000 }, async () => {
    const out = await convert(t, pay, fixture.photo!);
    expect(out.status).to.equal(200);
    expect(out.charged).to.equal(PAGE_RATE);
    expect(out.md.trim()).to.equal(ocrEmptyNote(1));
  });

  it('keeps a text page and a scanned page in page order, each read its own way', { timeout: 60_000 }, async () => {
    const out = await convert(t, pay, fixture.mixed!);
    expect(out.status).to.equal(200);
    expect(out.charged).to.equal(2n * PAGE_RATE);
    const budget = out.md.indexOf('# Budget Overview');
    const report = out.md.indexOf('# Annual Field Report');
    expect(budget).to.equal(0);
    expect(report).to.be.above(budget);
    expect(wordRecall(reference.second!, out.md.slice(0, report))).to.equal(1);
    expect(wordRecall(reference.report!, out.md.slice(report))).to.be.at.least(0.95);
  });

  it('ends a document of more scanned pages than the deadline allows in time: pages read, then a note for each page left, all charged and delivered', { timeout: 90_000 }, async () => {
    const out = await convert(t, pay, fixture.long!);
    expect(out.status).to.equal(200);
    expect(out.charged).to.equal(14n * PAGE_RATE);
    // Within the job's deadline (the pool would answer 504 past it), with room for the payment round trips.
    expect(out.ms).to.be.below(JOB_TIMEOUT_MS + 5_000);
    const headings = out.md.split('\n').filter((l) => l === '# Annual Field Report').length;
    const notes = [...out.md.matchAll(/^\*Page (\d+) has no text layer and could not be read within this call's time limit: convert it in a smaller document to read it\.\*$/gm)].map((m) => Number(m[1]));
    process.stdout.write(`    deadline ${JOB_TIMEOUT_MS / 1000} s: ${headings} of 14 scanned pages read in ${out.ms} ms\n`);
    expect(headings).to.be.at.least(1);
    expect(notes.length).to.be.at.least(1);
    // The pages read come first; the notes name exactly the pages after them.
    expect(headings + notes.length).to.equal(14);
    expect(notes).to.equal(Array.from({ length: notes.length }, (_, k) => headings + 1 + k));
    const second = out.md.indexOf('# Annual Field Report', 1);
    expect(wordRecall(reference.report!, out.md.slice(0, second > 0 ? second : undefined))).to.be.at.least(0.95);
  });
});

describe('MARKDOWN_OCR', () => {
  it('is tesseract by default where tesseract is installed, takes off and tesseract, and refuses anything else naming the variable', () => {
    expect(installed('tesseract')).to.be.true();
    expect(loadConfig({}, {}).markdownOcr).to.equal('tesseract');
    expect(loadConfig({}, { MARKDOWN_OCR: 'auto' }).markdownOcr).to.equal('tesseract');
    expect(loadConfig({}, { MARKDOWN_OCR: 'off' }).markdownOcr).to.equal('off');
    expect(loadConfig({}, { MARKDOWN_OCR: 'tesseract' }).markdownOcr).to.equal('tesseract');
    expect(() => loadConfig({}, { MARKDOWN_OCR: 'model' })).to.throw(ConfigError, /MARKDOWN_OCR/);
  });
});

describe('/v1/pdf/markdown with MARKDOWN_OCR=off', () => {
  it('says so in health and in the catalog', async () => {
    expect((await health(off)).markdownOcr).to.equal('off');
    expect(await scannedPagesEntry(off)).to.include({ read: false });
  });

  it('answers a scanned page with the note, as before OCR, and still reads the text page', { timeout: 30_000 }, async () => {
    const alone = await convert(off, payOff, fixture['report-scan']!);
    expect(alone.status).to.equal(200);
    expect(alone.md.trim()).to.equal(ocrNote(1));
    const mixed = await convert(off, payOff, fixture.mixed!);
    expect(mixed.status).to.equal(200);
    expect(mixed.charged).to.equal(2n * PAGE_RATE);
    expect(mixed.md.startsWith('# Budget Overview')).to.be.true();
    expect(mixed.md.trim().endsWith(ocrNote(2))).to.be.true();
  });
});

import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { runTool } from '../workers/runner.js';
import { markdown } from '../workers/pdf/markdown/index.js';
import { convertStext } from '../workers/pdf/markdown/convert.js';
import type { JobInput } from '../workers/contract.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SETTINGS: JobInput['settings'] = { modelConcurrency: 1, modelDpi: 150, ocrEngine: 'tesseract', ocrLanguages: 'eng', maxZipBytes: 0 };

let scratch: string;

async function pdfFromHtml(html: string): Promise<{ file: string; pages: number }> {
  const dir = await mkdtemp(path.join(scratch, 'render-'));
  const r = await runTool('weasyprint', ['-', 'out.pdf'], { cwd: dir, input: new TextEncoder().encode(html), timeoutMs: 60_000 });
  expect(r.exitCode).to.equal(0);
  const info = await runTool('pdfinfo', ['out.pdf'], { cwd: dir, timeoutMs: 10_000 });
  const pages = Number(/Pages:\s+(\d+)/.exec(Buffer.from(info.stdout).toString())![1]);
  return { file: path.join(dir, 'out.pdf'), pages };
}

async function convert(pdf: { file: string; pages: number }): Promise<{ text: string; mediaType: string }> {
  const jobDir = await mkdtemp(path.join(scratch, 'job-'));
  const target = path.join(jobDir, 'input.pdf');
  await writeFile(target, await readFile(pdf.file));
  const out = await markdown({
    operation: 'pdf.markdown', fields: {}, jobDir, deadline: Date.now() + 30_000, settings: SETTINGS,
    files: [{ bytes: new Uint8Array(await readFile(target)), path: target, format: 'pdf', pages: pdf.pages }],
  });
  return { text: Buffer.from(out.body).toString('utf8'), mediaType: out.mediaType };
}

const PAGE_CSS = `
  @page { size: A4; margin: 2.2cm 2cm;
    @top-center { content: "Confidential Draft Memo"; font: 9pt "DejaVu Sans"; }
    @bottom-center { content: counter(page); font: 9pt "DejaVu Sans"; } }
  body { font: 11pt/1.4 "DejaVu Serif"; }
  h1 { font-size: 24pt; } h2 { font-size: 18pt; } h3 { font-size: 14pt; }
  pre, code { font-family: "DejaVu Sans Mono"; font-size: 10pt; }
  table.ruled { border-collapse: collapse; } table.ruled td, table.ruled th { border: 1px solid black; padding: 3pt 8pt; }
  table.plain td, table.plain th { border: none; padding: 2pt 14pt 2pt 0; text-align: left; }
  .columns { columns: 2; column-gap: 1cm; }
`;

const LOREM = 'The committee reviewed each submission against the published criteria and recorded its reasons in the minutes for later reference by all members';

const DOCUMENT = `<!doctype html><html><head><meta charset="utf-8"><style>${PAGE_CSS}</style></head><body>
<h1>Annual Field Report</h1>
<p>This report summarises the season. Read it <b>carefully</b> before the <i>next</i> meeting, and see the <a href="https://example.org/docs">project site</a> for data.</p>
<h2>Survey Results</h2>
<p>${LOREM}.</p>
<h3>Sampling Details</h3>
<ul><li>Fruit<ul><li>Apple</li><li>Pear</li></ul></li><li>Vegetables</li></ul>
<ol><li>Collect the samples</li><li>Label every jar</li></ol>
<table class="ruled"><tr><th>Site</th><th>Samples</th><th>Share</th></tr>
<tr><td>North ridge</td><td>120</td><td>40%</td></tr><tr><td>South valley</td><td>95</td><td>32%</td></tr><tr><td>Lake shore</td><td>84</td><td>28%</td></tr></table>
<p>The counts below use no rules at all.</p>
<table class="plain"><tr><th>Month</th><th>Rain</th><th>Sun</th></tr>
<tr><td>March</td><td>41</td><td>150</td></tr><tr><td>April</td><td>38</td><td>171</td></tr><tr><td>May</td><td>22</td><td>204</td></tr></table>
<p>The tally script follows.</p>
<pre>def tally(rows):
    total = 0
    for row in rows:
        total += row
    return total</pre>
<h2 style="break-before: page">Discussion</h2>
<div class="columns">
<p>Alpha paragraph opens the left column. ${LOREM}. ${LOREM}. ${LOREM}. ${LOREM}.</p>
<p>Omega paragraph closes the right column. ${LOREM}. ${LOREM}. ${LOREM}. ${LOREM}.</p>
</div>
</body></html>`;

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'pdf-markdown-test-'));
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('pdf.markdown', () => {
  let md = '';
  let lines: string[] = [];

  before({ timeout: 30_000 }, async () => {
    const out = await convert(await pdfFromHtml(DOCUMENT));
    expect(out.mediaType).to.equal('text/markdown; charset=utf-8');
    md = out.text;
    lines = md.split('\n');
  });

  it('recovers three heading levels from type size', () => {
    expect(lines).to.include('# Annual Field Report');
    expect(lines).to.include('## Survey Results');
    expect(lines).to.include('### Sampling Details');
    expect(lines).to.include('## Discussion');
  });

  it('keeps bold, italic and link annotations inline', () => {
    expect(md).to.contain('Read it **carefully** before the *next* meeting, and see the [project site](https://example.org/docs) for data.');
  });

  it('joins the lines of a paragraph into one', () => {
    expect(lines).to.include(`${LOREM}.`);
  });

  it('nests bullet lists and numbers ordered ones', () => {
    const fruit = lines.indexOf('- Fruit');
    expect(fruit).to.be.above(-1);
    expect(lines.slice(fruit, fruit + 4)).to.equal(['- Fruit', '    - Apple', '    - Pear', '- Vegetables']);
    const first = lines.indexOf('1. Collect the samples');
    expect(first).to.be.above(fruit);
    expect(lines[first + 1]).to.equal('2. Label every jar');
  });

  it('turns a ruled table into a pipe table', () => {
    const start = lines.indexOf('| Site | Samples | Share |');
    expect(start).to.be.above(-1);
    expect(lines.slice(start, start + 5)).to.equal([
      '| Site | Samples | Share |', '| --- | --- | --- |',
      '| North ridge | 120 | 40% |', '| South valley | 95 | 32% |', '| Lake shore | 84 | 28% |',
    ]);
  });

  it('finds a borderless table from column alignment', () => {
    const start = lines.indexOf('| Month | Rain | Sun |');
    expect(start).to.be.above(-1);
    expect(lines.slice(start, start + 5)).to.equal([
      '| Month | Rain | Sun |', '| --- | --- | --- |', '| March | 41 | 150 |', '| April | 38 | 171 |', '| May | 22 | 204 |',
    ]);
  });

  it('fences monospaced lines as code, keeping indentation', () => {
    expect(md).to.contain('```\ndef tally(rows):\n    total = 0\n    for row in rows:\n        total += row\n    return total\n```');
  });

  it('reads two columns left then right', () => {
    const alpha = md.indexOf('Alpha paragraph opens the left column.');
    const omega = md.indexOf('Omega paragraph closes the right column.');
    expect(alpha).to.be.above(md.indexOf('## Discussion'));
    expect(omega).to.be.above(alpha);
    // The left column's paragraph is whole before the right column starts.
    expect(md.slice(alpha, omega)).to.contain(`${LOREM}. ${LOREM}. ${LOREM}. ${LOREM}.`);
  });

  it('drops running headers and page numbers', () => {
    expect(md).to.not.contain('Confidential Draft Memo');
    expect(lines.filter((l) => /^\s*\d+\s*$/.test(l))).to.equal([]);
  });
});

describe('pdf.markdown on ruled tables', () => {
  it('reads cells spanning rows and columns from the drawn rules, as an HTML table', { timeout: 20_000 }, async () => {
    const pdf = await pdfFromHtml(`<html><head><style>${PAGE_CSS}</style></head><body>
      <p>Stock by site.</p>
      <table class="ruled">
        <tr><td rowspan="2">Site</td><td colspan="2">Stock</td></tr>
        <tr><td>Seeds</td><td>Tools</td></tr>
        <tr><td>North ridge</td><td>12</td><td>7</td></tr>
        <tr><td>South valley</td><td colspan="2">closed for the season</td></tr>
      </table>
      <p>End of the list.</p></body></html>`);
    const out = await convert(pdf);
    expect(out.text).to.contain([
      '<table>',
      '<tr><td rowspan="2">Site</td><td colspan="2">Stock</td></tr>',
      '<tr><td>Seeds</td><td>Tools</td></tr>',
      '<tr><td>North ridge</td><td>12</td><td>7</td></tr>',
      '<tr><td>South valley</td><td colspan="2">closed for the season</td></tr>',
      '</table>',
    ].join('\n'));
    expect(out.text.indexOf('Stock by site.')).to.be.below(out.text.indexOf('<table>'));
    expect(out.text.indexOf('End of the list.')).to.be.above(out.text.indexOf('</table>'));
  });
});

describe('pdf.markdown on hard inputs', () => {
  it('answers a page without a text layer with an OCR note, not garbage', { timeout: 20_000 }, async () => {
    const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#c8d2e0' } }).png().toBuffer();
    const pdf = await pdfFromHtml(`<html><body><img src="data:image/png;base64,${png.toString('base64')}"></body></html>`);
    const out = await convert(pdf);
    expect(out.text.trim()).to.equal('*Page 1 has no text layer: OCR is needed to read it.*');
  });

  it('undoes hyphenation at line ends', () => {
    const glyphs = (text: string, x: number, y: number) => [...text].map((c, i) =>
      `<char quad="${x + i * 6} ${y} ${x + i * 6 + 6} ${y} ${x + i * 6} ${y + 12} ${x + i * 6 + 6} ${y + 12}" x="${x + i * 6}" y="${y + 10}" color="#000000" c="${c}"/>`).join('');
    const line = (text: string, y: number) => `<line bbox="72 ${y} 400 ${y + 12}" wmode="0" dir="1 0"><font name="Serif" size="10">${glyphs(text, 72, y)}</font></line>`;
    const xml = `<document><page id="page1" width="612" height="792"><block>${line('The measure-', 300)}${line('ments were repeated twice.', 312)}</block></page></document>`;
    expect(convertStext(xml).trim()).to.equal('The measurements were repeated twice.');
  });

  it('makes no network connection, even for a PDF full of links to a listening server', { timeout: 20_000 }, async () => {
    let connections = 0;
    const server = net.createServer((socket) => { connections++; socket.destroy(); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const url = `http://127.0.0.1:${port}/page`;
      const pdf = await pdfFromHtml(`<html><body><h1>Links</h1><p>See <a href="${url}">the local page</a> now.</p></body></html>`);
      const out = await convert(pdf);
      // The link was read from the annotation, so the URL was in hand, and still nothing connected.
      expect(out.text).to.contain(`[the local page](${url})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(connections).to.equal(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('rejects bytes that are not a readable PDF', { timeout: 10_000 }, async () => {
    const jobDir = await mkdtemp(path.join(scratch, 'job-'));
    const target = path.join(jobDir, 'input.pdf');
    await writeFile(target, 'not a pdf at all');
    const error = await expect(markdown({
      operation: 'pdf.markdown', fields: {}, jobDir, deadline: Date.now() + 30_000, settings: SETTINGS,
      files: [{ bytes: new Uint8Array(), path: target, format: 'pdf', pages: 1 }],
    })).to.reject();
    expect((error as { code?: string }).code).to.equal('CORRUPT_INPUT');
  });
});

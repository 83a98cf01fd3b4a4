import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { runTool } from '../../../tools/process/run-tool.js';
import { markdown } from '../../../workers/layout/index.js';
import { convertStext } from '../../../workers/layout/convert.js';
import { blocksOf } from '../../../workers/layout/structure.js';
import { plannedJob, TEST_SETTINGS } from '../../support/jobs.js';
import { realFile } from '../../support/real-files.js';
import { form, startTestService, type TestService } from '../../support/service.js';
import { balancesOf, quoteAt } from '../../support/paying.js';
import { pdfFacts } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

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
  const planned = await plannedJob('pdf.markdown', [new Uint8Array(await readFile(pdf.file))], {}, { root: scratch, timeoutMs: 30_000 });
  expect(planned.job.files[0].pages).to.equal(pdf.pages);
  const out = await planned.run().finally(() => planned.jobDir.remove());
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

// Borderless tables: no rules at all, only cell padding and column alignment.
const PLAIN_CSS = `
  @page { size: A4; margin: 2cm; }
  body { font: 11pt/1.4 "DejaVu Serif"; }
  table { border-collapse: collapse; } td { border: none; padding: 3pt 12pt 3pt 0; text-align: left; vertical-align: top; }
  .columns { columns: 2; column-gap: 0.8cm; } .columns, .columns table { font: 10pt/1.35 "DejaVu Sans"; }
  .columns td { padding: 2pt 8pt 2pt 0; } .nowrap { white-space: nowrap; }
`;

describe('pdf.markdown on borderless tables', () => {
  const render = async (body: string) => (await convert(await pdfFromHtml(`<html><head><meta charset="utf-8"><style>${PLAIN_CSS}</style></head><body>${body}</body></html>`))).text;
  const tableAt = (md: string, header: string, length: number) => {
    const lines = md.split('\n');
    const start = lines.indexOf(header);
    expect(start, md).to.be.above(-1);
    return lines.slice(start, start + length);
  };

  it('keeps the lines of a wrapped cell in one row', { timeout: 20_000 }, async () => {
    const md = await render(`<h1>Stations</h1><p>Inventory of the field stations follows.</p>
      <table><tr><td>Station</td><td style="width: 9em">Equipment on site</td><td>Staff</td></tr>
      <tr><td>North ridge</td><td>Weather mast, two soil probes and a rain gauge</td><td>3</td></tr>
      <tr><td>South valley</td><td>Rain gauge</td><td>1</td></tr>
      <tr><td>Lake shore</td><td>Water sampler and a small boat with its trailer</td><td>2</td></tr></table>
      <p>The end of the list.</p>`);
    expect(tableAt(md, '| Station | Equipment on site | Staff |', 5)).to.equal([
      '| Station | Equipment on site | Staff |', '| --- | --- | --- |',
      '| North ridge | Weather mast, two soil probes and a rain gauge | 3 |',
      '| South valley | Rain gauge | 1 |',
      '| Lake shore | Water sampler and a small boat with its trailer | 2 |',
    ]);
    expect(md).to.contain('| 2 |\n\nThe end of the list.');
  });

  it('reads a form: one header row over empty columns, label rows below', { timeout: 20_000 }, async () => {
    const md = await render(`<h1>Visit form</h1><p>Fill in the form for each visit.</p>
      <table><tr><td></td><td>Morning visit</td><td>Evening visit</td></tr>
      <tr><td>Air temperature</td><td></td><td></td></tr>
      <tr><td>Wind direction</td><td></td><td></td></tr>
      <tr><td>Cloud cover</td><td></td><td></td></tr></table>
      <p>Sign the form at the end of the day and hand it in at the station office before leaving.</p>`);
    expect(tableAt(md, '|  | Morning visit | Evening visit |', 5)).to.equal([
      '|  | Morning visit | Evening visit |', '| --- | --- | --- |',
      '| Air temperature |  |  |', '| Wind direction |  |  |', '| Cloud cover |  |  |',
    ]);
    expect(md).to.contain('| Cloud cover |  |  |\n\nSign the form at the end of the day');
  });

  it('reads a two-level header: group cells span their columns, the cell beside them spans the rows', { timeout: 20_000 }, async () => {
    const md = await render(`<h1>Survey results</h1><p>Counts by group and by season.</p>
      <table><tr><td rowspan="2">Site</td><td colspan="3">Spring counts</td><td colspan="2">Autumn counts</td></tr>
      <tr><td>Birds</td><td>Bats</td><td>Moths</td><td>Birds</td><td>Bats</td></tr>
      <tr><td>North ridge</td><td>120</td><td>14</td><td>310</td><td>98</td><td>9</td></tr>
      <tr><td>South valley</td><td>95</td><td>22</td><td>280</td><td>101</td><td>17</td></tr></table>
      <p>The spring survey ran for six weeks.</p>`);
    expect(md).to.contain([
      '<table>',
      '<tr><td rowspan="2">Site</td><td colspan="3">Spring counts</td><td colspan="2">Autumn counts</td></tr>',
      '<tr><td>Birds</td><td>Bats</td><td>Moths</td><td>Birds</td><td>Bats</td></tr>',
      '<tr><td>North ridge</td><td>120</td><td>14</td><td>310</td><td>98</td><td>9</td></tr>',
      '<tr><td>South valley</td><td>95</td><td>22</td><td>280</td><td>101</td><td>17</td></tr>',
      '</table>',
    ].join('\n'));
  });

  it('finds the column gutter when a table spills into it, and reads the table whole', { timeout: 20_000 }, async () => {
    const filler = 'The committee reviewed each submission against the published criteria and recorded its reasons in the minutes for later reference by all members.';
    const md = await render(`<h1>Station report</h1><div class="columns">
      <p>Alpha paragraph opens the left column. ${filler}</p>
      <table><tr><td class="nowrap">Station name</td><td class="nowrap">Samples taken</td><td class="nowrap">Mean depth (metres)</td></tr>
      <tr><td class="nowrap">North ridge</td><td>120</td><td>4.25</td></tr><tr><td class="nowrap">South valley</td><td>95</td><td>12.50</td></tr>
      <tr><td>Lake shore</td><td>84</td><td>7.75</td></tr></table>
      <p>Beta paragraph follows the table. ${filler}</p>
      <p>Omega paragraph closes the right column. ${filler} ${filler}</p></div>`);
    expect(tableAt(md, '| Station name | Samples taken | Mean depth (metres) |', 5)).to.equal([
      '| Station name | Samples taken | Mean depth (metres) |', '| --- | --- | --- |',
      '| North ridge | 120 | 4.25 |', '| South valley | 95 | 12.50 |', '| Lake shore | 84 | 7.75 |',
    ]);
    // The left column is read before the right one.
    const order = ['Alpha paragraph', '| Station name', 'Beta paragraph', 'Omega paragraph'].map((t) => md.indexOf(t));
    expect(order.every((at, k) => at >= 0 && (k === 0 || at > order[k - 1]!)), md).to.be.true();
  });

  it('makes no table of prose whose lines line up at indents', { timeout: 20_000 }, async () => {
    const md = await render(`<style>
        p.indent { text-indent: 2em; margin: 0; } blockquote { margin: 0.8em 3em; }
        .refs p { padding-left: 2em; text-indent: -2em; margin: 0.2em 0; } .poem p { margin: 0; } .poem .in { padding-left: 2em; }
        dd { margin-left: 3em; }</style>
      <h1>Field Notes</h1>
      <p class="indent">The first paragraph starts with an indent and runs on for long enough to wrap over several lines of the page, as ordinary prose does in a report.</p>
      <p class="indent">The second paragraph is set the same way, indented at its first line and flush at the others, so its left edges line up with those above.</p>
      <blockquote>A quotation set in from both margins, long enough to wrap onto a second line and a third one too, keeps to its own narrower measure.</blockquote>
      <div class="refs"><p>Adams, J. (2019). Notes on the survey of upland streams. Journal of Field Methods, 12, 45–67.</p>
      <p>Baker, L. and Chen, M. (2021). Counting birds at dawn and at dusk: a comparison over three seasons. Ecology Letters, 8, 101–119.</p></div>
      <div class="poem"><p>The river runs below the hill,</p><p class="in">and slows beside the mill;</p>
      <p>the swallows skim the water still,</p><p class="in">and all the air is still.</p></div>
      <dl><dt>Transect</dt><dd>A line along which every sample is taken at a fixed interval.</dd>
      <dt>Quadrat</dt><dd>A square frame laid on the ground to count what grows inside it.</dd></dl>`);
    expect(md).to.not.contain('|');
    expect(md).to.not.contain('<table');
    for (const text of ['as ordinary prose does in a report.', 'keeps to its own narrower measure.', 'Ecology Letters, 8, 101–119.', 'and all the air is still.', 'to count what grows inside it.']) {
      expect(md).to.contain(text);
    }
  });
});

describe('pdf.markdown on two-column pages', () => {
  it('a list item cut by the column break runs on into the right column: one item', { timeout: 20_000 }, async () => {
    const items = [
      'Place the tubes in a balanced configuration in the microcentrifuge and spin them for three minutes.',
      'Carefully pour off the liquid from both tubes without disturbing the pellets, then invert the tubes and tap them gently on the surface of a clean paper towel to drain them thoroughly.',
      'Briefly spin the tubes again to bring any remaining ethanol to the bottom of each tube, then use the micropipette to remove it, with a fresh tip for each tube, taking care not to disturb the pellet resting at the bottom of the tube while you work.',
      'Allow the tubes to dry by leaving their caps open for five minutes.',
    ];
    // The second item's last lines open the right column.
    const out = await convert(await pdfFromHtml(`<!doctype html><html><head><meta charset="utf-8"><style>
      @page { size: A5; margin: 1.5cm 1.3cm; } body { font: 9.5pt/1.35 "Nimbus Sans"; columns: 2; column-gap: 0.7cm; }
      </style></head><body><p>Alpha opens the page. The survey teams walked each transect at dawn and noted every bird they heard or saw along the way.</p>
      <ol>${items.map((t) => `<li>${t}</li>`).join('')}</ol><p>Omega closes the page.</p></body></html>`));
    expect(out.text).to.contain(items.map((t, k) => `${k + 1}. ${t}`).join('\n'));
  });
});

describe('pdf.markdown on hard inputs', () => {
  it('reads a region of 250,000 lines, more than one call takes as arguments, as one paragraph', () => {
    const line = (k: number) => ({ x0: 50, x1: 90, y0: k * 1.2, y1: k * 1.2 + 1, size: 1, spans: [{ text: 'a', bold: false, italic: false, mono: false }], text: 'a', bold: false, italic: false, mono: false, charWidth: 0.5 });
    const blocks = blocksOf(Array.from({ length: 250_000 }, (_, k) => line(k)), { bodySize: 1 });
    expect(blocks.map((b) => b.kind)).to.equal(['paragraph']);
  });

  it('answers a page without a text layer with an OCR note, not garbage', { timeout: 20_000 }, async () => {
    const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#c8d2e0' } }).png().toBuffer();
    const pdf = await pdfFromHtml(`<html><body><img src="data:image/png;base64,${png.toString('base64')}"></body></html>`);
    const out = await convert(pdf);
    expect(out.text.trim()).to.equal('*Page 1 has no text layer: OCR is needed to read it.*');
  });

  it('on a one-page document keeps a first line at body size, and still drops a smaller running head and foot', { timeout: 20_000 }, async () => {
    // Near the top edge and set apart by a gap, as running heads are; with one page there is no repetition to tell them apart.
    const page = (first: string) => pdfFromHtml(`<!doctype html><html><head><meta charset="utf-8"><style>
      @page { size: A4; margin: 1.2cm 2cm; @bottom-center { content: "Confidential"; font: 8pt "DejaVu Sans"; } }
      body { font: 11pt/1.4 "DejaVu Serif"; }</style></head>
      <body>${first}<p>${LOREM}.</p><p>${LOREM}.</p></body></html>`);
    const letter = (await convert(await page('<p style="margin:0 0 18pt">Dear Ms Smith,</p>'))).text;
    expect(letter.split('\n')[0]).to.equal('Dear Ms Smith,');
    expect(letter).to.not.contain('Confidential');
    const notes = (await convert(await page('<p style="margin:0 0 18pt"><b>Meeting notes</b></p>'))).text;
    expect(notes).to.contain('Meeting notes');
    // A number set apart on the line (a year, not a page number) does not make it a running head either.
    const invoice = (await convert(await page('<p style="margin:0 0 18pt;display:flex;justify-content:space-between"><span>Invoice</span><span>2024</span></p>'))).text;
    expect(invoice.split('\n')[0]).to.match(/Invoice.*2024/);
    const headed = (await convert(await page('<p style="margin:0 0 18pt;font: 8pt \'DejaVu Sans\'">ACME Corp internal memo</p>'))).text;
    expect(headed).to.not.contain('ACME Corp');
    expect(headed.split('\n')[0]).to.contain('The committee reviewed');
  });

  it('drops a page number set deep in the bottom margin, as TeX does', () => {
    const glyphs = (text: string, x: number, y: number) => [...text].map((c, i) =>
      `<char quad="${x + i * 6} ${y} ${x + i * 6 + 6} ${y} ${x + i * 6} ${y + 12} ${x + i * 6 + 6} ${y + 12}" x="${x + i * 6}" y="${y + 10}" color="#000000" c="${c}"/>`).join('');
    const line = (text: string, x: number, y: number) => `<line bbox="${x} ${y} 540 ${y + 12}" wmode="0" dir="1 0"><font name="Serif" size="10">${glyphs(text, x, y)}</font></line>`;
    const page = (n: number) => `<page id="page${n}" width="612" height="792"><block>${line(`Page ${n} opens with this line of running text.`, 72, 100)}${line('It ends with this second line.', 72, 112)}${line(String(n), 303, 695)}</block></page>`;
    const md = convertStext(`<document>${page(1)}${page(2)}</document>`);
    expect(md.split('\n').filter((l) => /^\s*\d+\s*$/.test(l))).to.equal([]);
    expect(md).to.contain('Page 2 opens with this line of running text.');
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
      operation: 'pdf.markdown', params: {}, jobDir, deadline: Date.now() + 30_000, settings: TEST_SETTINGS,
      files: [{ bytes: new Uint8Array(), path: target, pages: 1 }],
    })).to.reject();
    expect((error as { code?: string }).code).to.equal('CORRUPT_INPUT');
  });
});

describe('pdf.markdown on hyphens at line ends', () => {
  // One paragraph of lines set 12 pt apart in a 10 pt font, one glyph every 6 pt.
  const paragraph = (...lines: string[]) => {
    const glyphs = (text: string, x: number, y: number) => [...text].map((c, i) =>
      `<char quad="${x + i * 6} ${y} ${x + i * 6 + 6} ${y} ${x + i * 6} ${y + 12} ${x + i * 6 + 6} ${y + 12}" x="${x + i * 6}" y="${y + 10}" color="#000000" c="${c.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"/>`).join('');
    const line = (text: string, y: number) => `<line bbox="72 ${y} 400 ${y + 12}" wmode="0" dir="1 0"><font name="Serif" size="10">${glyphs(text, 72, y)}</font></line>`;
    const xml = `<document><page id="page1" width="612" height="792"><block>${lines.map((l, k) => line(l, 300 + k * 12)).join('')}</block></page></document>`;
    return convertStext(xml).trim();
  };

  it('joins a word broken across lines', () => {
    expect(paragraph('The measure-', 'ments were repeated twice.')).to.equal('The measurements were repeated twice.');
    expect(paragraph('Measure-', 'ments were repeated.')).to.equal('Measurements were repeated.');
  });

  it('keeps the hyphen of a compound that was already hyphenated before the break', () => {
    expect(paragraph('a state-of-the-', 'art method')).to.equal('a state-of-the-art method');
  });

  it('keeps the hyphen of a common compound head', () => {
    expect(paragraph('a well-', 'known result')).to.equal('a well-known result');
    expect(paragraph('the self-', 'assessment form')).to.equal('the self-assessment form');
  });

  it('keeps the hyphen the document itself writes inside a line', () => {
    expect(paragraph('a long-term view and a long-', 'term plan')).to.equal('a long-term view and a long-term plan');
  });

  it('keeps hyphens in URLs, identifiers, numbers and names', () => {
    expect(paragraph('see https://example.org/field-', 'notes today')).to.equal('see https://example.org/field-notes today');
    expect(paragraph('set the max_retry-', 'count option')).to.equal('set the max_retry-count option');
    expect(paragraph('on pages 10-', '20 of the report')).to.equal('on pages 10-20 of the report');
    expect(paragraph('the Alpaca-', 'GPT4 data set')).to.equal('the Alpaca-GPT4 data set');
  });

  it('leaves a dash standing apart from its words alone', () => {
    expect(paragraph('the result -', 'as expected')).to.equal('the result - as expected');
  });
});

describe('pdf.markdown of a page MuPDF cannot read', () => {
  let t: TestService;
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('qpdf\'s issue-1688b.pdf is refused by markdown and blocks before any payment, naming the page and MuPDF, nothing charged; extract, compress, pages and sanitize (other readers) take it and are charged', async () => {
    const pdf = await realFile('issue-1688b.pdf');
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    for (const route of ['/v1/pdf/markdown', '/v1/pdf/blocks']) {
      for (const res of [await fetch(`${t.url}${route}`, { method: 'POST', body: form([pdf]) }), await payFetch(`${t.url}${route}`, { method: 'POST', body: form([pdf]) })]) {
        expect(res.status, route).to.equal(422);
        expect(res.headers.get('payment-required')).to.be.null();
        expect(await res.json()).to.equal({ error: {
          code: 'CORRUPT_INPUT', status: 422, field: 'file',
          message: `page 1 of the PDF cannot be read by MuPDF, which ${route} reads pages with: its content is damaged or uses parameters MuPDF does not support`,
        } });
      }
    }
    expect((await balancesOf(t.evm)).payer).to.equal(before.payer);
    let quoted = 0n;
    for (const [route, fields] of [['/v1/pdf/extract', {}], ['/v1/pdf/compress', {}], ['/v1/pdf/pages', { pages: '1' }], ['/v1/pdf/sanitize', {}]] as const) {
      quoted += BigInt((await quoteAt(`${t.url}${route}`, form([pdf], fields))).accepts[0].amount);
      const res = await payFetch(`${t.url}${route}`, { method: 'POST', body: form([pdf], fields) });
      expect(res.status, route).to.equal(200);
      if (route !== '/v1/pdf/extract') expect((await pdfFacts(new Uint8Array(await res.arrayBuffer()))).pages, route).to.equal(1);
      else await res.arrayBuffer();
    }
    expect(before.payer - (await balancesOf(t.evm)).payer).to.equal(quoted);
  });
});

// Tables on two-column pages, as a journal sets them: 8 pt type, ruled only by a line under each
// row, in a sans two-column page with a running head and page numbers. Real PDFs typeset by
// WeasyPrint at test time, read by real mutool through the work functions the pool runs:
// /v1/pdf/tables on the local engine (cell by cell) and /v1/pdf/markdown (cells and reading order).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { plannedJob } from '../../support/jobs.js';
import { localTablesOf, pdfFromHtml as typesetPdf } from '../../support/weasy.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

let scratch: string;
before(async () => { scratch = await mkdtemp(path.join(os.tmpdir(), 'pdf-two-column-tables-test-')); });
after(async () => { await rm(scratch, { recursive: true, force: true }); });

const CSS = `
  @page { size: A5; margin: 1.5cm 1.3cm;
    @top-center { content: "Field Notes Quarterly"; font: 7pt "Nimbus Sans"; }
    @bottom-center { content: counter(page); font: 7pt "Nimbus Sans"; } }
  body { font: 9.5pt/1.35 "Nimbus Sans"; columns: 2; column-gap: 0.7cm; }
  table { border-collapse: collapse; font-size: 8pt; margin: .6em 0; }
  td { border-bottom: .5pt solid #444; padding: 2pt 6pt 2pt 0; vertical-align: top; text-align: left; }
  .nowrap td { white-space: nowrap; }
  table.plain { font-size: 9.5pt; } table.plain td { border: none; padding: 2pt 8pt 2pt 0; }
  table.ruled td { border: .5pt solid #444; padding: 2pt 4pt; } table.wide td { padding: 2pt 6pt; }
`;

const PROSE = 'The survey teams walked each transect at dawn and noted every bird they heard or saw along the way.';

const pdfFromHtml = (body: string) => typesetPdf(scratch, CSS, body);

const tablesOf = (pdf: Uint8Array) => localTablesOf(scratch, pdf);

async function markdownOf(pdf: Uint8Array): Promise<string> {
  const planned = await plannedJob('pdf.markdown', [pdf], {}, { root: scratch, timeoutMs: 30_000 });
  const out = await planned.run().finally(() => planned.jobDir.remove());
  return Buffer.from(out.body).toString('utf8');
}

/** The positions of the markers in the text, each of which must be there. */
function positions(text: string, markers: string[]): number[] {
  return markers.map((m) => {
    const at = text.indexOf(m);
    expect(at, `"${m}" is missing`).to.be.at.least(0);
    return at;
  });
}

const ascending = (list: number[]) => list.every((v, k) => k === 0 || v > list[k - 1]!);

/** A table's HTML, one row per list, the first being the header. */
const tableHtml = (headers: string[], rows: string[][], className = '') =>
  `<table${className ? ` class="${className}"` : ''}>${[headers, ...rows].map((r) => `<tr><td>${r.join('</td><td>')}</td></tr>`).join('')}</table>`;

/** The same table as the Markdown converter writes it. */
const markdownTable = (headers: string[], rows: string[][]) =>
  [`| ${headers.join(' | ')} |`, `|${' --- |'.repeat(headers.length)}`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

/** Parks and the limits on visitors' nest boxes: long cells that wrap in a narrow column. */
const PARK_HEADERS = ['Park', 'Listed', 'Boxes allowed', 'Limits on visitors\' boxes'];
const parkRows = (exmoor: string) => [
  ['Ashdown', 'Y', 'Y', 'Boxes must be hung at least two metres above the path and taken down after the nesting season ends in late summer.'],
  ['Brecon', 'N', 'Y', 'No boxes within ten metres of the lake shore; a warden\'s written consent is needed for boxes near the old quarry or on any tree marked for felling.'],
  ['Cannock', 'N', 'N', 'Visitors may not hang boxes of their own. The park\'s own boxes are cleaned each winter by volunteers, who record every nest found and report it to the county recorder.'],
  ['Dartmoor', 'Y', 'Y', 'Boxes only on the edge of the woodland, at most three to a visitor, each marked with a number the warden issues on request at the gate.'],
  ['Exmoor', 'Y', 'N', exmoor],
];

describe('two-column pages: a table ruled only by row underlines', () => {
  it('keeps every line of a wrapped cell in its row, down to the row\'s own rule, and reads the text around the table in order', { timeout: 30_000 }, async () => {
    const pdf = await pdfFromHtml(`<h1>Permits</h1><p>Alpha opens the left column. ${PROSE}</p>
      <p>Table 1: Permits by act</p>
      <table><tr><td>Act</td><td>Issued by</td><td>Permits</td></tr>
      <tr><td>Wildlife Act, 1981</td><td>State</td><td>152</td></tr>
      <tr><td>Food Safety and Standards Act, 2006, with the Licensing and Registration of Food Businesses Regulations, 2011</td><td>Union</td><td>123</td></tr></table>
      <p>Beta follows the table. ${PROSE}</p><p>Gamma runs on. ${PROSE} ${PROSE}</p><p>Omega closes the page. ${PROSE} ${PROSE}</p>`);
    const rows = [
      ['Wildlife Act, 1981', 'State', '152'],
      ['Food Safety and Standards Act, 2006, with the Licensing and Registration of Food Businesses Regulations, 2011', 'Union', '123'],
    ];
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title: 'Table 1: Permits by act', headers: ['Act', 'Issued by', 'Permits'], rows }]);
    const md = await markdownOf(pdf);
    const table = ['| Act | Issued by | Permits |', '| --- | --- | --- |', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
    expect(md).to.contain(table);
    // The left column's text, the table inside it, then the right column's.
    expect(ascending(positions(md, ['# Permits', 'Alpha opens', 'Table 1: Permits by act', table, 'Beta follows', 'Gamma runs on', 'Omega closes']))).to.be.true();
    expect(md).to.not.contain('Field Notes Quarterly');
  });

  it('a row whose two cells wrap side by side, every line with text in both columns: one row', { timeout: 30_000 }, async () => {
    const headers = ['Reagents', 'Supplies and equipment'];
    const rows = [[
      'At each station: resuspended DNA or ethanol precipitates from the first part, shared by all groups; the restriction buffer and the enzyme mixture',
      'A rack for the tubes, three small tubes, a micropipette with its tips, a beaker for waste and one filled with ice, a marker and a water bath',
    ]];
    const pdf = await pdfFromHtml(`<p>Alpha opens. ${PROSE}</p><p>Table 2: What each station needs</p>
      <table>${[headers, ...rows].map((r) => `<tr><td>${r.join('</td><td>')}</td></tr>`).join('')}</table>
      <p>Omega closes. ${Array.from({ length: 12 }, () => PROSE).join(' ')}</p>`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title: 'Table 2: What each station needs', headers, rows }]);
    const md = await markdownOf(pdf);
    expect(md).to.contain([`| ${headers.join(' | ')} |`, '| --- | --- |', `| ${rows[0]!.join(' | ')} |`].join('\n'));
  });

  it('a page holding only a table that runs on into the right column, its top there higher than the left column\'s table: the left column\'s rows first, the cut row whole', { timeout: 30_000 }, async () => {
    const headers = PARK_HEADERS;
    const rows = [
      ['Ashdown', 'Y', 'Y', 'Boxes must be hung at least two metres above the path and taken down after the nesting season ends in late summer, each marked with the warden\'s number.'],
      ['Brecon', 'N', 'Y', 'No boxes within ten metres of the lake shore; a warden\'s written consent is needed for boxes near the old quarry or on any tree marked for felling this year.'],
      ['Cannock', 'N', 'N', 'Visitors may not hang boxes of their own. The park\'s own boxes are cleaned each winter by volunteers, who record every nest found and report it to the county recorder.'],
      ['Dartmoor', 'Y', 'Y', 'Boxes only on the edge of the woodland, at most three to a visitor, each marked with a number the warden issues on request at the gate.'],
      ['Exmoor', 'Y', 'N', 'None may be hung, and boxes found are removed by the wardens at the end of each month.'],
      ['Forest', 'N', 'Y', 'Boxes of untreated wood only, hung facing north-east, away from the afternoon sun and the prevailing wind.'],
    ];
    const title = 'Table 8: Limits on nest boxes by park';
    // Cannock's row is cut at the foot of the left column; its rest opens the right column.
    const pdf = await pdfFromHtml(`<p>${title}</p>${tableHtml(headers, rows)}`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title, headers, rows }]);
    expect(ascending(positions(await markdownOf(pdf), [title, markdownTable(headers, rows)]))).to.be.true();
  });

  it('rows of one line each between a rule under the header and one at the foot: a row each', { timeout: 30_000 }, async () => {
    const headers = ['Site', 'Wrens', 'Larks'];
    const rows = [['North ridge', '14', '3'], ['South valley', '9', '12'], ['Lake shore', '21', '5'], ['Old quarry', '6', '8']];
    const open = 'style="border-bottom: none"';
    const pdf = await pdfFromHtml(`<p>Alpha opens. ${PROSE}</p><p>Table 3: Counts</p>
      <table><tr><td>${headers.join('</td><td>')}</td></tr>
      ${rows.map((r, k) => `<tr>${r.map((c) => `<td ${k < rows.length - 1 ? open : ''}>${c}</td>`).join('')}</tr>`).join('')}</table>
      <p>Omega closes. ${Array.from({ length: 12 }, () => PROSE).join(' ')}</p>`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title: 'Table 3: Counts', headers, rows }]);
  });
});

describe('two-column pages: a table continued past a break', () => {
  const SITES = ['North ridge', 'South valley', 'Lake shore', 'Old quarry', 'River mouth', 'Pine wood', 'Salt marsh', 'Chalk down', 'Hill fort', 'Mill pond'];
  const site = (i: number) => `${SITES[i]} station, with its weather mast, soil probes, rain gauge and a shed for the tools`;

  it('in the next column: one table, the row cut at the foot of the left column whole again', { timeout: 30_000 }, async () => {
    // Rows of three lines run down the left column and on in the right one; the break falls
    // inside a row, whose rest (and its underline) opens the right column.
    const pdf = await pdfFromHtml(`<h1>Sites</h1><p>Alpha opens the left column. ${PROSE} ${PROSE} ${PROSE}</p>
      <table><tr><td>No.</td><td>Site and equipment</td><td>Visits</td></tr>
      ${SITES.map((_, i) => `<tr><td>${i + 1}</td><td>${site(i)}</td><td>${(i * 13) % 50 + 5}</td></tr>`).join('')}</table>
      <p>Omega follows the table. ${PROSE}</p>`);
    const rows = SITES.map((_, i) => [String(i + 1), site(i), String((i * 13) % 50 + 5)]);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title: null, headers: ['No.', 'Site and equipment', 'Visits'], rows }]);
    const md = await markdownOf(pdf);
    const table = ['| No. | Site and equipment | Visits |', '| --- | --- | --- |', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
    expect(ascending(positions(md, ['# Sites', 'Alpha opens', table, 'Omega follows']))).to.be.true();
  });

  it('over both columns and on to the next page: one table, on the page where it starts', { timeout: 30_000 }, async () => {
    const walk = (i: number) => [String(i + 1), `Transect ${String.fromCharCode(65 + (i % 26))}${i + 1}`, String((i * 7) % 40 + 3)];
    const pdf = await pdfFromHtml(`<h1>Counts</h1><p>Alpha opens the left column. ${PROSE} ${PROSE}</p>
      <table><tr><td>Walk</td><td>Transect</td><td>Birds</td></tr>
      ${Array.from({ length: 70 }, (_, i) => `<tr><td>${walk(i).join('</td><td>')}</td></tr>`).join('')}</table>
      <p>Omega follows the table. ${PROSE}</p>`);
    const rows = Array.from({ length: 70 }, (_, i) => walk(i));
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title: null, headers: ['Walk', 'Transect', 'Birds'], rows }]);
    const md = await markdownOf(pdf);
    const table = ['| Walk | Transect | Birds |', '| --- | --- | --- |', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
    expect(ascending(positions(md, ['# Counts', 'Alpha opens', table, 'Omega follows']))).to.be.true();
    // Neither page's running head nor page number is read into the text or the table.
    expect(md).to.not.contain('Field Notes Quarterly');
  });
});

describe('two-column pages: a table too wide for its column', () => {
  it('reads the cells that run across the gutter with their rows, and the right column\'s text beside them after the left column', { timeout: 30_000 }, async () => {
    const data = [
      ['North ridge', '120', '140', '98', '41', '99.75', 'rising'],
      ['South valley', '95', '101', '88', '37', '80.25', 'steady'],
      ['Lake shore', '84', '90', '71', '52', '74.25', 'falling'],
    ];
    const headers = ['Site', 'Spring', 'Summer', 'Autumn', 'Winter', 'Mean', 'Trend'];
    const pdf = await pdfFromHtml(`<h1>Totals</h1><p>Alpha opens the left column. ${PROSE}</p>
      <table class="nowrap"><tr><td>${headers.join('</td><td>')}</td></tr>${data.map((r) => `<tr><td>${r.join('</td><td>')}</td></tr>`).join('')}</table>
      <p>Beta follows the table. ${PROSE} ${PROSE} ${PROSE} ${PROSE} ${PROSE} ${PROSE} ${PROSE}</p><p>Omega ends. ${PROSE} ${PROSE} ${PROSE}</p>`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title: null, headers, rows: data }]);
    const md = await markdownOf(pdf);
    const table = [`| ${headers.join(' | ')} |`, `|${' --- |'.repeat(7)}`, ...data.map((r) => `| ${r.join(' | ')} |`)].join('\n');
    expect(ascending(positions(md, ['# Totals', 'Alpha opens', table, 'Beta follows', 'Omega ends']))).to.be.true();
  });
});

describe('two-column pages: a ruled table too wide for its column', () => {
  const headers = ['Site', 'Spring', 'Summer', 'Autumn'];
  const data = ['North ridge', 'South valley', 'Lake shore', 'Old quarry', 'River mouth', 'Pine wood', 'Salt marsh', 'Chalk down']
    .map((site, k) => [site, String(120 - k), String(140 - 2 * k), String(98 + k)]);
  // Its frame ends 2.5 pt short of the right column's text: the gutter is narrower than a word space.
  const ruled = (rows: string[][]) => tableHtml(headers, rows, 'ruled nowrap wide');

  it('its frame over the gutter and its last row carried to the top of the right column, text in both columns: one table, then the right column\'s text', { timeout: 30_000 }, async () => {
    const title = 'Table 2: Birds counted by season';
    const pdf = await pdfFromHtml(`<h1>Totals</h1><p>Alpha opens the left column. ${PROSE} ${PROSE}</p><p>${title}</p>
      ${ruled(data)}<p>Beta follows the table. ${PROSE} ${PROSE} ${PROSE}</p><p>Omega ends. ${PROSE} ${PROSE} ${PROSE}</p>`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title, headers, rows: data }]);
    const md = await markdownOf(pdf);
    expect(ascending(positions(md, ['# Totals', 'Alpha opens', title, markdownTable(headers, data), 'Beta follows', 'Omega ends']))).to.be.true();
  });

  it('one set across both columns between two-column text: read after the text above it, before the text below it', { timeout: 30_000 }, async () => {
    const pdf = await pdfFromHtml(`<p>Alpha opens the left column. ${PROSE} ${PROSE}</p><p>Beta ends the text above. ${PROSE} ${PROSE}</p>
      <div style="column-span: all">${ruled(data.slice(0, 3))}</div>
      <p>Gamma opens the text below. ${PROSE} ${PROSE}</p><p>Omega ends. ${PROSE} ${PROSE}</p>`);
    const md = await markdownOf(pdf);
    expect(ascending(positions(md, ['Alpha opens', 'Beta ends', markdownTable(headers, data.slice(0, 3)), 'Gamma opens', 'Omega ends']))).to.be.true();
  });
});

describe('two-column pages: borderless tables (no rules, cells aligned only)', () => {
  it('a header row left at the foot of the left column and its one row at the top of the right column: one table, read in order', { timeout: 30_000 }, async () => {
    const pdf = await pdfFromHtml(`<p>Alpha opens. ${PROSE}</p><p>Table 4: Counts by site</p>
      <table class="plain"><tr><td>Site</td><td>Wrens</td><td>Larks</td><td>Owls</td></tr>
      <tr style="break-before: column"><td>Ridge</td><td>14</td><td>3</td><td>2</td></tr></table>
      <p>Omega closes. ${PROSE}</p>`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title: 'Table 4: Counts by site', headers: ['Site', 'Wrens', 'Larks', 'Owls'], rows: [['Ridge', '14', '3', '2']] }]);
    const md = await markdownOf(pdf);
    const table = ['| Site | Wrens | Larks | Owls |', '| --- | --- | --- | --- |', '| Ridge | 14 | 3 | 2 |'].join('\n');
    expect(ascending(positions(md, ['Alpha opens', 'Table 4: Counts by site', table, 'Omega closes']))).to.be.true();
  });

  it('a row whose long cell runs on from the foot of the left column to the top of the right one, and the row after it: one table, the cut cell whole', { timeout: 30_000 }, async () => {
    const note = Array.from({ length: 4 }, () => 'The wardens kept the log of every nest found on the ridge and checked it weekly.').join(' ');
    const pdf = await pdfFromHtml(`<p>Alpha opens. ${Array.from({ length: 9 }, () => PROSE).join(' ')}</p><p>Table 6: Wardens</p>
      <table class="plain"><tr><td>Site</td><td>Year</td><td style="width: 6em">Notes</td><td>Result</td></tr>
      <tr><td>Ridge</td><td>2005</td><td>${note}</td><td>Nests kept safe</td></tr>
      <tr><td>Valley</td><td>2016</td><td>Short note.</td><td>Few nests</td></tr></table>
      <p>Omega closes. ${Array.from({ length: 12 }, () => PROSE).join(' ')}</p>`);
    expect(await tablesOf(pdf)).to.equal([{
      page: 1, title: 'Table 6: Wardens', headers: ['Site', 'Year', 'Notes', 'Result'],
      rows: [['Ridge', '2005', note, 'Nests kept safe'], ['Valley', '2016', 'Short note.', 'Few nests']],
    }]);
    const md = await markdownOf(pdf);
    expect(ascending(positions(md, ['Table 6: Wardens', `| Ridge | 2005 | ${note} | Nests kept safe |`, '| Valley | 2016 | Short note. | Few nests |', 'Omega closes']))).to.be.true();
  });

  it('a page holding only a table that runs on into the right column: one table, every cell in its row', { timeout: 30_000 }, async () => {
    const headers = PARK_HEADERS, rows = parkRows('None.');
    const title = 'Table 7: Restrictions on keeping nest boxes by visitors in parks';
    // The left column ends with Brecon's row; Cannock's opens the right column.
    const pdf = await pdfFromHtml(`<p>${title}</p>
      ${tableHtml(headers, rows, 'plain')}`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title, headers, rows }]);
    const md = await markdownOf(pdf);
    const table = markdownTable(headers, rows);
    expect(ascending(positions(md, [title, table]))).to.be.true();
  });

  it('a table that runs on into the right column, where the break left a row\'s cell empty and carried its text over whole: the text in its row; a paragraph cut by a column break is one paragraph', { timeout: 30_000 }, async () => {
    const headers = PARK_HEADERS, rows = parkRows('None may be hung.');
    const title = 'Table 7: Restrictions on keeping nest boxes by visitors in selected parks';
    // The prose after the table fills the next page, so the columns are not balanced: the left
    // column ends with Cannock's first three cells and its fourth opens the right column.
    const pdf = await pdfFromHtml(`<p>${title}</p>
      ${tableHtml(headers, rows, 'plain')}
      <p>Omega closes. ${Array.from({ length: 12 }, () => PROSE).join(' ')}</p>`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title, headers, rows }]);
    const md = await markdownOf(pdf);
    const table = markdownTable(headers, rows);
    expect(ascending(positions(md, [title, table, 'Omega closes']))).to.be.true();
    // The closing paragraph runs from the next page's left column into its right one: one paragraph.
    expect(md).to.contain(`Omega closes. ${Array.from({ length: 12 }, () => PROSE).join(' ')}\n`);
  });

  it('a table set across both columns in evenly spaced columns, its right-hand cells wrapping over more lines: one table, not read as two columns', { timeout: 30_000 }, async () => {
    const headers = ['Site', 'Wrens', 'Larks', 'Owls', 'Survey', 'Notes'];
    const rows = ['Ridge', 'Valley', 'Shore', 'Quarry', 'Wood'].map((site, k) => [
      site, String(10 + k), String(3 + k), String(k + 1), 'Walked at dawn by two wardens twice in spring', 'Nests counted in the gorse and the old walls']);
    // The right half's cells start where the left half's do, half a page over, as a table carried
    // on in the next column would; its rows still open on the left half's baselines.
    const pdf = await pdfFromHtml(`<div style="column-span: all"><table class="plain" style="width: 100%; table-layout: fixed">
      ${[headers, ...rows].map((r) => `<tr><td>${r.join('</td><td>')}</td></tr>`).join('')}</table></div>`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title: null, headers, rows }]);
    expect(await markdownOf(pdf)).to.contain([`| ${headers.join(' | ')} |`, '| --- | --- | --- | --- | --- | --- |', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n'));
  });

  it('a numbered list of contents set in two columns, with no running text beside it, is no table', { timeout: 30_000 }, async () => {
    const items = ['Front matter 1', 'Reading the field notes and the older survey sheets 4', 'Counting at dawn 9', 'Walking the transects 15', 'Weather and wind 22',
      'Nests and colonies 30', 'Owls after dark 41', 'Comparing the seasons 52', 'Sources and thanks 60'];
    const pdf = await pdfFromHtml(`<h1>Contents</h1><ol>${items.map((t) => `<li>${t}</li>`).join('')}</ol><p>Instructor notes 97</p>`);
    expect(await tablesOf(pdf)).to.equal([]);
    expect(await markdownOf(pdf)).to.not.contain('|');
  });

  it('a numbered list of short contents lines in two columns, the heading over the left one setting its lines off the right one\'s: read column by column', { timeout: 30_000 }, async () => {
    const items = ['Front matter 1', 'Reading the field notes and the older survey sheets 4', 'Counting at dawn 9', 'Transects 15', 'Wind 22',
      'Nests 30', 'Owls 41', 'Seasons 52', 'Comparing the counts of the spring and the autumn 60', 'Sources 72'];
    const pdf = await pdfFromHtml(`<h1 style="margin-bottom: 4pt">Contents</h1><ol>${items.map((t) => `<li>${t}</li>`).join('')}</ol>`);
    expect(await markdownOf(pdf)).to.contain(`# Contents\n\n${items.map((t, k) => `${k + 1}. ${t}`).join('\n')}\n`);
  });

  it('a table of one row whose second cell wraps over more lines than the first, each line as long as the table is wide: one row', { timeout: 30_000 }, async () => {
    const names = 'field_notes_2019_spring field_notes_2019_autumn survey_sheets_north_ridge survey_sheets_south_valley volunteer_logs_lake_shore';
    const pdf = await pdfFromHtml(`<p>Alpha opens. ${PROSE}</p><p>Table 5: Sources</p>
      <table class="plain"><tr><td style="width: 3em">Sources left out</td><td>${names}</td></tr></table>
      <p>Omega closes. ${Array.from({ length: 8 }, () => PROSE).join(' ')}</p>`);
    expect(await tablesOf(pdf)).to.equal([{ page: 1, title: 'Table 5: Sources', headers: ['Sources left out', names], rows: [] }]);
    const md = await markdownOf(pdf);
    expect(ascending(positions(md, ['Table 5: Sources', `| Sources left out | ${names} |`, 'Omega closes']))).to.be.true();
  });
});

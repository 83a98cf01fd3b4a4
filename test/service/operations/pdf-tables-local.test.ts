// /v1/pdf/tables with TABLES_ENGINE=local: the layout engine of /v1/pdf/markdown reads the
// tables on the server, from real PDFs typeset by WeasyPrint and read by real mutool, and
// answers in the specified shape { tables: [ { page, title, headers, rows } ] }. Paid over
// HTTP on the local chain without any model provider; the descriptions say the content stays.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ServiceError } from '../../../core/errors.js';
import { ConfigError, ENVIRONMENT_VARIABLES, loadConfig } from '../../../server/config.js';
import { shapeTable } from '../../../workers/layout/tables.js';
import { localTablesOf, pdfFromHtml as typesetPdf } from '../../support/weasy.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { paidAt, quoteAt } from '../../support/paying.js';
import { makePdf, photographedPage } from '../../support/pdf-fixtures.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

let scratch: string;
before(async () => { scratch = await mkdtemp(path.join(os.tmpdir(), 'pdf-tables-local-test-')); });
after(async () => { await rm(scratch, { recursive: true, force: true }); });

const CSS = `
  @page { size: A4; margin: 2cm; }
  body { font: 11pt/1.4 "DejaVu Serif"; }
  table { border-collapse: collapse; }
  table.ruled td { border: 1px solid black; padding: 3pt 8pt; }
  table.plain td { border: none; padding: 3pt 12pt 3pt 0; text-align: left; vertical-align: top; }
  .columns { columns: 2; column-gap: 0.8cm; } .columns, .columns table { font: 10pt/1.35 "DejaVu Sans"; }
  .columns table.plain td { padding: 2pt 8pt 2pt 0; } .nowrap { white-space: nowrap; }
  .large, .large table { font: 13pt/1.45 "Liberation Serif"; } .large table.plain td { padding: 2pt 9pt 2pt 0; }
`;

const pdfFromHtml = (body: string) => typesetPdf(scratch, CSS, body);

/** The job the service would run for the upload, checked and planned as it would be, on the local engine. */
const tablesOf = (pdf: Uint8Array) => localTablesOf(scratch, pdf);

const PROSE = 'The committee reviewed each submission against the published criteria and recorded its reasons in the minutes for later reference by all members.';

describe('local tables engine: ruled tables', () => {
  it('reads a ruled table under its caption and one under a heading, with cells spanning rows and columns, cell by cell', { timeout: 30_000 }, async () => {
    const tables = await tablesOf(await pdfFromHtml(`<h1>Field report</h1><p>${PROSE}</p>
      <p>Table 1: Samples by site</p>
      <table class="ruled"><tr><td>Site</td><td>Samples</td><td>Share</td></tr>
      <tr><td>North ridge</td><td>120</td><td>40%</td></tr><tr><td>South valley</td><td>95</td><td>32%</td></tr></table>
      <h2>Stock</h2>
      <table class="ruled"><tr><td rowspan="2">Site</td><td colspan="2">Stock</td></tr>
      <tr><td>Seeds</td><td>Tools</td></tr>
      <tr><td>North ridge</td><td>12</td><td>7</td></tr>
      <tr><td>South valley</td><td colspan="2">closed for the season</td></tr></table>
      <p>Table 3 shows nothing new: this sentence is prose, not a caption, and the table after it has no title.</p>
      <table class="ruled"><tr><td>Key</td><td>Value</td></tr><tr><td>alpha</td><td>1</td></tr></table>`));
    expect(tables).to.equal([
      { page: 1, title: 'Table 1: Samples by site', headers: ['Site', 'Samples', 'Share'], rows: [['North ridge', '120', '40%'], ['South valley', '95', '32%']] },
      // A two-level header: each column's header joins the labels over it; a cell spanning two
      // body columns keeps its text in the first and leaves the second empty.
      { page: 1, title: 'Stock', headers: ['Site', 'Stock / Seeds', 'Stock / Tools'], rows: [['North ridge', '12', '7'], ['South valley', 'closed for the season', '']] },
      { page: 1, title: null, headers: ['Key', 'Value'], rows: [['alpha', '1']] },
    ]);
  });

  it('a table running over three pages is one table on the page where it starts; a later one has its own page', { timeout: 30_000 }, async () => {
    const rows = Array.from({ length: 55 }, (_, i) => `<tr><td>${i + 1}</td><td>Item number ${i + 1}</td><td>${(i + 1) * 3}.00</td></tr>`).join('');
    const pdf = await pdfFromHtml(`<h1>Ledger</h1><p>${PROSE} ${PROSE} ${PROSE} ${PROSE} ${PROSE}</p>
      <table class="ruled"><tr><td>Entry</td><td>Item</td><td>Amount</td></tr>${rows}</table><p>Closing words after the ledger table.</p>
      <h2 style="break-before: page">Second part</h2><p>Prose on the last page before a small table.</p>
      <table class="ruled"><tr><td>Key</td><td>Value</td></tr><tr><td>alpha</td><td>1</td></tr><tr><td>beta</td><td>2</td></tr></table>`);
    const tables = await tablesOf(pdf);
    expect(tables.length).to.equal(2);
    expect(tables[0]).to.equal({
      page: 1, title: null, headers: ['Entry', 'Item', 'Amount'],
      rows: Array.from({ length: 55 }, (_, i) => [String(i + 1), `Item number ${i + 1}`, `${(i + 1) * 3}.00`]),
    });
    expect(tables[1]).to.equal({ page: 4, title: null, headers: ['Key', 'Value'], rows: [['alpha', '1'], ['beta', '2']] });
  });
});

describe('local tables engine: borderless tables', () => {
  it('reads wrapped cells, a two-level header and a form with empty cells from column alignment, cell by cell', { timeout: 30_000 }, async () => {
    const tables = await tablesOf(await pdfFromHtml(`<h1>Stations</h1><p>Inventory of the field stations follows.</p>
      <table class="plain"><tr><td>Station</td><td style="width: 9em">Equipment on site</td><td>Staff</td></tr>
      <tr><td>North ridge</td><td>Weather mast, two soil probes and a rain gauge</td><td>3</td></tr>
      <tr><td>South valley</td><td>Rain gauge</td><td>1</td></tr>
      <tr><td>Lake shore</td><td>Water sampler and a small boat with its trailer</td><td>2</td></tr></table>
      <p>The end of the list, which is a sentence of ordinary prose and runs on for a while to be long.</p>
      <h2>Survey results</h2>
      <table class="plain"><tr><td rowspan="2">Site</td><td colspan="3">Spring counts</td><td colspan="2">Autumn counts</td></tr>
      <tr><td>Birds</td><td>Bats</td><td>Moths</td><td>Birds</td><td>Bats</td></tr>
      <tr><td>North ridge</td><td>120</td><td>14</td><td>310</td><td>98</td><td>9</td></tr>
      <tr><td>South valley</td><td>95</td><td>22</td><td>280</td><td>101</td><td>17</td></tr></table>
      <p>The spring survey ran for six weeks, and the autumn survey ran for four weeks in the same places.</p>
      <p>Table 2: Visit form</p>
      <table class="plain"><tr><td></td><td>Morning visit</td><td>Evening visit</td></tr>
      <tr><td>Air temperature</td><td></td><td></td></tr><tr><td>Wind direction</td><td></td><td></td></tr><tr><td>Cloud cover</td><td></td><td></td></tr></table>
      <p>Sign the form at the end of the day and hand it in at the station office before leaving.</p>`));
    expect(tables).to.equal([
      {
        page: 1, title: null, headers: ['Station', 'Equipment on site', 'Staff'],
        rows: [['North ridge', 'Weather mast, two soil probes and a rain gauge', '3'], ['South valley', 'Rain gauge', '1'], ['Lake shore', 'Water sampler and a small boat with its trailer', '2']],
      },
      {
        page: 1, title: 'Survey results',
        headers: ['Site', 'Spring counts / Birds', 'Spring counts / Bats', 'Spring counts / Moths', 'Autumn counts / Birds', 'Autumn counts / Bats'],
        rows: [['North ridge', '120', '14', '310', '98', '9'], ['South valley', '95', '22', '280', '101', '17']],
      },
      { page: 1, title: 'Table 2: Visit form', headers: ['', 'Morning visit', 'Evening visit'], rows: [['Air temperature', '', ''], ['Wind direction', '', ''], ['Cloud cover', '', '']] },
    ]);
  });

  it('reads a table in the left column of a two-column page whole, and takes no table from the prose around it', { timeout: 30_000 }, async () => {
    const tables = await tablesOf(await pdfFromHtml(`<h1>Station report</h1><div class="columns">
      <p>Alpha paragraph opens the left column. ${PROSE}</p>
      <h2>Depths</h2>
      <table class="plain"><tr><td class="nowrap">Station name</td><td class="nowrap">Samples taken</td><td class="nowrap">Mean depth (metres)</td></tr>
      <tr><td class="nowrap">North ridge</td><td>120</td><td>4.25</td></tr><tr><td class="nowrap">South valley</td><td>95</td><td>12.50</td></tr>
      <tr><td>Lake shore</td><td>84</td><td>7.75</td></tr></table>
      <p>Beta paragraph follows the table. ${PROSE}</p>
      <p>Omega paragraph closes the right column. ${PROSE} ${PROSE} ${PROSE}</p></div>`));
    expect(tables).to.equal([{
      page: 1, title: 'Depths', headers: ['Station name', 'Samples taken', 'Mean depth (metres)'],
      rows: [['North ridge', '120', '4.25'], ['South valley', '95', '12.50'], ['Lake shore', '84', '7.75']],
    }]);
  });

  // Large type (13 pt) with the cells a 9 pt padding apart: the gap between cells is less than an em.
  const large = (body: string) => pdfFromHtml(`<div class="large"><h1>Counts</h1><p>${PROSE}</p>${body}<p>${PROSE}</p></div>`);

  it('in large type, reads a header in capitals whose cells stand only their padding apart, cell by cell', { timeout: 30_000 }, async () => {
    const tables = await tablesOf(await large(`<p>Table 1: Totals by direction</p>
      <table class="plain">
        <tr>
          <td>NORTH</td>
          <td>SOUTH</td>
          <td>EAST</td>
          <td>WEST</td>
          <td>TOTAL</td>
        </tr>
        <tr><td>12</td><td>7</td><td>30</td><td>4</td><td>53</td></tr>
      </table>`));
    expect(tables).to.equal([
      { page: 1, title: 'Table 1: Totals by direction', headers: ['NORTH', 'SOUTH', 'EAST', 'WEST', 'TOTAL'], rows: [['12', '7', '30', '4', '53']] },
    ]);
  });

  it('in large type, reads a header cell spanning two rows beside a second header row whose cells run to three lines, cell by cell', { timeout: 30_000 }, async () => {
    const tables = await tablesOf(await large(`<p>Table 2: Nests</p>
      <table class="plain"><tr><td rowspan="2">No.</td><td rowspan="2">Station</td><td colspan="2" style="width: 12em">Spring survey on the second of May</td><td rowspan="2" style="width: 5em">Change in the count of nests</td></tr>
      <tr><td style="width: 5em">Count of breeding/ colonies</td><td style="width: 5em">Count of birds</td></tr>
      <tr><td>1</td><td>North ridge</td><td>35</td><td>498</td><td>-41</td></tr>
      <tr><td>2</td><td>South valley</td><td>32</td><td>435</td><td>+46</td></tr>
      <tr><td>3</td><td>Lake shore</td><td>25</td><td>425</td><td>-33</td></tr>
      <tr><td>4</td><td>Pine forest</td><td>19</td><td>194</td><td>+8</td></tr></table>`));
    expect(tables).to.equal([{
      page: 1, title: 'Table 2: Nests',
      headers: ['No.', 'Station', 'Spring survey on the second of May / Count of breeding/ colonies', 'Spring survey on the second of May / Count of birds', 'Change in the count of nests'],
      rows: [['1', 'North ridge', '35', '498', '-41'], ['2', 'South valley', '32', '435', '+46'], ['3', 'Lake shore', '25', '425', '-33'], ['4', 'Pine forest', '19', '194', '+8']],
    }]);
  });

  it('in large type, reads a table of one row whose cells wrap to different depths as one row, cell by cell', { timeout: 30_000 }, async () => {
    const tables = await tablesOf(await large(`<p>Table 3: Sources</p>
      <table class="plain"><tr><td style="width: 4em">Sources left out</td><td>field_notes_2019_spring field_notes_2019_autumn survey_sheets_north_ridge survey_sheets_south_valley volunteer_logs_lake_shore</td></tr></table>`));
    expect(tables).to.equal([{
      page: 1, title: 'Table 3: Sources', rows: [],
      headers: ['Sources left out', 'field_notes_2019_spring field_notes_2019_autumn survey_sheets_north_ridge survey_sheets_south_valley volunteer_logs_lake_shore'],
    }]);
  });

  it('a PDF with text and no table answers no tables; one without a text layer fails uncharged with NO_CONTENT, saying why', { timeout: 30_000 }, async () => {
    expect(await tablesOf(await pdfFromHtml(`<h1>Minutes</h1><p>${PROSE}</p><p>${PROSE}</p>`))).to.equal([]);
    const scan = makePdf([{ jpeg: await photographedPage() }]);
    const err = await tablesOf(new Uint8Array(scan)).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.an.instanceof(ServiceError);
    expect((err as ServiceError).code).to.equal('NO_CONTENT');
    expect((err as ServiceError).message).to.contain('no text layer');
  });
});

describe('TABLES_ENGINE', () => {
  it('is model unless set, takes local, refuses anything else naming the variable', () => {
    expect(loadConfig({}, {}).tablesEngine).to.equal('model');
    expect(loadConfig({}, { TABLES_ENGINE: 'local' }).tablesEngine).to.equal('local');
    expect(() => loadConfig({}, { TABLES_ENGINE: 'vision' })).to.throw(ConfigError, /TABLES_ENGINE/);
    expect(ENVIRONMENT_VARIABLES).to.include('TABLES_ENGINE');
  });
});

describe('the endpoint shape of a table', () => {
  it('places cells spanning rows and columns in their first slot; without a two-level header the header is the first row', () => {
    const cell = (text: string, colspan = 1, rowspan = 1) => ({ text, colspan, rowspan });
    expect(shapeTable([[cell('Region', 1, 2), cell('Q1'), cell('Q2')], [cell('4'), cell('5')], [cell('South'), cell('total 9', 2)]])).to.equal({
      headers: ['Region', 'Q1', 'Q2'], rows: [['', '4', '5'], ['South', 'total 9', '']],
    });
    expect(shapeTable([[cell('Prices', 2)], [cell('Tea'), cell('3.50')]])).to.equal({ headers: ['Prices', ''], rows: [['Tea', '3.50']] });
    expect(shapeTable([])).to.equal({ headers: [], rows: [] });
  });
});

describe('/v1/pdf/tables over HTTP with TABLES_ENGINE=local, paid on the local chain, no model provider', () => {
  let local: TestService;
  let modelDefault: TestService;
  let pdf: Uint8Array;

  before({ timeout: 60_000 }, async () => {
    local = await startTestService({ config: { tablesEngine: 'local' } });
    modelDefault = await startTestService({ rigs: { evm: local.evm } });
    pdf = await pdfFromHtml(`<h1>Annual figures</h1><p>${PROSE}</p>
      <p>Table 1: Samples by site</p>
      <table class="ruled"><tr><td>Site</td><td>Samples</td><td>Share</td></tr>
      <tr><td>North ridge</td><td>120</td><td>40%</td></tr><tr><td>South valley</td><td>95</td><td>32%</td></tr></table>
      <h2 style="break-before: page">Rainfall</h2>
      <table class="plain"><tr><td>Month</td><td>Rain</td><td>Sun</td></tr>
      <tr><td>March</td><td>41</td><td>150</td></tr><tr><td>April</td><td>38</td><td>171</td></tr><tr><td>May</td><td>22</td><td>204</td></tr></table>
      <p>The counts come from the station's own instruments, read every morning at nine.</p>`);
  });
  after(async () => { await modelDefault?.stop(); await local?.stop(); });

  const balance = () => local.evm.balanceOf(local.evm.payerAddress);

  async function paid(url: string, body: () => FormData) {
    const pr = await quoteAt(url, body());
    const payload = await signOnBase(pr, local.evm.payerKey);
    return { amount: BigInt(pr.accepts[0]!.amount), res: await paidAt(url, body(), payload) };
  }

  it('answers a paid call with the tables of both pages, cell by cell, charged 30000 per page', { timeout: 60_000 }, async () => {
    const before = await balance();
    const { res, amount } = await paid(`${local.url}/v1/pdf/tables`, () => form([pdf]));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('application/json');
    expect(res.headers.get('payment-response')).to.exist();
    expect(await res.json()).to.equal({
      tables: [
        { page: 1, title: 'Table 1: Samples by site', headers: ['Site', 'Samples', 'Share'], rows: [['North ridge', '120', '40%'], ['South valley', '95', '32%']] },
        { page: 2, title: 'Rainfall', headers: ['Month', 'Rain', 'Sun'], rows: [['March', '41', '150'], ['April', '38', '171'], ['May', '22', '204']] },
      ],
    });
    expect(amount).to.equal(60000n);
    expect(before - await balance()).to.equal(60000n);
    expect(await local.jobDirsLeft()).to.equal([]);
  });

  it('a scanned PDF is refused after payment is offered but before it is taken: 422 NO_CONTENT, nothing charged', { timeout: 60_000 }, async () => {
    const scan = makePdf([{ jpeg: await photographedPage() }]);
    const before = await balance();
    const { res } = await paid(`${local.url}/v1/pdf/tables`, () => form([scan]));
    expect(res.status).to.equal(422);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('NO_CONTENT');
    expect(await balance()).to.equal(before);
  });

  it('catalog, OpenAPI, MCP and health say the tables endpoint runs here and its content stays on the server; the other model endpoints still need the provider', { timeout: 30_000 }, async () => {
    const catalog = await (await fetch(`${local.url}/v1/discovery`)).json() as { items: Array<{ resource: string; metadata: { description: string; thirdParty?: Record<string, unknown> } }> };
    const item = (p: string) => catalog.items.find((i) => i.resource.endsWith(p))!;
    const tables = item('/v1/pdf/tables');
    expect(tables.metadata.thirdParty).to.equal({
      sendsContent: false, engine: 'paydoc layout engine (local: tables read from the PDF\'s text layer and drawn rules, as for /v1/pdf/markdown)', available: true,
    });
    const stays = 'On this service the tables are read on this server by its own layout engine, from the PDF\'s text layer (pages without one yield no tables): the file\'s content stays on the server and is sent to no third party.';
    expect(tables.metadata.description).to.equal(`Finds the tables on up to 30 pages and returns them as rows of strings. ${stays}`);
    expect(item('/v1/pdf/ocr').metadata.thirdParty).to.include({ sendsContent: true, available: false });
    expect(item('/v1/pdf/ocr').metadata.description).to.not.contain('stays on the server');

    const openapi = await (await fetch(`${local.url}/openapi.json`)).json() as { paths: Record<string, { post: { description: string; responses: Record<string, { description: string }>; 'x-x402': { thirdParty?: Record<string, unknown> } } }> };
    const oa = openapi.paths['/v1/pdf/tables']!.post;
    expect(oa.description).to.contain(stays);
    expect(oa['x-x402'].thirdParty).to.include({ sendsContent: false, available: true });
    expect(oa.responses['503']!.description).to.not.contain('model provider');
    expect(openapi.paths['/v1/pdf/ocr']!.post.responses['503']!.description).to.contain('model provider is not configured');

    // The 402 says it too, within the Bazaar's 500 characters, and /llms.txt tells agents.
    const quote = await quoteAt(`${local.url}/v1/pdf/tables`, form([pdf]));
    expect(quote.resource.description).to.contain(stays);
    expect(quote.resource.description!.length).to.be.at.most(500);
    const llms = await (await fetch(`${local.url}/llms.txt`)).text();
    expect(llms).to.match(/\/v1\/pdf\/tables\): [^\n]*Runs on this server: the file's content is sent to no third party\./);
    expect(llms).to.match(/\/v1\/pdf\/ocr\): [^\n]*Sends the file's content to a third-party model provider\./);

    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${local.url}/mcp`)));
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((x) => x.name === 'svc_pdf_tables')!;
      expect(tool.description).to.contain(stays);
      const mcpQuote = await client.callTool({ name: 'svc_pdf_tables', arguments: { file: { data: Buffer.from(pdf).toString('base64') } } });
      const offered = mcpQuote.structuredContent as { resource: { url: string; description: string } };
      expect(offered.resource).to.include({ url: `${local.url}/mcp` });
      expect(offered.resource.description).to.contain(stays);
      // Nothing leaves the server: no open world. The OCR tools still send their files out.
      expect(tool.annotations?.openWorldHint).to.equal(false);
      expect(tools.filter((x) => x.annotations?.openWorldHint).map((x) => x.name).sort()).to.equal(['svc_image_ocr', 'svc_pdf_ocr', 'svc_pdf_structured']);
    } finally {
      await client.close();
    }

    const health = await (await fetch(`${local.url}/v1/health`)).json() as { tablesEngine: string; modelProvider: boolean };
    expect(health).to.include({ tablesEngine: 'local', modelProvider: false });
    const ocr = await fetch(`${local.url}/v1/pdf/ocr`, { method: 'POST', body: form([pdf]) });
    expect(ocr.status).to.equal(503);
  });

  it('by default (TABLES_ENGINE=model) without a provider the endpoint answers 503 PROVIDER_DISABLED before any payment, and says the content would go out', { timeout: 30_000 }, async () => {
    const res = await fetch(`${modelDefault.url}/v1/pdf/tables`, { method: 'POST', body: form([pdf]) });
    expect(res.status).to.equal(503);
    expect(res.headers.get('payment-required')).to.be.null();
    const body = await res.json() as { error: { code: string; message: string } };
    expect(body.error.code).to.equal('PROVIDER_DISABLED');
    expect(body.error.message).to.contain('model provider is not configured');
    const catalog = await (await fetch(`${modelDefault.url}/v1/discovery`)).json() as { items: Array<{ resource: string; metadata: { description: string; thirdParty?: Record<string, unknown> } }> };
    const tables = catalog.items.find((i) => i.resource.endsWith('/v1/pdf/tables'))!;
    expect(tables.metadata.thirdParty).to.include({ sendsContent: true, available: false });
    expect(tables.metadata.description).to.equal('Finds the tables on up to 30 pages and returns them as rows of strings.');
    const health = await (await fetch(`${modelDefault.url}/v1/health`)).json() as { tablesEngine: string };
    expect(health.tablesEngine).to.equal('model');
  });
});

// Round trip: Markdown → /v1/pdf/from-markdown → /v1/pdf/markdown, both paid, recovers the
// headings, lists and tables.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { startTestService, form, type TestService } from '../support/service.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const source = `# Quarterly report

Revenue grew in every region this quarter, and the board approved the new plan.

## Regions

- North
- South
  - South-east
  - South-west
- West

## Steps

1. Collect the figures
2. Check them twice
3. Publish the report

## Figures

| Region | Revenue | Growth |
|---|---|---|
| North | 120 | 4% |
| South | 95 | 7% |
| West | 143 | 2% |

### Notes

The figures are unaudited.
`;

describe('Markdown to PDF and back', () => {
  let t: TestService;
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('recovers the headings, lists and table', async () => {
    const payFetch = await t.payFetch('base');
    const pdfRes = await payFetch(`${t.url}/v1/pdf/from-markdown`, { method: 'POST', body: form([Buffer.from(source)], { title: 'Quarterly report' }) });
    expect(pdfRes.status).to.equal(200);
    expect(pdfRes.headers.get('content-type')).to.equal('application/pdf');
    const pdf = Buffer.from(await pdfRes.arrayBuffer());
    const mdRes = await payFetch(`${t.url}/v1/pdf/markdown`, { method: 'POST', body: form([pdf]) });
    expect(mdRes.status).to.equal(200);
    expect(mdRes.headers.get('content-type')).to.equal('text/markdown; charset=utf-8');
    const md = await mdRes.text();
    const lines = md.split('\n').map((l) => l.trimEnd());
    expect(lines).to.include(['# Quarterly report', '## Regions', '## Steps', '## Figures', '### Notes']);
    expect(lines).to.include(['- North', '- South', '    - South-east', '    - South-west', '- West']);
    expect(lines).to.include(['1. Collect the figures', '2. Check them twice', '3. Publish the report']);
    const table = lines.filter((l) => l.startsWith('|'));
    expect(table[0].replace(/\s+/g, ' ')).to.equal('| Region | Revenue | Growth |');
    expect(table.slice(2).map((l) => l.replace(/\s+/g, ' '))).to.equal(['| North | 120 | 4% |', '| South | 95 | 7% |', '| West | 143 | 2% |']);
    expect(md).to.contain('Revenue grew in every region this quarter, and the board approved the new plan.');
  });
});

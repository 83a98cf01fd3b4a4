// The four model endpoints end to end: paid on the local chain, talking to a local
// OpenAI-compatible server that checks what it receives. Charged only on success.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { startFakeProvider, FAKE_MODEL, type FakeProvider, type Script } from '../../support/fake-provider.js';
import { makePdf, textPages } from '../../support/pdf-fixtures.js';
import { paidAt, quoteAt } from '../../support/paying.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('model endpoints over HTTP, paid on the local chain', () => {
  let t: TestService;
  let unconfigured: TestService;
  let fake: FakeProvider;
  let png: Buffer;
  const pdf3 = makePdf(textPages(3));
  const schema = JSON.stringify({ type: 'object', properties: { total: { type: 'number' }, currency: { type: 'string' } }, required: ['total', 'currency'], additionalProperties: false });

  const answer: Script = (req) => {
    if (req.responseFormat?.json_schema?.name === 'page_tables') {
      return { json: { tables: [{ title: null, headers: ['Item', 'Price'], rows: [['Tea', '3.50']] }] } };
    }
    if (req.responseFormat?.type === 'json_schema') return { json: { total: 42.5, currency: 'EUR' } };
    return { content: `text of image ${req.imageUrls.length}` };
  };

  before(async () => {
    fake = await startFakeProvider(answer);
    t = await startTestService({ config: { modelBaseUrl: fake.baseUrl, modelName: FAKE_MODEL, modelApiKey: 'test-key' } });
    unconfigured = await startTestService({ rigs: { evm: t.evm } });
    png = await sharp({ create: { width: 120, height: 60, channels: 3, background: '#ffffff' } }).png().toBuffer();
  });
  after(async () => { await unconfigured?.stop(); await t?.stop(); await fake?.close(); });

  const balance = () => t.evm.balanceOf(t.evm.payerAddress);

  async function paid(path: string, body: () => FormData) {
    const pr = await quoteAt(`${t.url}${path}`, body());
    const payload = await signOnBase(pr, t.evm.payerKey);
    return { amount: BigInt(pr.accepts[0].amount), res: await paidAt(`${t.url}${path}`, body(), payload) };
  }

  it('without a provider, the four endpoints answer 503 before the 402, after field and size checks', async () => {
    for (const [path, body] of [
      ['/v1/image/ocr', form([png])], ['/v1/pdf/ocr', form([pdf3])], ['/v1/pdf/tables', form([pdf3])], ['/v1/pdf/structured', form([pdf3], { schema })],
    ] as const) {
      const res = await fetch(`${unconfigured.url}${path}`, { method: 'POST', body });
      expect(res.status, path).to.equal(503);
      expect(res.headers.get('payment-required')).to.be.null();
      expect(res.headers.get('retry-after')).to.exist();
      expect(((await res.json()) as { error: { code: string; message: string } }).error.message).to.contain('model provider is not configured');
    }
    const bad = await fetch(`${unconfigured.url}/v1/pdf/structured`, { method: 'POST', body: form([pdf3], { schema: '{not json' }) });
    expect(bad.status).to.equal(422);
  });

  it('image OCR, PDF OCR, tables and structured: 200, the right shapes, charged exactly', async () => {
    fake.reset(answer);
    let before = await balance();
    const ocr = await paid('/v1/image/ocr', () => form([png]));
    expect(ocr.res.status).to.equal(200);
    expect(await ocr.res.json()).to.equal({ text: 'text of image 1' });
    expect(before - await balance()).to.equal(20000n);

    before = await balance();
    const pdfOcr = await paid('/v1/pdf/ocr', () => form([pdf3]));
    expect(pdfOcr.res.status).to.equal(200);
    expect(((await pdfOcr.res.json()) as { text: string }).text.split('\f')).to.equal(['text of image 1', 'text of image 1', 'text of image 1']);
    expect(before - await balance()).to.equal(90000n);

    const tables = await paid('/v1/pdf/tables', () => form([pdf3]));
    expect(tables.res.status).to.equal(200);
    const body = await tables.res.json() as { tables: Array<{ page: number; title: string | null; headers: string[]; rows: string[][] }> };
    expect(body.tables.map((x) => x.page)).to.equal([1, 2, 3]);
    expect(body.tables[0]).to.equal({ page: 1, title: null, headers: ['Item', 'Price'], rows: [['Tea', '3.50']] });

    const structured = await paid('/v1/pdf/structured', () => form([pdf3], { schema }));
    expect(structured.res.status).to.equal(200);
    expect(await structured.res.json()).to.equal({ data: { total: 42.5, currency: 'EUR' } });
    const last = fake.received[fake.received.length - 1];
    expect(last.model).to.equal(FAKE_MODEL);
    expect(last.imageUrls.length).to.equal(3);
    expect(last.responseFormat!.json_schema!.schema).to.include({ type: 'object' });
  });

  it('tables from a provider that adds keys of its own: the extras are dropped, 200 in the specified shape, charged exactly', async () => {
    fake.reset((req) => (req.responseFormat?.json_schema?.name === 'page_tables'
      ? { json: { tables: [{ page: 7, title: 'Prices', headers: ['Item'], rows: [['Tea']], confidence: 0.9 }], note: 'extra' } }
      : answer(req)));
    try {
      const before = await balance();
      const { res, amount } = await paid('/v1/pdf/tables', () => form([pdf3]));
      expect(res.status).to.equal(200);
      const body = await res.json() as { tables: unknown[] };
      expect(body).to.equal({ tables: [1, 2, 3].map((page) => ({ page, title: 'Prices', headers: ['Item'], rows: [['Tea']] })) });
      expect(before - await balance()).to.equal(amount);
      // A real mismatch (a cell that is not text) still fails, uncharged.
      fake.reset(() => ({ json: { tables: [{ title: null, headers: ['Item'], rows: [[5]] }] } }));
      const again = await balance();
      const broken = await paid('/v1/pdf/tables', () => form([pdf3]));
      expect(broken.res.status).to.equal(502);
      expect(await balance()).to.equal(again);
    } finally {
      fake.reset(answer);
    }
  });

  it('JSON that never matches the schema fails the job: no charge', async () => {
    fake.reset(() => ({ json: { total: 'lots' } }));
    const before = await balance();
    const { res } = await paid('/v1/pdf/structured', () => form([pdf3], { schema }));
    expect(res.status).to.equal(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('PROVIDER_FAILED');
    expect(await balance()).to.equal(before);
  });

  it('429 followed by success is retried inside the deadline and charged once', async () => {
    let calls = 0;
    fake.reset(() => (++calls === 1 ? { status: 429, headers: { 'retry-after-ms': '50' } } : { content: 'after retry' }));
    const before = await balance();
    const { res } = await paid('/v1/image/ocr', () => form([png]));
    expect(res.status).to.equal(200);
    expect(await res.json()).to.equal({ text: 'after retry' });
    expect(before - await balance()).to.equal(20000n);
  });

  it('a provider that hangs past the deadline: 504 and no charge', async () => {
    const short = await startTestService({
      rigs: { evm: t.evm }, config: { modelBaseUrl: fake.baseUrl, modelName: FAKE_MODEL, jobTimeoutMs: 1500 },
    });
    try {
      fake.reset(() => ({ hang: true }));
      const before = await balance();
      const payFetch = await short.payFetch('base');
      const res = await payFetch(`${short.url}/v1/image/ocr`, { method: 'POST', body: form([png]) });
      expect(res.status).to.equal(504);
      expect(await balance()).to.equal(before);
    } finally {
      await short.stop();
    }
  });

  it('the logs carry neither the schema nor the model\'s answer', () => {
    const all = t.logs.join('\n');
    expect(all).to.not.contain('currency');
    expect(all).to.not.contain('text of image');
    expect(all).to.not.contain('Tea');
  });
});

// The unmodified @x402/fetch with x402's batch-settlement client scheme registered (and nothing
// else) pays every operation's route through one payment channel on the local Base chain: one
// deposit, then a voucher per call. The model endpoints run against the local stand-in provider.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { createPublicClient, http as viemHttp } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment } from '@x402/fetch';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { startTestService, type TestService } from '../support/service.js';
import { FAKE_MODEL, startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { acroFormPdf, makePdf, mixedPagesPdf, photographedPage, textPages } from '../support/pdf-fixtures.js';
import { docx } from '../support/office-fixtures.js';
import { runTool } from '../../tools/process/run-tool.js';
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PASSWORD = 'Channel-Pw-4471';
const DEPOSIT = 40_000_000n;

/** Fields that make each operation's request valid besides its file. */
const FIELDS: Record<string, Record<string, string>> = {
  'image.resize': { width: '10' }, 'image.crop': { width: '5', height: '5' }, 'image.rotate': { angle: '90' },
  'image.flip': { direction: 'horizontal' }, 'pdf.pages': { pages: '1' }, 'pdf.split': { ranges: '1' },
  'pdf.protect': { password: PASSWORD }, 'pdf.unlock': { password: PASSWORD }, 'pdf.redact': { text: JSON.stringify(['Page']) },
  'pdf.structured': { schema: JSON.stringify({ type: 'object', properties: { title: { type: 'string' } } }) },
  'pdf.stamp': { text: 'Page {n} of {total}' }, 'pdf.form-fill': { values: JSON.stringify({ name: 'Ada' }) },
  'pdf.set-metadata': { title: 'A title' },
};

describe('every route paid through a payment channel by the standard client', () => {
  let t: TestService;
  let fake: FakeProvider;
  /** The page from-url loads: an origin on loopback named in URL_FETCH_ALLOW. */
  let page: http.Server;
  const files: Record<string, Buffer> = {};

  before(async () => {
    fake = await startFakeProvider((request) => {
      const name = request.responseFormat?.json_schema?.name;
      if (name === 'page_tables') return { json: { tables: [] } };
      if (request.responseFormat) return { json: { title: 'a title' } };
      return { content: 'recognised text' };
    });
    page = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><p>A page.</p>'));
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const pageHost = `127.0.0.1:${(page.address() as AddressInfo).port}`;
    FIELDS['pdf.from-url'] = { url: `http://${pageHost}/` };
    const config = { modelBaseUrl: fake.baseUrl, modelApiKey: 'sk-test', modelName: FAKE_MODEL, modelDpi: 72, urlFetchAllow: pageHost };
    t = await startTestService({ config });
    files.png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#884422' } }).png().toBuffer();
    files.pdf = makePdf(textPages(2));
    files.withImage = mixedPagesPdf(await photographedPage(300, 400));
    files.markdown = Buffer.from('# A title\n\nSome text.\n');
    files.office = await docx();
    files.form = acroFormPdf();
    files.web = Buffer.from('<!doctype html><title>A title</title><p>Some text.</p>');
    const scratch = await mkdtemp(path.join('/dev/shm', 'channel-routes-'));
    try {
      await writeFile(path.join(scratch, 'in.pdf'), files.pdf);
      const encrypt = ['--encrypt', PASSWORD, PASSWORD, '256', '--', 'in.pdf', 'enc.pdf'];
      const enc = await runTool('qpdf', encrypt, { cwd: scratch, timeoutMs: 30_000 });
      if (enc.exitCode !== 0) throw new Error('qpdf --encrypt failed');
      files.encrypted = await readFile(path.join(scratch, 'enc.pdf'));
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
  after(async () => {
    await t?.stop();
    await fake?.close();
    page?.closeAllConnections();
    await new Promise((resolve) => page?.close(resolve));
  });

  function bodyFor(op: Operation): FormData {
    const form = new FormData();
    const special: Record<string, Buffer> = { 'pdf.unlock': files.encrypted, 'pdf.images': files.withImage, 'pdf.form-fill': files.form };
    const file = special[op.id] ?? (op.input.kind === 'image' || op.input.kind === 'page-image' ? files.png : op.input.kind === 'pdf' ? files.pdf : files[op.input.kind]);
    const name = { image: 'in.png', 'page-image': 'in.png', pdf: 'in.pdf', markdown: 'in.md', office: 'in.docx', web: 'in.html' }[op.input.kind];
    for (let i = 0; i < op.input.count.min; i++) form.append('file', new Blob([new Uint8Array(file)]), name);
    for (const [k, v] of Object.entries(FIELDS[op.id] ?? {})) form.append(k, v);
    return form;
  }

  it(`pays all ${operations.length} operations from one deposit, a voucher each with no transaction`, { timeout: 300_000 }, async () => {
    const key = generatePrivateKey();
    const payer = privateKeyToAccount(key).address;
    await t.evm.mint(payer, DEPOSIT);
    const chain = createPublicClient({ transport: viemHttp(t.evm.rpcUrl) });
    const signer = toClientEvmSigner(privateKeyToAccount(key), chain);
    const scheme = new BatchSettlementEvmScheme(signer, { depositStrategy: () => DEPOSIT, depositPolicy: { depositMultiplier: 5 } });
    // Only the channel scheme: an exact payment would mean the channel was not used. A model route's voucher is its most.
    const client = new x402Client().register('eip155:8453', scheme);
    client.setSpendControls({ maxAmountPerPayment: '$20' });
    const pay = wrapFetchWithPayment(fetch, client) as typeof fetch;
    const transactions: string[] = [];
    let charged = 0n;
    for (const op of operations) {
      const res = await pay(`${t.url}${op.path}`, { method: 'POST', body: bodyFor(op) });
      expect(res.status, `${op.id}: ${res.status === 200 ? '' : await res.text()}`).to.equal(200);
      await res.arrayBuffer();
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(receipt.success, op.id).to.equal(true);
      const extra = receipt.extra as { chargedAmount: string; channelState: { chargedCumulativeAmount: string } };
      charged += BigInt(extra.chargedAmount);
      expect(extra.channelState.chargedCumulativeAmount, op.id).to.equal(String(charged));
      if (receipt.transaction) transactions.push(receipt.transaction);
    }
    // The first call's deposit is the only transaction, and the only money that left the wallet.
    expect(transactions).to.have.length(1);
    expect(await t.evm.balanceOf(payer)).to.equal(0n);
    expect(charged).to.be.above(0n);
  });
});

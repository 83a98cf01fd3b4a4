// The Solana leg: a LiteSVM-backed local chain, its own facilitator, the standard client.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { startTestService, form, type TestService } from './support/service.js';
import { makePdf, textPages } from './pdf-fixtures.js';
import { createSvmClientSigner, registerSvmPayer } from '../client/svm-payer.js';
import { balancesOf, paidAt, quoteAt } from './support/paying.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SOLANA = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';

describe('payments on Solana (LiteSVM chain, its own facilitator, standard client)', () => {
  let t: TestService;
  const pdf2 = makePdf(textPages(2));
  const pdf4 = makePdf(textPages(4));
  const pdfNoImages = makePdf(textPages(1));

  before(async () => { t = await startTestService({ solana: true }); });
  after(async () => { await t?.stop(); });

  const balances = () => balancesOf(t.svm!);
  const jobsStarted = () => t.metric('paydoc_jobs_total', { outcome: 'started' });

  const quote = (p: string, body: () => FormData): Promise<PaymentRequired> => quoteAt(`${t.url}${p}`, body());

  async function sign(pr: PaymentRequired): Promise<PaymentPayload> {
    const client = registerSvmPayer(new x402Client(), await createSvmClientSigner(t.svm!.payerSecretKey), t.svm!.rpcUrl);
    return client.createPaymentPayload({ ...pr, accepts: pr.accepts.filter((a) => a.network === SOLANA) });
  }

  const paidWith = (p: string, body: FormData, payload: PaymentPayload) => paidAt(`${t.url}${p}`, body, payload);

  it('every 402 offers Base and Solana for the same amount, Solana with the mint and the fee payer', async () => {
    const pr = await quote('/v1/pdf/extract', () => form([pdf2]));
    expect(pr.accepts.map((a) => a.network)).to.equal(['eip155:8453', SOLANA]);
    expect(pr.accepts[0].amount).to.equal('20000');
    expect(pr.accepts[1].amount).to.equal('20000');
    expect(pr.accepts[1]).to.include({ asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', payTo: t.svm!.payTo, maxTimeoutSeconds: 300 });
    expect((pr.accepts[1].extra as { feePayer: string }).feePayer).to.equal(t.svm!.feePayerAddress);
  });

  it('a paid call settles on Solana: 200, a receipt, balances moved by exactly the price', async () => {
    const before = await balances();
    const payFetch = await t.payFetch('solana');
    const res = await payFetch(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form([pdf4]) });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { pageCount: number }).pageCount).to.equal(4);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt).to.include({ success: true, network: SOLANA });
    const after = await balances();
    expect(before.payer - after.payer).to.equal(40000n);
    expect(after.payTo - before.payTo).to.equal(40000n);
  });

  it('failed work moves nothing', async () => {
    const pr = await quote('/v1/pdf/images', () => form([pdfNoImages]));
    const payload = await sign(pr);
    const before = await balances();
    const res = await paidWith('/v1/pdf/images', form([pdfNoImages]), payload);
    expect(res.status).to.equal(422);
    expect(await balances()).to.equal(before);
  });

  it('timed-out work moves nothing', async () => {
    const slow = await startTestService({ rigs: { evm: t.evm, svm: t.svm }, config: { jobTimeoutMs: 1 } });
    try {
      const before = await balances();
      const payFetch = await slow.payFetch('solana');
      const res = await payFetch(`${slow.url}/v1/pdf/render`, { method: 'POST', body: form([pdf4], { dpi: 300 }) });
      expect(res.status).to.equal(504);
      expect(await balances()).to.equal(before);
    } finally {
      await slow.stop();
    }
  });

  it('a replayed transaction, one after the other and concurrently, buys one result', async () => {
    const before = await balances();
    const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf2])));
    expect((await paidWith('/v1/pdf/extract', form([pdf2]), payload)).status).to.equal(200);
    expect((await paidWith('/v1/pdf/extract', form([pdf2]), payload)).status).to.equal(410);
    const payload2 = await sign(await quote('/v1/pdf/extract', () => form([pdf2])));
    const statuses = (await Promise.all(Array.from({ length: 3 }, () => paidWith('/v1/pdf/extract', form([pdf2]), payload2)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).to.have.length(1);
    // The others arrived while it ran (409) or after it was delivered (410); none is asked to pay.
    for (const status of statuses.filter((s) => s !== 200)) expect([409, 410]).to.include(status);
    const after = await balances();
    expect(before.payer - after.payer).to.equal(40000n);
  });

  it('a transaction already settled, sent where no record of it is kept (a second instance, its own store): 409 PAYMENT_ALREADY_USED, never 402, nothing moved', async () => {
    const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf2])));
    const before = await balances();
    expect((await paidWith('/v1/pdf/extract', form([pdf2]), payload)).status).to.equal(200);
    const charged = await balances();
    expect(before.payer - charged.payer).to.equal(20000n);
    const other = await startTestService({ rigs: { evm: t.evm, svm: t.svm } });
    try {
      const jobs = await other.metric('paydoc_jobs_total', { outcome: 'started' });
      const res = await paidAt(`${other.url}/v1/pdf/extract`, form([pdf2]), payload);
      expect(res.status).to.equal(409);
      expect(res.headers.get('payment-required')).to.not.exist();
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).to.equal('PAYMENT_ALREADY_USED');
      expect(body.error.message).to.contain('already spent on the chain');
      expect(await other.metric('paydoc_jobs_total', { outcome: 'started' })).to.equal(jobs);
    } finally {
      await other.stop();
    }
    expect(await balances()).to.equal(charged);
  });

  it('a payment for a different file is refused before any work', async () => {
    const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf2])));
    const jobs = await jobsStarted();
    const res = await paidWith('/v1/pdf/extract', form([pdf4]), payload);
    expect(res.status).to.equal(402);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error).to.contain('No matching payment requirements');
    expect(await jobsStarted()).to.equal(jobs);
  });

  it('the Solana facilitator unreachable: 502, no work and no charge; then it recovers', async () => {
    const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf2])));
    const jobs = await jobsStarted();
    const before = await balances();
    t.svm!.facilitator.faults.verify = 'down';
    try {
      const res = await paidWith('/v1/pdf/extract', form([pdf2]), payload);
      expect(res.status).to.equal(502);
    } finally {
      delete t.svm!.facilitator.faults.verify;
    }
    expect(await jobsStarted()).to.equal(jobs);
    expect(await balances()).to.equal(before);
    expect((await paidWith('/v1/pdf/extract', form([pdf2]), payload)).status).to.equal(200);
  });

  it('settlement failing at the Solana facilitator: 503 unconfirmed, nothing moved; the identical retry gets the result, charged once', async () => {
    const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf2])));
    const before = await balances();
    t.svm!.facilitator.faults.settle = 'error';
    try {
      const res = await paidWith('/v1/pdf/extract', form([pdf2]), payload);
      expect(res.status).to.equal(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('SETTLEMENT_UNCONFIRMED');
    } finally {
      delete t.svm!.facilitator.faults.settle;
    }
    expect(await balances()).to.equal(before);
    const retry = await paidWith('/v1/pdf/extract', form([pdf2]), payload);
    expect(retry.status).to.equal(200);
    expect(before.payer - (await balances()).payer).to.equal(20000n);
  });
});

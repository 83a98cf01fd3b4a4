// The x402 gate on the real local chains (Base on anvil, Solana on LiteSVM), each with its own
// facilitator built from x402's code, paid with the standard clients. The cases both chains
// share run once per chain; what only one chain has (EIP-3009's signatures and reverts, Solana's
// second offer and its already-processed transactions) runs on that chain.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { x402Client } from '@x402/core/client';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { startTestService, form, signOnBase, type TestService } from '../support/service.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { revertNextSettlement } from '../../devchains/index.js';
import { createSvmClientSigner, registerSvmPayer } from '../../client/svm-payer.js';
import { balancesOf, errorCode, paidAt, quoteAt, signShortLived } from '../support/paying.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SOLANA = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';

/** One chain as the shared cases use it: its service, its payer and its facilitator's faults. */
interface ChainUnderTest {
  name: string;
  network: `${string}:${string}`;
  payFetch: 'base' | 'solana';
  /** How a settled transaction is written in the receipt. */
  transaction: RegExp;
  start(): Promise<TestService>;
  balances(t: TestService): Promise<{ payer: bigint; payTo: bigint }>;
  sign(t: TestService, pr: PaymentRequired): Promise<PaymentPayload>;
  faults(t: TestService): { verify?: string; settle?: string };
}

const BASE: ChainUnderTest = {
  name: 'Base (local chain, real facilitator, standard client)',
  network: 'eip155:8453',
  payFetch: 'base',
  transaction: /^0x[0-9a-f]{64}$/,
  start: () => startTestService(),
  balances: (t) => balancesOf(t.evm),
  sign: (t, pr) => signOnBase(pr, t.evm.payerKey),
  faults: (t) => t.evm.facilitator.faults,
};

const SOLANA_CHAIN: ChainUnderTest = {
  name: 'Solana (LiteSVM chain, its own facilitator, standard client)',
  network: SOLANA,
  payFetch: 'solana',
  // A transaction signature in base58.
  transaction: /^[1-9A-HJ-NP-Za-km-z]{43,88}$/,
  start: () => startTestService({ solana: true }),
  balances: (t) => balancesOf(t.svm!),
  sign: async (t, pr) => {
    const client = registerSvmPayer(new x402Client(), await createSvmClientSigner(t.svm!.payerSecretKey), t.svm!.rpcUrl);
    return client.createPaymentPayload({ ...pr, accepts: pr.accepts.filter((a) => a.network === SOLANA) });
  },
  faults: (t) => t.svm!.facilitator.faults,
};

for (const chain of [BASE, SOLANA_CHAIN]) {
  describe(`payments on ${chain.name}`, () => {
    let t: TestService;
    const pdf3 = makePdf(textPages(3));
    const pdf5 = makePdf(textPages(5));
    const pdfNoImages = makePdf(textPages(1));

    before(async () => { t = await chain.start(); });
    after(async () => { await t?.stop(); });

    const balances = () => chain.balances(t);
    const jobsStarted = () => t.metric('paydoc_jobs_total', { outcome: 'started' });
    const quote = (path: string, body: () => FormData): Promise<PaymentRequired> => quoteAt(`${t.url}${path}`, body());
    const sign = (pr: PaymentRequired) => chain.sign(t, pr);
    const paidWith = (path: string, body: FormData, payload: PaymentPayload) => paidAt(`${t.url}${path}`, body, payload);

    it('per-page: a paid PDF call settles, answers 200 with a receipt, and costs rate x pages', async () => {
      const before = await balances();
      const payFetch = await t.payFetch(chain.payFetch);
      const res = await payFetch(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form([pdf3]) });
      expect(res.status).to.equal(200);
      expect(((await res.json()) as { pageCount: number }).pageCount).to.equal(3);
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(receipt).to.include({ success: true, network: chain.network });
      expect(receipt.transaction).to.match(chain.transaction);
      const after = await balances();
      expect(before.payer - after.payer).to.equal(30000n);
      expect(after.payTo - before.payTo).to.equal(30000n);
    });

    it('a job that fails is not charged and the verified payment stays unspent', async () => {
      const pr = await quote('/v1/pdf/images', () => form([pdfNoImages]));
      const payload = await sign(pr);
      const before = await balances();
      const res = await paidWith('/v1/pdf/images', form([pdfNoImages]), payload);
      expect(res.status).to.equal(422);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('NO_CONTENT');
      expect(res.headers.get('payment-response')).to.be.null();
      expect(await balances()).to.equal(before);
    });

    it('a job past its deadline is not charged', async () => {
      const slow = await startTestService({ rigs: { evm: t.evm, ...(t.svm ? { svm: t.svm } : {}) }, config: { jobTimeoutMs: 1 } });
      try {
        const before = await balances();
        const payFetch = await slow.payFetch(chain.payFetch);
        const res = await payFetch(`${slow.url}/v1/pdf/render`, { method: 'POST', body: form([pdf5], { dpi: 300 }) });
        expect(res.status).to.equal(504);
        expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('JOB_TIMEOUT');
        expect(await balances()).to.equal(before);
        expect(await slow.jobDirsLeft()).to.equal([]);
      } finally {
        await slow.stop();
      }
    });

    it('the same payment replayed, one after the other and concurrently, buys exactly one result', async () => {
      const pr = await quote('/v1/pdf/extract', () => form([pdf3]));
      const payload = await sign(pr);
      const before = await balances();
      const first = await paidWith('/v1/pdf/extract', form([pdf3]), payload);
      expect(first.status).to.equal(200);
      // Delivered: the replay is told so (410), never asked to pay again.
      const again = await paidWith('/v1/pdf/extract', form([pdf3]), payload);
      expect(again.status).to.equal(410);
      expect(await errorCode(again)).to.equal('RESULT_DELIVERED');
      expect(again.headers.get('payment-required')).to.be.null();

      const pr2 = await quote('/v1/pdf/extract', () => form([pdf3]));
      const payload2 = await sign(pr2);
      const results = await Promise.all(Array.from({ length: 4 }, () => paidWith('/v1/pdf/extract', form([pdf3]), payload2)));
      expect(results.filter((r) => r.status === 200)).to.have.length(1);
      // The others arrived while it ran (409, retry) or after it was delivered (410); none is asked to pay.
      for (const res of results.filter((r) => r.status !== 200)) {
        expect([409, 410]).to.include(res.status);
        expect(['PAYMENT_IN_PROGRESS', 'RESULT_DELIVERED']).to.include(await errorCode(res));
      }
      const after = await balances();
      expect(before.payer - after.payer).to.equal(60000n);
      expect(after.payTo - before.payTo).to.equal(60000n);
    });

    it('a payment for a different file is refused before any work', async () => {
      const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf3])));
      const jobs = await jobsStarted();
      const before = await balances();
      const res = await paidWith('/v1/pdf/extract', form([pdf5]), payload);
      expect(res.status).to.equal(402);
      expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error).to.contain('No matching payment requirements');
      expect(await jobsStarted()).to.equal(jobs);
      expect(await balances()).to.equal(before);
    });

    it('facilitator unreachable at verify: 502, no work, no charge; then it recovers', async () => {
      const pr = await quote('/v1/pdf/extract', () => form([pdf3]));
      const payload = await sign(pr);
      const jobs = await jobsStarted();
      const before = await balances();
      chain.faults(t).verify = 'down';
      try {
        const res = await paidWith('/v1/pdf/extract', form([pdf3]), payload);
        expect(res.status).to.equal(502);
        expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('FACILITATOR_UNREACHABLE');
      } finally {
        delete chain.faults(t).verify;
      }
      expect(await jobsStarted()).to.equal(jobs);
      expect(await balances()).to.equal(before);
      // The pool and the gate recover: the same (unspent) payment now buys the result.
      const retry = await paidWith('/v1/pdf/extract', form([pdf3]), payload);
      expect(retry.status).to.equal(200);
    });

    it('the facilitator failing at settle: 503 unconfirmed, the result held; the identical retry gets it, charged once', async () => {
      const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf3])));
      const before = await balances();
      chain.faults(t).settle = 'error';
      let res: Response;
      try {
        res = await paidWith('/v1/pdf/extract', form([pdf3]), payload);
      } finally {
        delete chain.faults(t).settle;
      }
      expect(res.status).to.equal(503);
      expect(res.headers.get('retry-after')).to.equal('5');
      expect(res.headers.get('payment-required')).to.be.null();
      const body = await res.json() as { error: { code: string; message: string } };
      expect(body.error.code).to.equal('SETTLEMENT_UNCONFIRMED');
      expect(body.error.message).to.contain('you will not be charged twice');
      expect(body.error.message).to.not.contain('nothing was charged');
      expect(await balances()).to.equal(before);
      const jobs = await jobsStarted();
      const retry = await paidWith('/v1/pdf/extract', form([pdf3]), payload);
      expect(retry.status).to.equal(200);
      expect(((await retry.json()) as { pageCount: number }).pageCount).to.equal(3);
      expect(decodePaymentResponseHeader(retry.headers.get('payment-response')!).success).to.be.true();
      // The held result, not a second job.
      expect(await jobsStarted()).to.equal(jobs);
      const after = await balances();
      expect(before.payer - after.payer).to.equal(30000n);
      expect(after.payTo - before.payTo).to.equal(30000n);
      expect((await paidWith('/v1/pdf/extract', form([pdf3]), payload)).status).to.equal(410);
    });

    if (chain === BASE) baseOnly(() => t);
    else solanaOnly(() => t);

    it('leaves no job directory behind', async () => {
      expect(await t.jobDirsLeft()).to.equal([]);
    });
  });
}

/** What only Base has: the quotes in detail, an image paid for, EIP-3009's signatures and an on-chain revert. */
function baseOnly(service: () => TestService): void {
  let t: TestService;
  let jpeg: Buffer;
  const pdf3 = makePdf(textPages(3));
  const pdf5 = makePdf(textPages(5));

  before(async () => {
    t = service();
    jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
  });

  const post = (path: string, body: FormData, headers: Record<string, string> = {}) => fetch(`${t.url}${path}`, { method: 'POST', body, headers });
  const balances = () => balancesOf(t.evm);
  const jobsStarted = (service: TestService = t) => service.metric('paydoc_jobs_total', { outcome: 'started' });
  const quote = (path: string, body: () => FormData): Promise<PaymentRequired> => quoteAt(`${t.url}${path}`, body());
  // A payment valid for SHORT_LIVED_S covers a job of QUICK_JOB_MS, the pool's grace and the settlement.
  const QUICK_JOB_MS = 3000;
  const SHORT_LIVED_S = 18;
  const sign = (pr: PaymentRequired, key: string = t.evm.payerKey): Promise<PaymentPayload> => signOnBase(pr, key);
  const paidWith = (path: string, body: FormData, payload: PaymentPayload) => paidAt(`${t.url}${path}`, body, payload);

  it('quotes a flat price, a per-page price and a merge (summed pages) with a 402 and the header', async () => {
    const flat = await post('/v1/image/resize', form([jpeg], { width: 32 }));
    expect(flat.status).to.equal(402);
    const header = decodePaymentRequiredHeader(flat.headers.get('payment-required')!);
    const body = await flat.json() as PaymentRequired;
    expect(body).to.equal(header);
    expect(header.x402Version).to.equal(2);
    const base = header.accepts.find((a) => a.network === 'eip155:8453')!;
    expect(base).to.include({ scheme: 'exact', amount: '5000', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', payTo: t.evm.payTo, maxTimeoutSeconds: 300 });
    expect(base.extra).to.equal({ name: 'USD Coin', version: '2' });
    expect(header.resource?.url).to.equal(`${t.url}/v1/image/resize`);
    expect((header.extensions as Record<string, { info: { input: { method: string; bodyType: string } } }>).bazaar.info.input).to.include({ method: 'POST', bodyType: 'json', body: { file: { url: 'https://example.com/photo.png' } } });

    const perPage = await quote('/v1/pdf/extract', () => form([pdf3]));
    expect(perPage.accepts[0].amount).to.equal('30000');
    const merge = await quote('/v1/pdf/merge', () => form([pdf3, pdf5]));
    expect(merge.accepts[0].amount).to.equal(String(5000 * 8));
    const bundle = await quote('/v1/pdf/merge-compress', () => form([pdf3, pdf5, pdf3]));
    expect(bundle.accepts[0].amount).to.equal(String(8000 * 11));
  });

  it('the 402 names the media type of the image the call will return: the requested format, else the input\'s', async () => {
    const png = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#123456' } }).png().toBuffer();
    for (const [fields, mimeType] of [[{ width: 8, format: 'webp' }, 'image/webp'], [{ width: 8 }, 'image/png'], [{ width: 8, format: 'jpeg' }, 'image/jpeg']] as const) {
      const res = await post('/v1/image/resize', form([png], fields));
      expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).resource.mimeType, mimeType).to.equal(mimeType);
    }
  });

  it('price probes (no body, or the JSON {}) get a 402 with the minimum price; a payment sent without a file is refused before verification', async () => {
    for (const [path, min] of [['/v1/image/resize', '5000'], ['/v1/pdf/extract', '10000']] as const) {
      for (const init of [{}, { body: '{}', headers: { 'content-type': 'application/json' } }]) {
        const res = await fetch(`${t.url}${path}`, { method: 'POST', ...init });
        expect(res.status, path).to.equal(402);
        const pr = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
        expect(pr.accepts.map((a) => `${a.scheme} ${a.amount}`), path).to.equal([`exact ${min}`, `batch-settlement ${min}`]);
        expect(pr.resource.url).to.equal(`${t.url}${path}`);
      }
    }
    const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf3])));
    const verifies = t.evm.facilitator.calls.verify;
    const empty = await fetch(`${t.url}/v1/pdf/extract`, { method: 'POST', headers: { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(payload)).toString('base64') } });
    expect(empty.status).to.equal(422);
    expect(t.evm.facilitator.calls.verify).to.equal(verifies);
  });

  it('a paid call answers 200 with the result and a receipt, and the balances move by exactly the price', async () => {
    const before = await balances();
    const payFetch = await t.payFetch('base');
    const res = await payFetch(`${t.url}/v1/image/resize`, { method: 'POST', body: form([jpeg], { width: 32, format: 'png' }) });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/png');
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect(meta).to.include({ format: 'png', width: 32, height: 24 });
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt.success).to.equal(true);
    expect(receipt.network).to.equal('eip155:8453');
    expect(receipt.transaction).to.match(/^0x[0-9a-f]{64}$/);
    const after = await balances();
    expect(before.payer - after.payer).to.equal(5000n);
    expect(after.payTo - before.payTo).to.equal(5000n);
  });

  it('the paid retry reuses its quote\'s inspection of the same bytes instead of running qpdf again', async () => {
    const fresh = makePdf(textPages(2, 'Retry'));
    const cache = async () => ({ hit: await t.metric('paydoc_inspection_cache_total', { result: 'hit' }), miss: await t.metric('paydoc_inspection_cache_total', { result: 'miss' }) });
    const before = await cache();
    const payFetch = await t.payFetch('base');
    const res = await payFetch(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form([fresh]) });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { pageCount: number }).pageCount).to.equal(2);
    expect(await cache()).to.equal({ hit: before.hit + 1, miss: before.miss + 1 });
  });

  it('tampered amount, wrong payTo and wrong network get 402 and no work', async () => {
    const pr = await quote('/v1/pdf/extract', () => form([pdf3]));
    const good = await sign(pr);
    const jobs = await jobsStarted();
    const before = await balances();
    const variants: Array<[string, PaymentPayload, FormData]> = [
      ['amount', { ...good, accepted: { ...good.accepted, amount: '1' } }, form([pdf3])],
      ['payTo', { ...good, accepted: { ...good.accepted, payTo: privateKeyToAccount(generatePrivateKey()).address } }, form([pdf3])],
      ['network', { ...good, accepted: { ...good.accepted, network: 'eip155:1' } }, form([pdf3])],
    ];
    for (const [what, payload, body] of variants) {
      const res = await paidWith('/v1/pdf/extract', body, payload);
      expect(res.status, what).to.equal(402);
      const reason = decodePaymentRequiredHeader(res.headers.get('payment-required')!).error;
      expect(reason, what).to.contain('No matching payment requirements');
    }
    expect(await jobsStarted()).to.equal(jobs);
    expect(await balances()).to.equal(before);
  });

  it('a payment nested thousands of levels deep gets a 402 naming the depth, over HTTP and MCP, with no work', async () => {
    const pr = await quote('/v1/pdf/extract', () => form([pdf3]));
    const good = await sign(pr);
    const jobs = await jobsStarted();
    const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    // Built as text: JSON.stringify itself could not write these. 2,000 levels keep the header under
    // Node's 16 KB header limit beside the echoed discovery extension.
    const json = JSON.stringify(good).replace(JSON.stringify(good.accepted.payTo), nested(2_000));
    const res = await fetch(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form([pdf3]), headers: { 'PAYMENT-SIGNATURE': Buffer.from(json).toString('base64') } });
    expect(res.status).to.equal(402);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error).to.contain('nested more than 32 levels');

    const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"svc_pdf_extract","arguments":{"file":{"data":"${pdf3.toString('base64')}"}},"_meta":{"x402/payment":{"x402Version":2,"accepted":${nested(200_000)}}}}}`;
    const mcp = await fetch(`${t.url}/mcp`, { method: 'POST', body: call, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
    expect(mcp.status).to.equal(200);
    const answer = (await mcp.json()) as { result: { isError: boolean; structuredContent: PaymentRequired } };
    expect(answer.result.isError).to.equal(true);
    expect(answer.result.structuredContent.error).to.contain('nested more than 32 levels');
    expect(await jobsStarted()).to.equal(jobs);
  });

  it('an expired authorization and an unfunded payer are refused by verification, before any work', async () => {
    const pr = await quote('/v1/pdf/extract', () => form([pdf3]));
    const jobs = await jobsStarted();
    const expired = await sign({ ...pr, accepts: pr.accepts.map((a) => ({ ...a })) });
    // Re-sign the same authorization with a validBefore in the past: a genuine, expired signature.
    const account = privateKeyToAccount(t.evm.payerKey);
    const auth = (expired.payload as { authorization: Record<string, string> }).authorization;
    const past: Record<string, string> = { ...auth, validAfter: '0', validBefore: String(Math.floor(Date.now() / 1000) - 60) };
    const signature = await account.signTypedData({
      domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: pr.accepts[0].asset as `0x${string}` },
      types: { TransferWithAuthorization: [
        { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
      ] },
      primaryType: 'TransferWithAuthorization',
      message: { from: past.from as `0x${string}`, to: past.to as `0x${string}`, value: BigInt(past.value), validAfter: 0n, validBefore: BigInt(past.validBefore), nonce: past.nonce as `0x${string}` },
    });
    const res1 = await paidWith('/v1/pdf/extract', form([pdf3]), { ...expired, payload: { signature, authorization: past } });
    expect(res1.status).to.equal(402);
    expect(decodePaymentRequiredHeader(res1.headers.get('payment-required')!).error).to.match(/valid_before|expired|validBefore/i);

    const unfunded = await sign(pr, generatePrivateKey());
    const res2 = await paidWith('/v1/pdf/extract', form([pdf3]), unfunded);
    expect(res2.status).to.equal(402);
    expect(decodePaymentRequiredHeader(res2.headers.get('payment-required')!).error).to.contain('insufficient_balance');
    expect(await jobsStarted()).to.equal(jobs);
  });

  it('the settlement reverting on chain: a 402 that says so, no result bytes and no transfer', async () => {
    const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf3])));
    const before = await balances();
    revertNextSettlement(t.evm);
    const res = await paidWith('/v1/pdf/extract', form([pdf3]), payload);
    expect(res.status).to.equal(402);
    expect(res.headers.get('content-type')).to.contain('application/json');
    const body = await res.json() as PaymentRequired;
    expect(body.error).to.contain('settlement failed');
    expect(JSON.stringify(body)).to.not.contain('marker');
    expect(await balances()).to.equal(before);
  });

  // Waits until the authorization has expired on the chain: a block past validBefore is mined (Base
  // mines one every two seconds; anvil only when a transaction comes).
  async function pastValidBefore(validBefore: number): Promise<void> {
    const wait = (validBefore + 1) * 1000 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await t.evm.mint(privateKeyToAccount(generatePrivateKey()).address, 1n);
  }

  it('a payment another instance settled while this one worked: 409 PAYMENT_ALREADY_USED, and its claim released (a retry is not told "in progress" for ten minutes); the holder still delivers, charged once', async () => {
    const impatient = await startTestService({ rigs: { evm: t.evm }, config: { facilitatorTimeoutMs: 1000 } });
    const other = await startTestService({ rigs: { evm: t.evm } });
    try {
      const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf3])));
      const before = await balances();
      // The settlement lands 4 s after it is asked for: the first instance has stopped waiting by
      // then (its result held), and the second verifies the payment before it lands.
      t.evm.facilitator.faults.settleDelayMs = 4000;
      let atOther: Response;
      try {
        const first = await paidAt(`${impatient.url}/v1/pdf/extract`, form([pdf3]), payload);
        expect(await errorCode(first)).to.equal('SETTLEMENT_UNCONFIRMED');
        atOther = await paidAt(`${other.url}/v1/pdf/extract`, form([pdf3]), payload);
      } finally {
        delete t.evm.facilitator.faults.settleDelayMs;
      }
      expect(atOther.status).to.equal(409);
      expect(await errorCode(atOther)).to.equal('PAYMENT_ALREADY_USED');
      const again = await paidAt(`${other.url}/v1/pdf/extract`, form([pdf3]), payload);
      expect(again.status).to.equal(409);
      expect(await errorCode(again)).to.equal('PAYMENT_ALREADY_USED');
      const held = await paidAt(`${impatient.url}/v1/pdf/extract`, form([pdf3]), payload);
      expect(held.status).to.equal(200);
      expect(((await held.json()) as { pageCount: number }).pageCount).to.equal(3);
      const after = await balances();
      expect(before.payer - after.payer).to.equal(30000n);
      expect(after.payTo - before.payTo).to.equal(30000n);
    } finally {
      await Promise.all([impatient.stop(), other.stop()]);
    }
  });

  it('a held result retried after validBefore, its first settlement having landed: the chain says charged, so 200 with the held result, charged once', async () => {
    // A service whose jobs end within 3 s accepts a payment valid for 18 s (work, grace, settlement).
    const quick = await startTestService({ rigs: { evm: t.evm }, config: { jobTimeoutMs: QUICK_JOB_MS } });
    try {
      const { payload, validBefore } = await signShortLived(await quote('/v1/pdf/extract', () => form([pdf3])), t.evm.payerKey, SHORT_LIVED_S);
      const before = await balances();
      t.evm.facilitator.faults.settle = 'lost';
      let res: Response;
      try {
        res = await paidAt(`${quick.url}/v1/pdf/extract`, form([pdf3]), payload);
      } finally {
        delete t.evm.facilitator.faults.settle;
      }
      expect(res.status).to.equal(503);
      expect(await errorCode(res)).to.equal('SETTLEMENT_UNCONFIRMED');
      const charged = await balances();
      expect(before.payer - charged.payer).to.equal(30000n);
      await pastValidBefore(validBefore);
      const jobs = await jobsStarted(quick);
      const retry = await paidAt(`${quick.url}/v1/pdf/extract`, form([pdf3]), payload);
      expect(retry.status).to.equal(200);
      expect(((await retry.json()) as { pageCount: number }).pageCount).to.equal(3);
      expect(decodePaymentResponseHeader(retry.headers.get('payment-response')!)).to.include({ success: true, network: 'eip155:8453' });
      expect(await jobsStarted(quick)).to.equal(jobs);
      expect(await balances()).to.equal(charged);
      expect((await paidAt(`${quick.url}/v1/pdf/extract`, form([pdf3]), payload)).status).to.equal(410);
    } finally {
      await quick.stop();
    }
  });

  it('a held result retried after validBefore, never settled: the chain says expired unspent, so a 402 saying nothing was charged (pay again), and nothing moves', async () => {
    // A service whose jobs end within 3 s accepts a payment valid for 18 s (work, grace, settlement).
    const quick = await startTestService({ rigs: { evm: t.evm }, config: { jobTimeoutMs: QUICK_JOB_MS } });
    try {
      const { payload, validBefore } = await signShortLived(await quote('/v1/pdf/extract', () => form([pdf3])), t.evm.payerKey, SHORT_LIVED_S);
      const before = await balances();
      t.evm.facilitator.faults.settle = 'error';
      let res: Response;
      try {
        res = await paidAt(`${quick.url}/v1/pdf/extract`, form([pdf3]), payload);
      } finally {
        delete t.evm.facilitator.faults.settle;
      }
      expect(res.status).to.equal(503);
      expect(await errorCode(res)).to.equal('SETTLEMENT_UNCONFIRMED');
      await pastValidBefore(validBefore);
      const retry = await paidAt(`${quick.url}/v1/pdf/extract`, form([pdf3]), payload);
      expect(retry.status).to.equal(402);
      const body = (await retry.json()) as { error: { code: string; message: string } };
      expect(body.error.code).to.equal('SETTLEMENT_FAILED');
      expect(body.error.message).to.contain('expired');
      expect(body.error.message).to.contain('nothing was charged');
      expect(body.error.message).to.contain('pay again');
      expect(await balances()).to.equal(before);
      // The held result is gone: the same payment again is told it could not be settled.
      const again = await paidAt(`${quick.url}/v1/pdf/extract`, form([pdf3]), payload);
      expect(again.status).to.equal(402);
      expect(await balances()).to.equal(before);
    } finally {
      await quick.stop();
    }
  });
}

/** What only Solana has: the second offer beside Base's, and a transaction the chain already processed. */
function solanaOnly(service: () => TestService): void {
  let t: TestService;
  const pdf2 = makePdf(textPages(2));

  before(() => { t = service(); });

  const balances = () => balancesOf(t.svm!);
  const quote = (p: string, body: () => FormData): Promise<PaymentRequired> => quoteAt(`${t.url}${p}`, body());
  const sign = (pr: PaymentRequired) => SOLANA_CHAIN.sign(t, pr);
  const paidWith = (p: string, body: FormData, payload: PaymentPayload) => paidAt(`${t.url}${p}`, body, payload);

  it('every 402 offers Base and Solana for the same amount, Solana with the mint and the fee payer', async () => {
    const pr = await quote('/v1/pdf/extract', () => form([pdf2]));
    // exact on both chains, then a payment channel on Base.
    expect(pr.accepts.map((a) => `${a.scheme} ${a.network}`)).to.equal(['exact eip155:8453', `exact ${SOLANA}`, 'batch-settlement eip155:8453']);
    expect(pr.accepts.map((a) => a.amount)).to.equal(['20000', '20000', '20000']);
    expect(pr.accepts[1]).to.include({ asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', payTo: t.svm!.payTo, maxTimeoutSeconds: 300 });
    expect((pr.accepts[1].extra as { feePayer: string }).feePayer).to.equal(t.svm!.feePayerAddress);
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

  // A result held after its settlement answer was lost, retried while the facilitator still holds
  // the transaction as settling: at once (its verification finds the transaction processed), or
  // after the transaction's blockhash expired (verifying proves nothing; the payer's transactions
  // on the chain show it landed). Either way: 200 with the held result, charged once.
  const retries = [
    { when: 'retried at once: its verification finds it processed', before: () => undefined },
    { when: 'retried after its transaction\'s blockhash expired: the payer\'s transactions on the chain show it landed', before: () => t.svm!.expireBlockhash() },
  ];
  for (const { when, before: beforeRetry } of retries) {
    it(`a result held after its settlement answer was lost, ${when}; 200 with the held result, charged once`, async () => {
      const payload = await sign(await quote('/v1/pdf/extract', () => form([pdf2])));
      const before = await balances();
      SOLANA_CHAIN.faults(t).settle = 'lost';
      try {
        expect((await paidWith('/v1/pdf/extract', form([pdf2]), payload)).status).to.equal(503);
      } finally {
        delete SOLANA_CHAIN.faults(t).settle;
      }
      const charged = await balances();
      expect(before.payer - charged.payer).to.equal(20000n);
      beforeRetry();
      const jobs = await t.metric('paydoc_jobs_total', { outcome: 'started' });
      const retry = await paidWith('/v1/pdf/extract', form([pdf2]), payload);
      expect(retry.status).to.equal(200);
      expect(((await retry.json()) as { pageCount: number }).pageCount).to.equal(2);
      expect(decodePaymentResponseHeader(retry.headers.get('payment-response')!)).to.include({ success: true, network: SOLANA });
      expect(await t.metric('paydoc_jobs_total', { outcome: 'started' })).to.equal(jobs);
      expect(await balances()).to.equal(charged);
      expect((await paidWith('/v1/pdf/extract', form([pdf2]), payload)).status).to.equal(410);
    });
  }
}

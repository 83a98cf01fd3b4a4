// A charged voucher survives the process that took it: the service, run as `npm start` runs it
// against the test's own chain, is SIGKILLed after paid calls through a channel (and once in the
// middle of one), restarted on the same store (the embedded folder, or Redis), and claims on the
// chain exactly what was charged before the kill; the buyer goes on from the right total. And two
// replicas sharing Redis serve one channel one call at a time.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createPublicClient, http, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { wrapFetchWithPayment } from '@x402/fetch';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { BATCH_SETTLEMENT_ADDRESS, startEvmRig, type EvmRig } from '../../devchains/index.js';
import { freePort } from '../support/paying.js';
import { RedisProcess, ServiceProcess, waitFor } from '../support/processes.js';
import { form, startTestService } from '../support/service.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PRICE = 5000n;
const channelAbi = parseAbi(['function channels(bytes32) view returns (uint128 balance, uint128 totalClaimed)']);

describe('payment channels across a SIGKILL and a restart', () => {
  let evm: EvmRig;
  let redis: RedisProcess;
  let dir: string;
  let jpeg: Buffer;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-channels-kill-'));
    redis = new RedisProcess(await freePort(), dir);
    await redis.start();
    evm = await startEvmRig();
    jpeg = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#aa3366' } }).jpeg().toBuffer();
  });
  after(async () => {
    await evm?.stop();
    await redis?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // A new buyer each time, funded with test USDC: a channel of its own, its state in memory.
  async function buyer() {
    const account = privateKeyToAccount(generatePrivateKey());
    await evm.mint(account.address, PRICE * 100n);
    const chain = createPublicClient({ transport: http(evm.rpcUrl) });
    const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, chain), { depositStrategy: () => PRICE * 40n });
    return { chain, scheme, pay: wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', scheme)) as typeof fetch };
  }

  const resize = (width: number) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ file: { data: jpeg.toString('base64') }, width }) });

  async function run(store: Record<string, string>): Promise<void> {
    const env = {
      PAYMENTS: 'live', WORKERS: '1', LOG_LEVEL: 'info', TMP_DIR: await mkdtemp(path.join('/dev/shm', 'paydoc-kill-')),
      EVM_FACILITATOR_URL: evm.facilitatorUrl, EVM_PAY_TO: evm.payTo, EVM_RPC_URL: evm.rpcUrl,
      BATCH_RECEIVER_AUTHORIZER_KEY: evm.receiverAuthorizerKey, ...store,
    };
    const { chain, pay } = await buyer();
    const merchantBefore = await evm.balanceOf(evm.payTo);
    // Nothing is claimed while the first process lives: every charge is only in its store when it dies.
    const first = await ServiceProcess.start(await freePort(), { ...env, BATCH_CLAIM_INTERVAL_S: '3600' });
    let channelId: `0x${string}`;
    let chargedBefore: bigint;
    try {
      for (let i = 0; i < 5; i++) expect((await pay(`${first.url}/v1/image/resize`, resize(16 + i))).status).to.equal(200);
      const last = await pay(`${first.url}/v1/image/resize`, resize(30));
      const state = (decodePaymentResponseHeader(last.headers.get('payment-response')!).extra as { channelState: { channelId: `0x${string}`; chargedCumulativeAmount: string } }).channelState;
      channelId = state.channelId;
      chargedBefore = BigInt(state.chargedCumulativeAmount);
      expect(chargedBefore).to.equal(PRICE * 6n);
      if (!store.REDIS_URL) {
        // Killed in the middle of a paid job: that call was not charged.
        const pending = pay(`${first.url}/v1/pdf/render`, { method: 'POST', body: form([makePdf(textPages(12))], { dpi: 300 }) }).catch(() => undefined);
        await waitFor('the paid job to start', async () => (await first.metric('paydoc_jobs_total', { outcome: 'started' })) >= 7 ? true : undefined, 20_000);
        await first.kill();
        await pending;
      }
    } finally {
      await first.kill();
    }
    expect(await evm.balanceOf(evm.payTo)).to.equal(merchantBefore);

    const second = await ServiceProcess.start(await freePort(), { ...env, BATCH_CLAIM_INTERVAL_S: '1', BATCH_SETTLE_INTERVAL_S: '1' });
    try {
      // The restarted process claims what the killed one charged, and sweeps it to the merchant.
      await waitFor('the vouchers to be swept', async () => (await evm.balanceOf(evm.payTo)) - merchantBefore >= chargedBefore ? true : undefined, 30_000);
      const [, totalClaimed] = await chain.readContract({ address: BATCH_SETTLEMENT_ADDRESS, abi: channelAbi, functionName: 'channels', args: [channelId] });
      expect(totalClaimed).to.equal(chargedBefore);
      expect(await evm.balanceOf(evm.payTo) - merchantBefore).to.equal(chargedBefore);
      // The buyer goes on from the right total (the interrupted call charged nothing).
      const next = await pay(`${second.url}/v1/image/resize`, resize(33));
      expect(next.status).to.equal(200);
      const state = (decodePaymentResponseHeader(next.headers.get('payment-response')!).extra as { channelState: { chargedCumulativeAmount: string } }).channelState;
      expect(BigInt(state.chargedCumulativeAmount)).to.equal(chargedBefore + PRICE);
    } finally {
      await second.kill('SIGTERM');
    }
  }

  it('the embedded store: killed mid-job, restarted on the same folder, nothing charged is lost', async () => {
    await run({ CHANNEL_STORE_DIR: path.join(dir, 'channels') });
  });

  it('Redis: killed, restarted on the same Redis, nothing charged is lost', async () => {
    await run({ REDIS_URL: redis.url });
  });

  it('two replicas on one Redis: vouchers for the same total sent to both at once buy one result; the channel goes on from there', async () => {
    const shared = { rigs: { evm }, config: { redisUrl: redis.url, workers: 1 } };
    const [a, b] = [await startTestService(shared), await startTestService(shared)];
    try {
      const { scheme, pay } = await buyer();
      expect((await pay(`${a.url}/v1/image/resize`, resize(18))).status).to.equal(200);
      const quote = decodePaymentRequiredHeader((await fetch(`${a.url}/v1/image/resize`, resize(19))).headers.get('payment-required')!);
      const client = new x402Client().register('eip155:8453', scheme);
      const [one, two] = [await client.createPaymentPayload(quote), await client.createPaymentPayload(quote)];
      const paid = (url: string, payload: PaymentPayload) => fetch(`${url}/v1/image/resize`, { ...resize(19), headers: { 'content-type': 'application/json', 'payment-signature': encodePaymentSignatureHeader(payload) } });
      const answers = await Promise.all([paid(a.url, one), paid(b.url, two)]);
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses[0]).to.equal(200);
      expect(statuses[1]).to.be.within(402, 409);
      const next = await pay(`${b.url}/v1/image/resize`, resize(20));
      expect(next.status).to.equal(200);
      const state = (decodePaymentResponseHeader(next.headers.get('payment-response')!).extra as { channelState: { chargedCumulativeAmount: string } }).channelState;
      expect(BigInt(state.chargedCumulativeAmount)).to.equal(PRICE * 3n);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

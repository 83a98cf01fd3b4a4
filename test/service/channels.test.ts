// Payment channels (x402's batch-settlement on Base) on the real local chain, with x402's own
// client scheme inside the unmodified @x402/fetch: one deposit, then vouchers that move nothing on
// the chain until the service claims them in a batch and sweeps them to the merchant; a failed
// call charges nothing, a replayed voucher buys nothing, a refund returns the rest.
import http from 'node:http';
import { once } from 'node:events';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { createPublicClient, http as viemHttp, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { wrapFetchWithPayment } from '@x402/fetch';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme, computeChannelId } from '@x402/evm/batch-settlement/client';
import { startTestService, type TestService } from '../support/service.js';
import { BATCH_SETTLEMENT_ADDRESS } from '../../devchains/index.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PRICE = 5000n;
const channelAbi = parseAbi(['function channels(bytes32) view returns (uint128 balance, uint128 totalClaimed)']);

describe('payment channels (batch-settlement on Base)', () => {
  let t: TestService;
  let jpeg: Buffer;
  let origin: http.Server;
  let originUrl = '';

  before(async () => {
    // A buyer's upload target that refuses every push: a call delivered there fails after its work.
    origin = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(500); res.end(); }); });
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    const { port } = origin.address() as { port: number };
    originUrl = `http://127.0.0.1:${port}`;
    t = await startTestService({ config: { urlFetchAllow: `127.0.0.1:${port}`, batchClaimIntervalS: 1, batchSettleIntervalS: 1 } });
    jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
  });
  after(async () => { await t?.stop(); origin?.close(); });

  const chain = () => createPublicClient({ transport: viemHttp(t.evm.rpcUrl) });
  const usdc = (address: string) => t.evm.balanceOf(address);
  const resize = (width: number, extra: Record<string, unknown> = {}) => ({
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ file: { data: jpeg.toString('base64') }, width, ...extra }),
  });

  /** A buyer with x402's batch-settlement client scheme in the standard client and fetch wrapper. */
  function channelBuyer(deposit = PRICE * 30n) {
    const signer = toClientEvmSigner(privateKeyToAccount(t.evm.payerKey), chain());
    const scheme = new BatchSettlementEvmScheme(signer, { depositStrategy: () => deposit });
    const client = new x402Client().register('eip155:8453', scheme);
    const sent: PaymentPayload[] = [];
    const recording: typeof fetch = async (input, init) => {
      const header = new Headers((input as Request).headers ?? init?.headers).get('payment-signature');
      if (header) sent.push(JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentPayload);
      return fetch(input, init);
    };
    return { scheme, sent, pay: wrapFetchWithPayment(recording, client) as typeof fetch };
  }

  it('every 402 offers a channel on Base beside exact on both chains, with the receiver authorizer and the withdrawal delay', async () => {
    const res = await fetch(`${t.url}/v1/image/resize`, resize(32));
    expect(res.status).to.equal(402);
    const pr = decodePaymentRequiredHeader(res.headers.get('payment-required')!) as PaymentRequired;
    const channel = pr.accepts.find((a) => a.scheme === 'batch-settlement')!;
    expect(channel).to.exist();
    expect(channel).to.include({ network: 'eip155:8453', amount: String(PRICE), payTo: t.evm.payTo });
    expect(channel.extra).to.include({ receiverAuthorizer: privateKeyToAccount(t.evm.receiverAuthorizerKey).address, withdrawDelay: 86400, name: 'USD Coin', version: '2' });
    expect(pr.accepts[0].scheme).to.equal('exact');
  });

  it('one deposit, then 20 paid calls with no transaction; a failed call charges nothing; claims and the sweep land exactly the sum charged', async () => {
    const { scheme, sent, pay } = channelBuyer();
    const payerBefore = await usdc(t.evm.payerAddress);
    const merchantBefore = await usdc(t.evm.payTo);
    const first = await pay(`${t.url}/v1/image/resize`, resize(40));
    expect(first.status).to.equal(200);
    const deposited = payerBefore - await usdc(t.evm.payerAddress);
    expect(deposited).to.equal(PRICE * 30n);
    const receipt = decodePaymentResponseHeader(first.headers.get('payment-response')!);
    expect(receipt.success).to.equal(true);
    const channelId = (receipt.extra as { channelState: { channelId: `0x${string}` } }).channelState.channelId;
    expect(channelId.toLowerCase()).to.equal(computeChannelId(scheme.buildChannelConfig(sent[0].accepted), 'eip155:8453').toLowerCase());

    // The claim schedule is paused by watching blocks: 20 vouchers move nothing on the chain.
    const blockBefore = await chain().getBlockNumber();
    const started = Date.now();
    for (let i = 0; i < 19; i++) {
      const res = await pay(`${t.url}/v1/image/resize`, resize(20 + i));
      expect(res.status).to.equal(200);
      const voucherReceipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(voucherReceipt.transaction).to.equal('');
      expect((voucherReceipt.extra as { chargedAmount: string }).chargedAmount).to.equal(String(PRICE));
    }
    // Claims run every second here; only blocks from them may appear, never one per call.
    expect(Number(await chain().getBlockNumber() - blockBefore)).to.be.below(Math.ceil((Date.now() - started) / 1000) * 2 + 2);
    expect(await usdc(t.evm.payerAddress)).to.equal(payerBefore - deposited);

    // A push the buyer's server refuses: 502 after the work, nothing charged; the next voucher goes on from the right total.
    const failed = await pay(`${t.url}/v1/image/resize`, resize(24, { deliver_to: `${originUrl}/out.jpg` }));
    expect(failed.status).to.equal(502);
    const after = await pay(`${t.url}/v1/image/resize`, resize(25));
    expect(after.status).to.equal(200);
    const state = (decodePaymentResponseHeader(after.headers.get('payment-response')!).extra as { channelState: { chargedCumulativeAmount: string } }).channelState;
    expect(state.chargedCumulativeAmount).to.equal(String(PRICE * 21n));

    // Claimed on the chain and swept to the merchant: exactly 21 calls.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && await usdc(t.evm.payTo) - merchantBefore < PRICE * 21n) await new Promise((r) => setTimeout(r, 250));
    const [balance, totalClaimed] = await chain().readContract({ address: BATCH_SETTLEMENT_ADDRESS, abi: channelAbi, functionName: 'channels', args: [channelId] });
    expect(totalClaimed).to.equal(PRICE * 21n);
    expect(balance).to.equal(deposited);
    expect(await usdc(t.evm.payTo) - merchantBefore).to.equal(PRICE * 21n);
    expect(await t.metric('paydoc_channel_unclaimed_usd')).to.equal(0);

    // A voucher already used buys nothing more: its delivered result is gone, nothing is charged.
    const replay = await fetch(`${t.url}/v1/image/resize`, { ...resize(25), headers: { 'content-type': 'application/json', 'payment-signature': encodePaymentSignatureHeader(sent.at(-1)!) } });
    expect(replay.status).to.equal(410);
    expect(((await replay.json()) as { error: { code: string } }).error.code).to.equal('RESULT_DELIVERED');

    // The rest comes back to the buyer on its refund.
    const payerBeforeRefund = await usdc(t.evm.payerAddress);
    const refund = await scheme.refund(`${t.url}/v1/channels/refund`);
    expect(refund.success).to.equal(true);
    expect(await usdc(t.evm.payerAddress) - payerBeforeRefund).to.equal(deposited - PRICE * 21n);
  });

  it('two calls signed on one channel for the same total at once: one is served and charged, the other is refused uncharged', async () => {
    const { scheme, pay } = channelBuyer();
    expect((await pay(`${t.url}/v1/image/resize`, resize(30))).status).to.equal(200);
    const quote = decodePaymentRequiredHeader((await fetch(`${t.url}/v1/image/resize`, resize(31))).headers.get('payment-required')!);
    const client = new x402Client().register('eip155:8453', scheme);
    const [a, b] = [await client.createPaymentPayload(quote), await client.createPaymentPayload(quote)];
    const voucher = (p: PaymentPayload) => (p.payload as { voucher: { maxClaimableAmount: string } }).voucher.maxClaimableAmount;
    expect(voucher(a)).to.equal(voucher(b));
    const paid = (payload: PaymentPayload, width: number) => fetch(`${t.url}/v1/image/resize`, { ...resize(width), headers: { 'content-type': 'application/json', 'payment-signature': encodePaymentSignatureHeader(payload) } });
    const answers = await Promise.all([paid(a, 31), paid(b, 31)]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses[0]).to.equal(200);
    // Which refusal depends on timing: the other call still in progress (409), its total already charged (the
    // corrective 402 a client catches up from) or its result already delivered (410); none charges.
    const refused = answers.find((r) => r.status !== 200)!;
    const outcome = refused.status === 402 ? `402 ${refused.headers.has('payment-required')}`
      : `${refused.status} ${((await refused.json()) as { error: { code: string } }).error.code}`;
    expect(['402 true', '409 PAYMENT_IN_PROGRESS', '410 RESULT_DELIVERED']).to.include(outcome);
    const served = answers.find((r) => r.status === 200)!;
    const state = (decodePaymentResponseHeader(served.headers.get('payment-response')!).extra as { channelState: { chargedCumulativeAmount: string } }).channelState;
    expect(state.chargedCumulativeAmount).to.equal(voucher(a));
  });

  it('MCP: the tool\'s 402 offers the channel too', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const mcp = new Client({ name: 'channels-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const quote = await mcp.callTool({ name: 'svc_image_resize', arguments: { file: { data: jpeg.toString('base64') }, width: 20 } });
      const accepts = (quote.structuredContent as unknown as PaymentRequired).accepts;
      expect(accepts.map((a) => `${a.scheme} ${a.network}`)).to.include('batch-settlement eip155:8453');
    } finally {
      await mcp.close();
    }
  });

  it('a channel idle for BATCH_IDLE_REFUND_S gets the rest of its deposit back unasked, after what it was charged is claimed; /metrics shows the channel until then', async () => {
    const idle = await startTestService({
      rigs: { evm: t.evm }, config: { batchIdleRefundS: 3, batchClaimIntervalS: 1, batchSettleIntervalS: 1 },
    });
    try {
      // A buyer of its own (a fresh funded key), so its channel is this service's alone.
      const account = privateKeyToAccount(generatePrivateKey());
      await t.evm.mint(account.address, PRICE * 100n);
      const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, chain()), { depositStrategy: () => PRICE * 20n });
      const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', scheme)) as typeof fetch;
      for (const width of [21, 22]) expect((await pay(`${idle.url}/v1/image/resize`, resize(width))).status).to.equal(200);
      expect(await usdc(account.address)).to.equal(PRICE * 80n);
      expect(await idle.metric('paydoc_channels_open')).to.equal(1);
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && await usdc(account.address) < PRICE * 98n) await new Promise((r) => setTimeout(r, 250));
      expect(await usdc(account.address)).to.equal(PRICE * 98n);
      expect(await idle.metric('paydoc_channels_open')).to.equal(0);
      expect(await idle.metric('paydoc_channel_last_claim_timestamp_seconds')).to.be.above(0);
    } finally {
      await idle.stop();
    }
  });
});

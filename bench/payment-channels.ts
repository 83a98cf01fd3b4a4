// Payment channels (x402's batch-settlement on Base) against `exact`, on a chain that mines as Base
// does: the local Base chain mining a block every 2 s (the facilitator polling for receipts every
// 100 ms) beside the same chain mining each transaction at once. Two services run side by side,
// one on each chain, and the same tiny paid resize as the payment benchmark is called through:
//   1. `exact` (a transaction per call) and a channel (a voucher per call, after one deposit) on
//      both chains, alternating, with the standard @x402/fetch client;
//   2. 1,000 calls through one new channel on the 2 s chain, then the service stopped (it claims
//      and sweeps what it is owed), and every transaction the chain holds from the deposit on
//      counted and decoded: deposit, claims, settles.
//   node dist/bench/payment-channels.js [--quick]  -> bench/results/payment-channels.json
import sharp from 'sharp';
import { createPublicClient, decodeFunctionData, getAddress, http as viemHttp, parseAbi, type Abi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment } from '@x402/fetch';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { BATCH_SETTLEMENT_ADDRESS, BASE_USDC_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from '../devchains/index.js';
import { ensureContractsBuilt } from '../devchains/evm-contracts.js';
import { parseStepArgs, progress, start, writeResult } from './lib/common.js';
import { form, startBenchService, timeMethod, type BenchService, type PaidResult } from './lib/service.js';
import { compare, type Side } from './lib/side-by-side.js';
import { summarize } from './lib/stats.js';

const ROUTE = '/v1/image/resize';
const PRICE = 5000n; // 0.005 USDC, the resize's price
const BLOCK_TIME_MS = 2000;
const RECEIPT_POLLING_MS = 100;
// Claims every 15 s and sweeps every 30 s: the 1,000 calls take a minute or two here, so the default
// 60 s would make one or two claims whatever the number of calls; at 15 s the count shows claims
// follow the clock, not the calls.
const CLAIM_INTERVAL_S = 15;
const SETTLE_INTERVAL_S = 30;
// Never more than this for the many-calls part, whatever the machine does: the step stops itself.
const MANY_CALLS_BUDGET_MS = 6 * 60_000;
const ANVIL_DEV_ACCOUNT_0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'; // the rig's facilitator sends from it

interface ChannelBuyer {
  client: x402Client;
  address: `0x${string}`;
  /** JSON-RPC requests the buyer's client scheme has made to the chain. */
  rpcRequests: { count: number };
}

function channelBuyer(bench: BenchService, key: `0x${string}`, deposit: bigint): ChannelBuyer {
  const rpcRequests = { count: 0 };
  const chain = createPublicClient({ transport: viemHttp(bench.evm.rpcUrl, { onFetchRequest: () => { rpcRequests.count += 1; } }) });
  const account = privateKeyToAccount(key);
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, chain), { depositStrategy: () => deposit });
  return { client: new x402Client().register('eip155:8453', scheme), address: account.address, rpcRequests };
}

/**
 * A paid call's parts: its stages, and how many requests it made to the facilitator (verify, settle:
 * the schedule's claims and sweeps count too when they fall inside the call) and, for a channel
 * buyer, to the chain.
 */
async function timedCall(bench: BenchService, call: () => Promise<PaidResult>, buyer?: ChannelBuyer): Promise<Record<string, number>> {
  const calls = bench.evm.facilitator.calls;
  const before = { verify: calls.verify, settle: calls.settle, rpc: buyer?.rpcRequests.count ?? 0 };
  const r = await call();
  return {
    quoteMs: r.quoteMs, signMs: r.signMs, paidMs: r.paidMs, verifyMs: r.verifyMs, settleMs: r.settleMs, workMs: r.workMs,
    facilitatorVerifies: calls.verify - before.verify, facilitatorSettles: calls.settle - before.settle,
    ...(buyer ? { buyerRpcRequests: buyer.rpcRequests.count - before.rpc } : {}),
  };
}

/** Times the channel store's updates (a write, fsync, rename and folder fsync each) inside one service. */
function timeChannelStore(bench: BenchService): { ms: number[]; reset(): void } {
  const ms: number[] = [];
  const channels = (bench.service.app.gate as unknown as { channels?: { storage: Record<string, unknown> } }).channels;
  if (!channels) throw new Error('the service offers no payment channels (no receiver-authorizer key in dev mode?)');
  timeMethod(channels.storage, 'updateChannel', (t) => { ms.push(t); });
  return { ms, reset() { ms.length = 0; } };
}

async function main(): Promise<void> {
  const args = parseStepArgs();
  const began = start();
  const runs = args.quick ? 5 : 12;
  // The target compares two sides of about 100 ms each on a shared machine: many cheap pairs, alternating.
  const channelPairs = args.quick ? 20 : 100;
  const manyCalls = args.quick ? 200 : 1000;
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
  const body = () => form([{ bytes: jpeg, name: 'tiny.jpg', type: 'image/jpeg' }], { width: 32 });
  const config = { batchClaimIntervalS: CLAIM_INTERVAL_S, batchSettleIntervalS: SETTLE_INTERVAL_S };

  const instant = await startBenchService({ config });
  let slow: BenchService | undefined;
  try {
    slow = await startBenchService({ config, evm: { blockTimeMs: BLOCK_TIME_MS, receiptPollingMs: RECEIPT_POLLING_MS } });
    const chains = { instant, slow } as const;
    const stores = { instant: timeChannelStore(instant), slow: timeChannelStore(slow) };

    // ---- 1. One call each way, alternating ----------------------------------------------------------
    const deposit = PRICE * 400n;
    const buyers = { instant: channelBuyer(instant, instant.evm.payerKey, deposit), slow: channelBuyer(slow, slow.evm.payerKey, deposit) };
    const firstCall: Record<string, { ms: number; transaction: string }> = {};
    for (const name of ['instant', 'slow'] as const) {
      const started = performance.now();
      await chains[name].paidCallWith(buyers[name].client, ROUTE, body);
      firstCall[name] = { ms: Math.round(performance.now() - started), transaction: 'deposit' };
      progress(`${name} chain: the first channel call (with the deposit) took ${firstCall[name].ms} ms`);
    }
    const storeMsBefore = { instant: stores.instant.ms.length, slow: stores.slow.ms.length };
    const channelSide = (name: 'instant' | 'slow', label: string): Side => ({
      label, run: () => timedCall(chains[name], () => chains[name].paidCallWith(buyers[name].client, ROUTE, body), buyers[name]),
    });
    const exactSide = (name: 'instant' | 'slow', label: string): Side => ({
      label, run: () => timedCall(chains[name], () => chains[name].paidCall(ROUTE, body, 'base')),
    });
    const calls = await compare('channel call, 2 s blocks vs instant chain',
      channelSide('slow', 'channel (batch-settlement), a block every 2 s'),
      channelSide('instant', 'channel (batch-settlement), instant chain'), { warmup: 1, runs },
      [exactSide('instant', 'exact, instant chain'), exactSide('slow', 'exact, a block every 2 s')]);
    const channelCalls = await compare('channel call, 2 s blocks vs instant chain (many pairs)',
      channelSide('slow', 'channel, a block every 2 s'), channelSide('instant', 'channel, instant chain'),
      { warmup: 0, runs: channelPairs });
    const storeUpdatesMs = summarize([...stores.instant.ms.slice(storeMsBefore.instant), ...stores.slow.ms.slice(storeMsBefore.slow)]);
    const rows = [calls.a, calls.b, ...calls.also];
    for (const row of rows) progress(`${row.label}: median ${row.ms.median} ms (p95 ${row.ms.p95}, n ${row.ms.n})`);
    progress(`channel ratio (2 s / instant): ${calls.ratio?.toFixed(2)} in the four-way rounds, `
      + `${channelCalls.ratio?.toFixed(2)} over ${channelCalls.pairs} pairs `
      + `(${channelCalls.a.ms.median} vs ${channelCalls.b.ms.median} ms)`);
    progress(`channel store updates: median ${storeUpdatesMs.median} ms, p95 ${storeUpdatesMs.p95} ms (${storeUpdatesMs.n})`);

    // ---- 2. Many calls through one channel on the 2 s chain ------------------------------------------
    const rpc = createPublicClient({ transport: viemHttp(slow.evm.rpcUrl) });
    const key = generatePrivateKey();
    const manyBuyer = channelBuyer(slow, key, PRICE * BigInt(manyCalls + 10));
    await slow.evm.mint(manyBuyer.address, PRICE * BigInt(manyCalls + 100));
    const fromBlock = (await rpc.getBlockNumber()) + 1n;
    const merchantBefore = await slow.evm.balanceOf(slow.evm.payTo);
    const callMs: number[] = [];
    /** When each later call started and ended (ms since the epoch), to set the slow ones beside the claims and sweeps. */
    const callSpans: Array<[number, number]> = [];
    let firstCallMs = 0;
    const manyStarted = performance.now();
    let stoppedEarly = false;
    let lastReceipt: { transaction?: string; extra?: unknown } | undefined;
    let callsWithTransaction = 0;
    const pay = wrapFetchWithPayment(fetch, manyBuyer.client);
    for (let i = 0; i < manyCalls; i++) {
      if (performance.now() - manyStarted > MANY_CALLS_BUDGET_MS) { stoppedEarly = true; break; }
      const t = performance.now();
      const startedAt = Date.now();
      const res = await pay(`${slow.url}${ROUTE}`, { method: 'POST', body: body() });
      await res.arrayBuffer();
      if (i === 0) firstCallMs = performance.now() - t;
      else { callMs.push(performance.now() - t); callSpans.push([startedAt, Date.now()]); }
      if (res.status !== 200) throw new Error(`call ${i + 1} through the channel answered ${res.status}`);
      lastReceipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      if (lastReceipt.transaction) callsWithTransaction += 1;
      const seconds = Math.round((performance.now() - manyStarted) / 1000);
      if ((i + 1) % 200 === 0) progress(`${i + 1} calls through one channel on the 2 s chain in ${seconds} s`);
    }
    const manySeconds = (performance.now() - manyStarted) / 1000;
    const channelState = (lastReceipt?.extra as { channelState?: { chargedCumulativeAmount?: string } } | undefined)?.channelState;
    const charged = BigInt(channelState?.chargedCumulativeAmount ?? '0');
    const callsMade = callMs.length + 1;
    // The service claims what it is owed and sweeps it to the merchant as it stops.
    const stopStarted = performance.now();
    await slow.stopService();
    const stopMs = Math.round(performance.now() - stopStarted);
    // The last claim or sweep may be in the pool until the next block.
    await new Promise((resolve) => setTimeout(resolve, BLOCK_TIME_MS + 500));
    const toBlock = await rpc.getBlockNumber();
    const transactions = await countTransactions(rpc, fromBlock, toBlock, manyBuyer.address);
    const merchantGained = (await slow.evm.balanceOf(slow.evm.payTo)) - merchantBefore;
    progress(`${callsMade} calls in ${manySeconds.toFixed(1)} s (median ${summarize(callMs).median} ms); blocks ${fromBlock}..${toBlock}: `
      + `${transactions.total} transactions: ${Object.entries(transactions.byKind).map(([k, v]) => `${k} ×${v}`).join(', ')}`);

    const file = await writeResult(args, 'payment-channels', {
      method: 'The tiny paid resize of the payment benchmark (a 64x48 JPEG to 32 px), called with the standard @x402/fetch client '
        + '(the quote, signing, the paid request) against two services side by side: one on the local Base chain mining each '
        + 'transaction at once, one on '
        + `the same chain mining a block every ${BLOCK_TIME_MS / 1000} s as Base does (anvil --block-time), its facilitator polling for `
        + `receipts every ${RECEIPT_POLLING_MS} ms. exact settles a transaction per call and answers once it is in a block; a channel call `
        + `(x402's BatchSettlementEvmScheme client in x402Client) signs a cumulative voucher that the service checks and records `
        + `in its channel store (a flushed file per channel) with no chain and no facilitator, after one deposit (the first call, `
        + 'not in the table). '
        + 'The four sides alternate in each round after a warm-up; then the two channel sides alone alternate in '
        + `${channelPairs} more pairs, `
        + `which give the ratio held against the target. Then ${manyCalls.toLocaleString('en-US')} calls through one new channel on the 2 s chain `
        + `(claims every ${CLAIM_INTERVAL_S} s, sweeps every ${SETTLE_INTERVAL_S} s, instead of the defaults 60 s and 300 s, so that a `
        + `minute-long run shows claims following the clock rather than the calls), the service stopped (it claims and sweeps what it is `
        + 'owed), and every transaction in the blocks from the deposit to the end counted and decoded.',
      blockTimeMs: BLOCK_TIME_MS,
      receiptPollingMs: RECEIPT_POLLING_MS,
      claimIntervalS: CLAIM_INTERVAL_S,
      settleIntervalS: SETTLE_INTERVAL_S,
      firstCall,
      calls,
      channelCalls,
      channelRatio: channelCalls.ratio,
      channelRatioTarget: 1.2,
      exactRatio: calls.also[1]!.ms.median / calls.also[0]!.ms.median,
      channelStoreUpdateMs: storeUpdatesMs,
      channelStoreDir: 'os.tmpdir() (the dev default), on this machine an ext4 disk',
      manyCalls: {
        chain: `a block every ${BLOCK_TIME_MS / 1000} s`,
        planned: manyCalls, made: callsMade, stoppedEarly, seconds: Math.round(manySeconds * 10) / 10,
        firstCallMs: Math.round(firstCallMs), callMs: summarize(callMs), slowCalls: callMs.filter((ms) => ms > SLOW_CALL_MS).length,
        besideClaims: besideClaims(callSpans, callMs, transactions.claimAndSettleBlockTimes),
        callsWithTransaction, chargedAtomic: String(charged), merchantGainedAtomic: String(merchantGained), serviceStopMs: stopMs,
        blocks: { from: Number(fromBlock), to: Number(toBlock) },
        transactions,
      },
    }, began);
    progress(`wrote ${file}`);
  } finally {
    await slow?.stop();
    await instant.stop();
  }
}

const SLOW_CALL_MS = 500;

/**
 * Whether the slow calls gather around the claims and sweeps: the share of slow calls (and of all
 * calls) that overlap the 4 s before a block holding a claim or sweep (while it was signed, sent and
 * waited for; a block's timestamp has whole seconds).
 */
function besideClaims(spans: Array<[number, number]>, ms: number[], blockTimes: number[]) {
  const near = ([from, to]: [number, number]) => blockTimes.some((t) => from <= t * 1000 + 1000 && to >= t * 1000 - 4000);
  const slow = spans.filter((_, i) => ms[i]! > SLOW_CALL_MS);
  return {
    slowCalls: slow.length, slowNearClaims: slow.filter(near).length,
    calls: spans.length, callsNearClaims: spans.filter(near).length,
  };
}

interface TransactionCount {
  total: number;
  blocksWithTransactions: number;
  blocks: number;
  /** deposit, claim, settle, ...: the batch-settlement functions called, and other kinds of transaction. */
  byKind: Record<string, number>;
  /** Who sent them. */
  bySender: Record<string, number>;
  /** Timestamps (s) of the blocks that hold a claim or a sweep. */
  claimAndSettleBlockTimes: number[];
}

type Rpc = ReturnType<typeof createPublicClient>;

async function countTransactions(rpc: Rpc, fromBlock: bigint, toBlock: bigint, payer: string): Promise<TransactionCount> {
  const { contracts } = await ensureContractsBuilt();
  const abis: Record<string, Abi> = {
    [getAddress(BATCH_SETTLEMENT_ADDRESS)]: contracts.x402BatchSettlement!.abi as Abi,
    [getAddress(ERC3009_DEPOSIT_COLLECTOR_ADDRESS)]: contracts.ERC3009DepositCollector!.abi as Abi,
    [getAddress(BASE_USDC_ADDRESS)]: parseAbi([
      'function transfer(address,uint256)',
      'function transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)',
    ]),
  };
  const blocks = Number(toBlock - fromBlock + 1n);
  const count: TransactionCount = { total: 0, blocksWithTransactions: 0, blocks, byKind: {}, bySender: {}, claimAndSettleBlockTimes: [] };
  for (let n = fromBlock; n <= toBlock; n++) {
    const block = await rpc.getBlock({ blockNumber: n, includeTransactions: true });
    if (block.transactions.length) count.blocksWithTransactions += 1;
    for (const tx of block.transactions) {
      count.total += 1;
      const to = tx.to ? getAddress(tx.to) : undefined;
      let kind = to ? `call to ${to}` : 'contract creation';
      const abi = to ? abis[to] : undefined;
      if (abi) {
        try {
          kind = decodeFunctionData({ abi, data: tx.input as Hex }).functionName;
        } catch { kind = `unknown call to ${to}`; }
      }
      count.byKind[kind] = (count.byKind[kind] ?? 0) + 1;
      if (/^(claim|settle)/.test(kind)) count.claimAndSettleBlockTimes.push(Number(block.timestamp));
      const from = getAddress(tx.from);
      const sender = from === getAddress(ANVIL_DEV_ACCOUNT_0) ? 'facilitator' : from === getAddress(payer) ? 'payer' : from;
      count.bySender[sender] = (count.bySender[sender] ?? 0) + 1;
    }
  }
  return count;
}

await main();

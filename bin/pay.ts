// A paying client for any endpoint, built on the standard @x402/fetch client.
//   PAYER_KEY=0x… node dist/bin/pay.js URL file=@in.jpg width=800 --out out.jpg
//   SVM_PAYER_KEY=… SVM_RPC_URL=… node dist/bin/pay.js --chain solana URL file=@doc.pdf --out out.json
// Fields are name=value; name=@path uploads a file (repeat file=@… for the merge endpoints);
// file_url=https://… gives the service a URL to fetch instead of uploading.
//   PAYER_KEY=0x… node dist/bin/pay.js URL file_url=https://…/doc.pdf --delivery link
// --delivery link answers a one-time link (downloaded into --out when given); --deliver-to URL
// has the service PUT the result there.
// --deposit USD pays through a payment channel on Base (x402 batch-settlement): the first call
// deposits that much, later runs sign a voucher per call (no transaction) from the channel state
// kept in PAYDOC_CHANNELS_DIR (~/.paydoc/channels), topping up by the same deposit when it runs short.
//   PAYER_KEY=0x… EVM_RPC_URL=… node dist/bin/pay.js --deposit 1 URL file=@in.jpg width=800 --out out.jpg
//   PAYER_KEY=0x… EVM_RPC_URL=… node dist/bin/pay.js --refund URL     (the rest of the channel back)
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentResponseHeader, decodePaymentRequiredHeader } from '@x402/core/http';
import type { SettleResponse } from '@x402/core/types';
import { FileClientChannelStorage } from '@x402/evm/batch-settlement/client/file-storage';
import { channelOptions, channelScheme, createPayer, type ChannelOptions, type PayChain } from '../client/payer.js';
import { fromUsd, toUsd } from '../core/usd.js';
import { CHANNEL_REFUND_PATH } from '../core/protocol.js';

const usdOf = (atomic: bigint | string) => `${atomic} atomic USDC (${toUsd(BigInt(atomic))} USD)`;

/** What the local channel file says is left in the channel: its balance less what was charged. */
async function channelLeft(channel: ChannelOptions, channelId: string): Promise<string> {
  const state = await new FileClientChannelStorage({ directory: channel.directory }).get(channelId.toLowerCase());
  if (!state?.balance) return '';
  return `; ${toUsd(BigInt(state.balance) - BigInt(state.chargedCumulativeAmount ?? '0'))} USD left in the channel`;
}

/** Asks the service for the rest of this payer's channel back and says what came back. */
async function refund(url: string, channel: ChannelOptions): Promise<void> {
  const key = process.env.PAYER_KEY;
  if (!key) usage('--refund needs PAYER_KEY, the key that opened the channel');
  const target = `${new URL(url).origin}${CHANNEL_REFUND_PATH}`;
  const scheme = channelScheme(key, channel);
  const receipt: SettleResponse = await scheme.refund(target);
  if (!receipt.success) { console.error(`pay: the refund was refused: ${receipt.errorReason ?? 'no reason given'}`); process.exit(1); }
  const state = (receipt.extra as { channelState?: { channelId?: string } } | undefined)?.channelState;
  const amount = receipt.amount ? usdOf(receipt.amount) : 'the rest';
  console.error(`refunded ${amount} from channel ${state?.channelId ?? ''} on ${receipt.network}; transaction ${receipt.transaction}`);
}

function usage(message?: string): never {
  if (message) console.error(`pay: ${message}`);
  console.error('usage: pay [--chain base|solana] [--out FILE] [--quote] [--max-usd N] [--deposit USD] [--delivery inline|link]');
  console.error('           [--deliver-to URL] URL name=value name=@file file_url=URL ...');
  console.error('       pay --refund URL');
  console.error('  --max-usd N    the most this call may cost in USD (default 1, the x402 client\'s own cap)');
  console.error('  --deposit USD  pay through a payment channel on Base: deposit USD once (again when it runs short),');
  console.error('                 then a voucher per call');
  console.error('  --refund       ask the service at URL for the rest of your channel back');
  console.error('  channel state: PAYDOC_CHANNELS_DIR (default ~/.paydoc/channels); Base RPC: EVM_RPC_URL (default Base\'s public RPC)');
  process.exit(2);
}

async function main() {
  const args = process.argv.slice(2);
  let chain: PayChain = 'base';
  let out: string | undefined;
  let quoteOnly = false;
  let maxUsd: string | undefined;
  let delivery: string | undefined;
  let deposit: bigint | undefined;
  let refunding = false;
  let url: string | undefined;
  const form = new FormData();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--chain') { const c = args[++i]; if (c !== 'base' && c !== 'solana') usage('--chain is base or solana'); chain = c; continue; }
    if (arg === '--out') { out = args[++i]; continue; }
    if (arg === '--delivery') { delivery = args[++i]; if (delivery !== 'inline' && delivery !== 'link') usage('--delivery is inline or link'); form.append('delivery', delivery); continue; }
    if (arg === '--deliver-to') { const to = args[++i]; if (!to) usage('--deliver-to needs the URL the result is PUT to'); form.append('deliver_to', to); continue; }
    if (arg === '--quote') { quoteOnly = true; continue; }
    if (arg === '--max-usd') { maxUsd = args[++i]; if (!maxUsd || !/^\d+(\.\d+)?$/.test(maxUsd)) usage('--max-usd is a number of US dollars, such as 5 or 2.50'); continue; }
    if (arg === '--deposit') {
      deposit = fromUsd(args[++i] ?? '');
      if (!deposit) usage('--deposit is the US dollars each deposit puts in the channel, such as 1 or 0.50');
      continue;
    }
    if (arg === '--refund') { refunding = true; continue; }
    if (arg === '--help' || arg === '-h') usage();
    const eq = arg.indexOf('=');
    if (eq < 0) { if (url) usage(`unexpected argument ${arg}`); url = arg; continue; }
    const name = arg.slice(0, eq);
    const value = arg.slice(eq + 1);
    if (value.startsWith('@')) {
      const file = value.slice(1);
      form.append(name, new Blob([await readFile(file)]), path.basename(file));
    } else {
      form.append(name, value);
    }
  }
  if (!url) usage('the endpoint URL is missing');
  if ((deposit !== undefined || refunding) && chain === 'solana') {
    usage(`${refunding ? '--refund' : '--deposit'}: payment channels (x402 batch-settlement) are offered on Base only; `
      + '@x402/svm has no batch-settlement scheme, so Solana pays each call with exact');
  }
  if (deposit !== undefined && refunding) usage('--refund takes no --deposit: it returns what is left in the channel');
  const channel: ChannelOptions | undefined = deposit !== undefined || refunding ? channelOptions(deposit ?? 0n) : undefined;
  if (refunding) return refund(url, channel!);

  if (quoteOnly) {
    const res = await fetch(url, { method: 'POST', body: form });
    const header = res.headers.get('payment-required');
    if (res.status !== 402 || !header) { console.error(`pay: expected a 402 quote, got ${res.status}: ${await res.text()}`); process.exit(1); }
    for (const offer of decodePaymentRequiredHeader(header).accepts) {
      const scheme = offer.scheme === 'exact' ? '' : ` (${offer.scheme})`;
      console.log(`${offer.network}${scheme}: ${offer.amount} atomic USDC (${toUsd(BigInt(offer.amount))} USD) to ${offer.payTo}`);
    }
    return;
  }

  const payer = await createPayer({
    chain, evmKey: process.env.PAYER_KEY, svmKey: process.env.SVM_PAYER_KEY, svmRpcUrl: process.env.SVM_RPC_URL,
    ...(maxUsd ? { maxUsd } : {}), ...(channel ? { channel } : {}),
  });
  // The receipt need not carry the amount; the signed payload always does (and a channel's deposit).
  let paidAmount: string | undefined;
  let deposited: string | undefined;
  payer.onAfterPaymentCreation(async (ctx) => {
    paidAmount = ctx.paymentPayload.accepted.amount;
    deposited = (ctx.paymentPayload.payload as { deposit?: { amount?: string } }).deposit?.amount;
  });
  const payFetch = wrapFetchWithPayment(fetch, payer);
  const res = await payFetch(url, { method: 'POST', body: form });
  const receiptHeader = res.headers.get('payment-response');
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) {
    const reason = res.headers.get('payment-required') ? decodePaymentRequiredHeader(res.headers.get('payment-required')!).error : undefined;
    console.error(`pay: ${res.status} ${reason ?? body.toString('utf8').slice(0, 2000)}`);
    process.exit(1);
  }
  const link = delivery === 'link' ? (JSON.parse(body.toString('utf8')) as { result: { url: string; bytes: number } }).result : undefined;
  if (link && out) {
    // The link gives the bytes once: fetched straight into the file.
    const download = await fetch(link.url);
    if (download.status !== 200) { console.error(`pay: the result link answered ${download.status}: ${await download.text()}`); process.exit(1); }
    await writeFile(out, Buffer.from(await download.arrayBuffer()));
  } else if (out) await writeFile(out, body);
  else process.stdout.write(body);
  if (receiptHeader) {
    const receipt = decodePaymentResponseHeader(receiptHeader);
    const atomic = receipt.amount ?? paidAmount;
    const amount = atomic ? `${atomic} atomic USDC (${toUsd(BigInt(atomic))} USD)` : 'the quoted price';
    const wrote = out ? `; wrote ${link ? link.bytes : body.length} bytes to ${out}` : '';
    const extra = receipt.extra as { chargedAmount?: string; channelState?: { channelId?: string } } | undefined;
    const channelId = extra?.channelState?.channelId;
    if (channel && channelId) {
      // A channel's receipt carries the deposit as its amount; the charge is chargedAmount (at most the voucher's price).
      const charged = extra?.chargedAmount ?? paidAmount;
      const amount = charged ? usdOf(charged) : 'the quoted price';
      const how = deposited ? `deposited ${toUsd(BigInt(deposited))} USD in transaction ${receipt.transaction}` : 'a voucher, no transaction';
      const left = await channelLeft(channel, channelId);
      console.error(`paid ${amount} through channel ${channelId} on ${receipt.network}; ${how}${left}${wrote}`);
    } else {
      console.error(`paid ${amount} on ${receipt.network}; transaction ${receipt.transaction}${wrote}`);
    }
  }
}

main().catch((err) => {
  // @x402/fetch wraps what the scheme threw.
  const message = (err instanceof Error ? err.message : String(err)).replace(/^Failed to create payment payload: /, '');
  if (message.includes('No network/scheme registered')) {
    const what = process.argv.includes('--deposit') ? 'no payment channel (batch-settlement) on Base' : 'no payment this client makes';
    console.error(`pay: the service offers ${what}; nothing was paid`);
    process.exit(1);
  }
  // The x402 client refuses to sign above its spend cap; say which flag raises it.
  if (message.includes('maxAmountPerPayment')) {
    console.error('pay: the quoted price is above the most this call may cost (--max-usd, 1 USD unless given); nothing was paid');
    process.exit(1);
  }
  console.error('pay:', message);
  process.exit(1);
});

// A paying client for any endpoint, built on the standard @x402/fetch client.
//   PAYER_KEY=0x… node dist/bin/pay.js URL file=@in.jpg width=800 --out out.jpg
//   SVM_PAYER_KEY=… SVM_RPC_URL=… node dist/bin/pay.js --chain solana URL file=@doc.pdf --out out.json
// Fields are name=value; name=@path uploads a file (repeat file=@… for the merge endpoints);
// file_url=https://… gives the service a URL to fetch instead of uploading.
//   PAYER_KEY=0x… node dist/bin/pay.js URL file_url=https://…/doc.pdf --delivery link
// --delivery link answers a one-time link (downloaded into --out when given); --deliver-to URL
// has the service PUT the result there.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentResponseHeader, decodePaymentRequiredHeader } from '@x402/core/http';
import { createPayer, type PayChain } from '../client/payer.js';
import { toUsd } from '../client/usd.js';

function usage(message?: string): never {
  if (message) console.error(`pay: ${message}`);
  console.error('usage: pay [--chain base|solana] [--out FILE] [--quote] [--max-usd N] [--delivery inline|link] [--deliver-to URL] URL name=value name=@file file_url=URL ...');
  console.error('  --max-usd N  the most this call may cost in USD (default 1, the x402 client\'s own cap)');
  process.exit(2);
}

async function main() {
  const args = process.argv.slice(2);
  let chain: PayChain = 'base';
  let out: string | undefined;
  let quoteOnly = false;
  let maxUsd: string | undefined;
  let delivery: string | undefined;
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

  if (quoteOnly) {
    const res = await fetch(url, { method: 'POST', body: form });
    const header = res.headers.get('payment-required');
    if (res.status !== 402 || !header) { console.error(`pay: expected a 402 quote, got ${res.status}: ${await res.text()}`); process.exit(1); }
    for (const offer of decodePaymentRequiredHeader(header).accepts) console.log(`${offer.network}: ${offer.amount} atomic USDC (${toUsd(BigInt(offer.amount))} USD) to ${offer.payTo}`);
    return;
  }

  const payer = await createPayer({ chain, evmKey: process.env.PAYER_KEY, svmKey: process.env.SVM_PAYER_KEY, svmRpcUrl: process.env.SVM_RPC_URL, ...(maxUsd ? { maxUsd } : {}) });
  // The receipt need not carry the amount; the signed payload always does.
  let paidAmount: string | undefined;
  payer.onAfterPaymentCreation(async (ctx) => { paidAmount = ctx.paymentPayload.accepted.amount; });
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
    const wrote = link ? link.bytes : body.length;
    console.error(`paid ${amount} on ${receipt.network}; transaction ${receipt.transaction}${out ? `; wrote ${wrote} bytes to ${out}` : ''}`);
  }
}

main().catch((err) => {
  const message = err instanceof Error ? err.message : String(err);
  // The x402 client refuses to sign above its spend cap; say which flag raises it.
  if (message.includes('maxAmountPerPayment')) {
    console.error('pay: the quoted price is above the most this call may cost (--max-usd, 1 USD unless given); nothing was paid');
    process.exit(1);
  }
  console.error('pay:', message);
  process.exit(1);
});

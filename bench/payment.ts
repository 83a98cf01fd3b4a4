// The cost of the payment path itself, on a trivial input (a 64x48 JPEG resized to 32 px):
//   1. the 402 quote alone, next to a free GET /v1/health (the HTTP floor);
//   2. a whole paid call next to the quote, with verify and settle timed inside the gate;
//   3. the facilitator's verify and settle called directly with HTTPFacilitatorClient.
// Base (anvil) always; Solana (the local litesvm rig) too when it starts.
//   node dist/bench/payment.js [--quick]  -> bench/results/payment.json
import sharp from 'sharp';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { createPayer, type PayChain } from '../client/payer.js';
import { parseStepArgs, progress, start, writeResult } from './lib/common.js';
import { form, startBenchService, type BenchService } from './lib/service.js';
import { compare, type Comparison } from './lib/side-by-side.js';
import { summarize, type Summary } from './lib/stats.js';

const ROUTE = '/v1/image/resize';

async function main(): Promise<void> {
  const args = parseStepArgs();
  const began = start();
  const runs = args.quick ? { quote: 10, paid: 5, direct: 5 } : { quote: 30, paid: 15, direct: 15 };
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
  const body = () => form([{ bytes: jpeg, name: 'tiny.jpg', type: 'image/jpeg' }], { width: 32 });

  let bench: BenchService;
  let solanaNote: string | undefined;
  try {
    bench = await startBenchService({ solana: true });
  } catch (err) {
    solanaNote = `the local Solana rig did not start (${err instanceof Error ? err.message.slice(0, 200) : String(err)}); Base only`;
    bench = await startBenchService();
  }
  const chains: PayChain[] = bench.svm ? ['base', 'solana'] : ['base'];
  const quoteCall = async (): Promise<PaymentRequired> => {
    const res = await fetch(`${bench.url}${ROUTE}`, { method: 'POST', body: body() });
    await res.arrayBuffer();
    if (res.status !== 402) throw new Error(`the quote answered ${res.status}`);
    return decodePaymentRequiredHeader(res.headers.get('payment-required')!);
  };

  const comparisons: Comparison[] = [];
  const direct: Record<string, { verify: Summary; settle: Summary }> = {};
  try {
    const quote = await compare('402 quote vs free health check', {
      label: '402 quote (upload, checks, price, 402)', run: async () => { await quoteCall(); },
    }, {
      label: 'GET /v1/health', run: async () => { const res = await fetch(`${bench.url}/v1/health`); await res.arrayBuffer(); },
    }, { warmup: 2, runs: runs.quote });
    comparisons.push(quote);
    progress(`quote ${quote.a.ms.median} ms (p95 ${quote.a.ms.p95}), health ${quote.b.ms.median} ms`);

    for (const chain of chains) {
      const paid = await compare(`paid call (${chain}) vs quote`, {
        label: `paid call on ${chain === 'base' ? 'Base (anvil)' : 'Solana (litesvm)'}`,
        run: async () => {
          const r = await bench.paidCall(ROUTE, body, chain);
          return { quoteMs: r.quoteMs, signMs: r.signMs, paidMs: r.paidMs, verifyMs: r.verifyMs, settleMs: r.settleMs, workMs: r.workMs };
        },
      }, { label: '402 quote', run: async () => { await quoteCall(); } }, { warmup: 1, runs: runs.paid });
      comparisons.push(paid);
      const p = paid.a.parts;
      progress(`${chain}: paid call ${paid.a.ms.median} ms = quote ${p.quoteMs!.median} + sign ${p.signMs!.median} + paid request ${p.paidMs!.median} (verify ${p.verifyMs!.median}, work ${p.workMs!.median}, settle ${p.settleMs!.median})`);

      // The facilitator alone, as the gate calls it: a fresh signature for every verify/settle pair.
      const facilitatorUrl = chain === 'base' ? bench.evm.facilitatorUrl : bench.svm!.facilitatorUrl;
      const facilitator = new HTTPFacilitatorClient({ url: facilitatorUrl });
      const payer = chain === 'base'
        ? await createPayer({ chain, evmKey: bench.evm.payerKey })
        : await createPayer({ chain, svmKey: bench.svm!.payerSecretKey, svmRpcUrl: bench.svm!.rpcUrl });
      const verifyMs: number[] = [];
      const settleMs: number[] = [];
      for (let i = 0; i < runs.direct + 1; i++) {
        const required = await quoteCall();
        const prefix = chain === 'base' ? 'eip155:' : 'solana:';
        const accepts = required.accepts.filter((a) => a.network.startsWith(prefix));
        const payload = await payer.createPaymentPayload({ ...required, accepts });
        const requirement = accepts[0]!;
        let t = performance.now();
        const verified = await facilitator.verify(payload, requirement);
        const v = performance.now() - t;
        if (!verified.isValid) throw new Error(`${chain}: the facilitator refused the payment: ${verified.invalidReason}`);
        t = performance.now();
        const settled = await facilitator.settle(payload, requirement);
        const s = performance.now() - t;
        if (!settled.success) throw new Error(`${chain}: settlement failed: ${settled.errorReason}`);
        if (i > 0) { verifyMs.push(v); settleMs.push(s); } // the first pair is the warm-up
      }
      direct[chain] = { verify: summarize(verifyMs), settle: summarize(settleMs) };
      progress(`${chain}: facilitator verify ${direct[chain]!.verify.median} ms, settle ${direct[chain]!.settle.median} ms (direct HTTP calls)`);
    }
  } finally {
    await bench.stop();
  }
  const file = await writeResult(args, 'payment', {
    method: 'A 64x48 JPEG resized to 32 px, so the work is negligible and the payment path shows. The quote is the unpaid POST '
      + '(multipart upload, field and image checks, pricing, 402 with the PAYMENT-REQUIRED header). A paid call is what the standard '
      + '@x402/fetch client does: the quote, signing, then the paid request; verify and settle are timed inside the gate around the '
      + 'facilitator calls. The direct rows call the local facilitator over HTTP with HTTPFacilitatorClient. Base settles on anvil '
      + '(instant mining), Solana on litesvm: a public chain adds its own confirmation time to settle.',
    ...(solanaNote ? { solanaNote } : {}),
    comparisons,
    facilitatorDirect: direct,
  }, began);
  progress(`wrote ${file}`);
}

await main();

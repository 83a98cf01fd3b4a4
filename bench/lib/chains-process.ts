// The local Base and Solana chains with their x402 facilitators, in a process of their own (the
// chaos benchmark forks it), each facilitator behind a small HTTP proxy that can be told to slow
// its settlements. The proxy is what the replicas are configured with as their facilitator URL,
// so it sees every verify and settle the service sends and every answer the facilitator gives,
// including answers nobody was waiting for any more (the replica had timed out): that log is the
// facilitator's side of the reconciliation.
//   parent -> { kind: 'slow', minMs, maxMs } | { kind: 'fast' } | { kind: 'log' } | { kind: 'balances' } | { kind: 'stop' }
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PaymentPayload } from '@x402/core/types';
import { startEvmRig, startSvmRig } from '../../devchains/index.js';
import { paymentId } from '../../server/payment/guard.js';

interface ChainEndpoints {
  network: string; rpcUrl: string; facilitatorUrl: string; proxyUrl: string; asset: string; payTo: string; payerAddress: string;
}

export interface ChainsReady {
  kind: 'ready';
  evm: ChainEndpoints & { payerKey: string };
  svm: ChainEndpoints & { payerSecretKey: string };
}

/** One settle the proxy passed on: what the facilitator answered, and whether the replica was still there to hear it. */
export interface SettleRecord {
  network: string;
  /** The payment's id as the service's guard names it (network:payer:nonce on Base, network:message-hash on Solana). */
  id: string;
  amount: string;
  /** When the proxy received the request and sent its answer (ms since the epoch). */
  receivedAt: number;
  answeredAt: number;
  /** Delay the proxy added (half before passing the request on, half before answering). */
  delayMs: number;
  httpStatus: number;
  success: boolean;
  transaction: string;
  errorReason?: string;
  /** False when the replica had closed the connection before the answer came (its own timeout). */
  heard: boolean;
}

export interface VerifyRecord { network: string; id: string; isValid: boolean; invalidReason?: string; at: number }

export interface ChainBalances { evm: { payer: string; payTo: string }; svm: { payer: string; payTo: string } }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const slow = { on: false, minMs: 0, maxMs: 0 };
const settles: SettleRecord[] = [];
const verifies: VerifyRecord[] = [];
let inFlight = 0;

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function idOf(body: Buffer): { id: string; network: string; amount: string } {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { paymentPayload: PaymentPayload; paymentRequirements: { network: string; amount: string } };
    return { id: paymentId(parsed.paymentPayload) ?? '?', network: parsed.paymentRequirements.network, amount: parsed.paymentRequirements.amount };
  } catch {
    return { id: '?', network: '?', amount: '0' };
  }
}

async function startProxy(target: string): Promise<{ url: string; stop(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    inFlight += 1;
    try {
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const path = (req.url ?? '/').split('?')[0];
      const isSettle = path === '/settle';
      // The replica's own timeout shows as its connection closing before the answer is written.
      let heard = true;
      res.on('close', () => { if (!res.writableFinished) heard = false; });
      const delayMs = isSettle && slow.on ? Math.round(slow.minMs + Math.random() * (slow.maxMs - slow.minMs)) : 0;
      const receivedAt = Date.now();
      if (delayMs) await sleep(delayMs / 2);
      // The facilitator finishes what it was asked even when the replica has given up, as a remote one would.
      const upstream = await fetch(`${target}${req.url ?? '/'}`, {
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        ...(body ? { body: new Uint8Array(body) } : {}),
      });
      const answer = Buffer.from(await upstream.arrayBuffer());
      if (delayMs) await sleep(delayMs / 2);
      if (body && (isSettle || path === '/verify')) {
        const { id, network, amount } = idOf(body);
        let parsed: Record<string, unknown> = {};
        try { parsed = JSON.parse(answer.toString('utf8')) as Record<string, unknown>; } catch { /* not JSON: recorded by its status */ }
        if (isSettle) {
          settles.push({
            network, id, amount, receivedAt, answeredAt: Date.now(), delayMs, httpStatus: upstream.status,
            success: parsed.success === true, transaction: String(parsed.transaction ?? ''),
            ...(parsed.errorReason ? { errorReason: String(parsed.errorReason) } : {}),
            heard: heard && !res.destroyed,
          });
        } else {
          const reason = parsed.invalidReason ? { invalidReason: String(parsed.invalidReason) } : {};
          verifies.push({ network, id, isValid: parsed.isValid === true, ...reason, at: Date.now() });
        }
      }
      if (!res.destroyed) {
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(answer);
      }
    } catch (err) {
      if (!res.headersSent && !res.destroyed) { res.writeHead(502, { 'content-type': 'application/json' }); res.end(JSON.stringify({ error: (err as Error).message })); }
    } finally {
      inFlight -= 1;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const [evm, svm] = await Promise.all([startEvmRig({ payerBalance: 5_000_000_000n }), startSvmRig({ payerBalance: 5_000_000_000n })]);
const [evmProxy, svmProxy] = await Promise.all([startProxy(evm.facilitatorUrl), startProxy(svm.facilitatorUrl)]);

const ready: ChainsReady = {
  kind: 'ready',
  evm: {
    network: evm.network, rpcUrl: evm.rpcUrl, facilitatorUrl: evm.facilitatorUrl, proxyUrl: evmProxy.url,
    asset: evm.asset, payTo: evm.payTo, payerKey: evm.payerKey, payerAddress: evm.payerAddress,
  },
  svm: {
    network: svm.network, rpcUrl: svm.rpcUrl, facilitatorUrl: svm.facilitatorUrl, proxyUrl: svmProxy.url,
    asset: svm.asset, payTo: svm.payTo, payerSecretKey: svm.payerSecretKey, payerAddress: svm.payerAddress,
  },
};
process.send!(ready);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await Promise.allSettled([evmProxy.stop(), svmProxy.stop()]);
  await Promise.allSettled([evm.stop(), svm.stop()]);
  process.exit(0);
};

process.on('message', async (message: { kind: string; minMs?: number; maxMs?: number }) => {
  switch (message.kind) {
    case 'slow':
      Object.assign(slow, { on: true, minMs: message.minMs ?? 0, maxMs: message.maxMs ?? 0 });
      process.send!({ kind: 'slow' });
      break;
    case 'fast':
      slow.on = false;
      process.send!({ kind: 'fast' });
      break;
    case 'log': {
      // Settlements still being answered are waited for (bounded), so the log is complete.
      for (let i = 0; i < 600 && inFlight > 0; i++) await sleep(100);
      process.send!({ kind: 'log', settles, verifies, inFlight });
      break;
    }
    case 'balances': {
      const balances: ChainBalances = {
        evm: { payer: String(await evm.balanceOf(evm.payerAddress)), payTo: String(await evm.balanceOf(evm.payTo)) },
        svm: { payer: String(await svm.balanceOf(svm.payerAddress)), payTo: String(await svm.balanceOf(svm.payTo)) },
      };
      process.send!({ kind: 'balances', balances });
      break;
    }
    case 'stop':
      await stop();
      break;
  }
});
process.on('disconnect', () => void stop());
process.on('SIGTERM', () => void stop());

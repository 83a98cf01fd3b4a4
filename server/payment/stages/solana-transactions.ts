// Stage 6, on the retry of a Solana result held after an unknown settlement: whether the first
// settlement landed. The facilitator's verification proves it only while the transaction's
// blockhash lives (about a minute); past that, simulating it again fails with BlockhashNotFound
// and proves nothing. The chain keeps the record: the payer's recent transactions, one of which
// carries this payment's message if the transfer happened. Only a transfer to this service's
// address can carry that message (it is what the payer signed), so found means charged.
import { createRpcClient, decodeTransactionFromPayload, getTokenPayerFromTransaction, type ExactSvmPayloadV1 } from '@x402/svm';
import type { Network } from '@x402/core/types';
import { solanaPaymentId, transactionMessageBytes } from '../svm-payment-id.js';
import type { AuthorizationReader, AuthorizationState } from './authorization.js';
import type { Payment } from './payload.js';
import { createHash } from 'node:crypto';

// How far back the payer's transactions are read. A held result lives 5 minutes; a payer making
// more transfers than this in that time is answered "unknown" and its result stays held.
const RECENT_SIGNATURES = 100;
const RPC_TIMEOUT_MS = 10_000;

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the Solana RPC did not answer in time')), RPC_TIMEOUT_MS).unref())]);
}

/**
 * Finds a Solana payment's transaction among its payer's recent ones, over each network's RPC
 * (network → URL; none: the network's public RPC, as x402's own client picks it).
 */
export class SolanaTransactionReader implements AuthorizationReader {
  private readonly clients = new Map<string, ReturnType<typeof createRpcClient>>();

  constructor(rpcUrls: ReadonlyMap<string, string | undefined>) {
    for (const [network, url] of rpcUrls) {
      // A network x402 has no RPC for, and none is set: its payments are not read (they stay held).
      try {
        this.clients.set(network, createRpcClient(network as Network, url));
      } catch {
        continue;
      }
    }
  }

  /** 'used' when the payment's transaction landed; undefined when it was not found (it may still land, or never). */
  async stateOf(payment: Payment): Promise<AuthorizationState | undefined> {
    const rpc = this.clients.get(payment.matched.network);
    const id = solanaPaymentId(payment.payload);
    if (!rpc || !id) return undefined;
    const payer = getTokenPayerFromTransaction(decodeTransactionFromPayload(payment.payload.payload as unknown as ExactSvmPayloadV1));
    if (!payer) return undefined;
    const recent = await withTimeout(rpc.getSignaturesForAddress(payer as Parameters<typeof rpc.getSignaturesForAddress>[0], { limit: RECENT_SIGNATURES, commitment: 'confirmed' }).send());
    for (const entry of recent) {
      if (entry.err !== null) continue;
      const landed = await withTimeout(rpc.getTransaction(entry.signature, { encoding: 'base64', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).send());
      const message = landed ? transactionMessageBytes(Buffer.from(landed.transaction[0], 'base64')) : undefined;
      if (message && createHash('sha256').update(message).digest('base64') === id) return 'used';
    }
    return undefined;
  }
}

// "One payment buys one result": a payment's unique id (the EIP-3009 nonce, the Solana
// transaction signature) is claimed before any work starts and kept once settled. A claim is
// released when the work fails, so the unspent authorization can be retried honestly.
import type { PaymentPayload } from '@x402/core/types';
import { solanaPaymentId } from './svm-payment-id.js';

export interface PaymentGuard {
  /** True when the id was free and is now held for ttlSeconds; false when someone holds it. */
  claim(id: string, ttlSeconds: number): Promise<boolean>;
  release(id: string): Promise<void>;
  close(): Promise<void>;
}

/** The default for a single instance. Redis backs the same interface across replicas. */
export class MemoryGuard implements PaymentGuard {
  private readonly held = new Map<string, number>();

  async claim(id: string, ttlSeconds: number): Promise<boolean> {
    const now = Date.now();
    const until = this.held.get(id);
    if (until !== undefined && until > now) return false;
    this.held.set(id, now + ttlSeconds * 1000);
    if (this.held.size > 10_000) this.sweep(now);
    return true;
  }

  async release(id: string): Promise<void> {
    this.held.delete(id);
  }

  async close(): Promise<void> {
    this.held.clear();
  }

  private sweep(now: number) {
    for (const [id, until] of this.held) if (until <= now) this.held.delete(id);
  }
}

/** The payment's unique id on its chain, namespaced by network; undefined if the payload has none. */
export function paymentId(payload: PaymentPayload): string | undefined {
  const network = payload.accepted?.network ?? '';
  const inner = payload.payload as Record<string, unknown> | undefined;
  if (network.startsWith('eip155:')) {
    const auth = inner?.authorization as { nonce?: unknown; from?: unknown } | undefined;
    return typeof auth?.nonce === 'string' ? `${network}:${String(auth.from).toLowerCase()}:${auth.nonce.toLowerCase()}` : undefined;
  }
  if (network.startsWith('solana:')) {
    const sig = solanaPaymentId(payload);
    return sig ? `${network}:${sig}` : undefined;
  }
  return undefined;
}

// "One payment buys one result": a payment's unique id (the EIP-3009 nonce, the Solana
// transaction signature, a channel's voucher) is claimed before any work starts and kept once settled. A claim is
// released when the work fails, so the unspent authorization can be retried honestly. What
// became of a claimed payment (its result held for a retry, or delivered) is recorded on the
// claim, so every replica answers a retry of it the same way.
import type { PaymentPayload } from '@x402/core/types';
import { solanaPaymentId } from './svm-payment-id.js';
import { channelPayloadType, channelVoucherId } from './channels/payloads.js';

export interface PaymentGuard {
  /** True when the id was free and now holds `value` (CLAIMED unless said) for ttlSeconds; false when something is recorded under it. */
  claim(id: string, ttlSeconds: number, value?: string): Promise<boolean>;
  /** Replaces what is recorded under the id (a claim's state, or any small value), for ttlSeconds. */
  record(id: string, value: string, ttlSeconds: number): Promise<void>;
  /** What is recorded under the id: CLAIMED for a bare claim; undefined when nothing is. */
  lookup(id: string): Promise<string | undefined>;
  release(id: string): Promise<void>;
  /**
   * Calls `listener` each time a shared store is reached again after a loss of connection (it may
   * have restarted empty, forgetting what was recorded); a store that never forgets never calls it.
   */
  onReconnect(listener: () => void): void;
  close(): Promise<void>;
}

/** The default for a single instance. Redis backs the same interface across replicas. */
export const CLAIMED = 'claimed';

export class MemoryGuard implements PaymentGuard {
  private readonly held = new Map<string, { value: string; until: number }>();

  // Check and set without an await between them, so claims made at once cannot both win.
  async claim(id: string, ttlSeconds: number, value = CLAIMED): Promise<boolean> {
    if (this.valueOf(id) !== undefined) return false;
    this.set(id, value, ttlSeconds);
    return true;
  }

  async record(id: string, value: string, ttlSeconds: number): Promise<void> {
    this.set(id, value, ttlSeconds);
  }

  async lookup(id: string): Promise<string | undefined> {
    return this.valueOf(id);
  }

  async release(id: string): Promise<void> {
    this.held.delete(id);
  }

  // This process's own memory: it forgets nothing while the process lives.
  onReconnect(): void {}

  async close(): Promise<void> {
    this.held.clear();
  }

  private valueOf(id: string): string | undefined {
    const entry = this.held.get(id);
    return entry !== undefined && entry.until > Date.now() ? entry.value : undefined;
  }

  private set(id: string, value: string, ttlSeconds: number): void {
    const now = Date.now();
    this.held.set(id, { value, until: now + ttlSeconds * 1000 });
    if (this.held.size > 10_000) this.sweep(now);
  }

  private sweep(now: number) {
    for (const [id, entry] of this.held) if (entry.until <= now) this.held.delete(id);
  }
}

/** The payment's unique id on its chain, namespaced by network; undefined if the payload has none. */
export function paymentId(payload: PaymentPayload): string | undefined {
  const network = payload.accepted?.network ?? '';
  const inner = payload.payload as Record<string, unknown> | undefined;
  if (channelPayloadType(payload)) return channelVoucherId(payload);
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

// Results that were paid for (or may have been) but not yet received, kept in this process's
// memory only, so that the identical retry of the same payment gets them without a second
// charge. Bounded in bytes, in count and in time; never written to disk, never logged. Once a
// result has been sent it is dropped and only the fact that it was delivered is remembered, so
// that a later retry is told so instead of being asked to pay again.
import type { SettleResponse } from '@x402/core/types';

/** Anything held: a result ready to be sent, and how much memory it keeps. */
export interface Holdable {
  heldBytes: number;
}

export interface HeldResult<R extends Holdable = Holdable> {
  /** Digest of the payment payload that bought it: the same key with another payload is a conflict. */
  payloadDigest: string;
  result: R;
  /** 'unknown' while the facilitator has not said whether the transfer happened. */
  settlement: 'unknown' | 'settled';
  receipt?: SettleResponse;
  expiresAt: number;
}

export interface HeldResultLimits {
  maxBytes: number;
  maxCount: number;
  ttlMs: number;
  /** How long a delivery is remembered (as long as a payment could be replayed). */
  deliveredTtlMs: number;
}

// Plenty for the few results whose answer was lost at any one time; a memory bound all the same.
export const HELD_RESULT_LIMITS: HeldResultLimits = {
  maxBytes: 512 * 1024 * 1024, maxCount: 256, ttlMs: 5 * 60_000, deliveredTtlMs: 10 * 60_000,
};
const MAX_DELIVERED_REMEMBERED = 100_000;

export class HeldResults<R extends Holdable = Holdable> {
  private readonly held = new Map<string, HeldResult<R>>();
  private readonly delivered = new Map<string, { payloadDigest: string; expiresAt: number }>();
  private bytes = 0;

  constructor(private readonly limits: HeldResultLimits = HELD_RESULT_LIMITS) {}

  get(key: string): HeldResult<R> | undefined {
    this.sweep(Date.now());
    return this.held.get(key);
  }

  /**
   * Holds a result; false when it does not fit within the bounds. Nothing held is ever pushed out
   * to make room (each is a result someone may have paid for): a result that does not fit is not held.
   */
  hold(key: string, entry: Omit<HeldResult<R>, 'expiresAt'>): boolean {
    const now = Date.now();
    this.sweep(now);
    this.drop(key);
    const size = entry.result.heldBytes;
    if (this.bytes + size > this.limits.maxBytes || this.held.size >= this.limits.maxCount) return false;
    this.held.set(key, { ...entry, expiresAt: now + this.limits.ttlMs });
    this.bytes += size;
    return true;
  }

  /** The result was sent: it is dropped, and its delivery remembered. */
  markDelivered(key: string, payloadDigest: string): void {
    this.drop(key);
    const now = Date.now();
    this.delivered.set(key, { payloadDigest, expiresAt: now + this.limits.deliveredTtlMs });
    if (this.delivered.size > MAX_DELIVERED_REMEMBERED) {
      for (const [k, v] of this.delivered) {
        if (v.expiresAt <= now || this.delivered.size > MAX_DELIVERED_REMEMBERED) this.delivered.delete(k);
      }
    }
  }

  /** The delivery of a result bought under this key, if it is remembered. */
  deliveredUnder(key: string): { payloadDigest: string } | undefined {
    const entry = this.delivered.get(key);
    if (entry && entry.expiresAt <= Date.now()) { this.delivered.delete(key); return undefined; }
    return entry;
  }

  drop(key: string): void {
    const entry = this.held.get(key);
    if (!entry) return;
    this.held.delete(key);
    this.bytes -= entry.result.heldBytes;
  }

  /** Each result held now, under the key it was held with. */
  * entries(): IterableIterator<[string, HeldResult<R>]> {
    this.sweep(Date.now());
    yield* this.held.entries();
  }

  get size(): { count: number; bytes: number } {
    return { count: this.held.size, bytes: this.bytes };
  }

  clear(): void {
    this.held.clear();
    this.delivered.clear();
    this.bytes = 0;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.held) if (entry.expiresAt <= now) this.drop(key);
  }
}

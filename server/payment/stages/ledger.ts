// Stage 2, what is known of a payment: the guard store (in-process, or Redis shared by the
// replicas) where a payment is claimed before its work, and where what became of it is recorded
// (held for a retry, delivered, failed to settle), so that every replica answers its retry alike.
import { ServiceError } from '../../../core/errors.js';
import type { PaymentGuard } from '../guard.js';
import type { Payment } from './payload.js';
import { differentPayload, guardUnavailable, inProgress, unconfirmed } from './refusals.js';

export const MAX_TIMEOUT_SECONDS = 300;
// A claim outlives the authorization it guards, so a payment can never be used twice.
export const CLAIM_TTL_SECONDS = MAX_TIMEOUT_SECONDS * 2;
// The duplicate-settlement window the Solana exact scheme recommends.
const SVM_SETTLE_WINDOW_SECONDS = 120;

const HELD = 'held:';
const DELIVERED = 'delivered:';
const SETTLE_FAILED = 'settle-failed';

const clientIdKey = (clientId: string) => `payment-identifier:${clientId}`;
const svmSettleKey = (id: string) => `svm-settle:${id}`;

export class PaymentLedger {
  constructor(
    readonly guard: PaymentGuard,
    /** Where the other replicas reach this one (REPLICA_URL), recorded with what it holds; none: not said. */
    private readonly replicaUrl: () => string | undefined = () => undefined,
  ) {}

  /** The address recorded by the replica holding this payment's result, when one holds it and said where. */
  async holderOf(payment: Pick<Payment, 'id'>): Promise<string | undefined> {
    const state = await this.guard.lookup(payment.id).catch(() => undefined);
    if (!state?.startsWith(HELD)) return undefined;
    const address = state.slice(HELD.length).split(' ')[1];
    return address || undefined;
  }

  /** The client's idempotency key, once used with one payment, is refused with another. */
  async checkClientId(payment: Payment): Promise<void> {
    if (payment.clientId === undefined) return;
    const bought = await this.lookup(clientIdKey(payment.clientId));
    if (bought !== undefined && bought !== payment.digest) {
      throw new ServiceError('PAYMENT_ID_CONFLICT', 'this payment identifier was already used with a different payment; use a new identifier for a new payment');
    }
  }

  /** Refuses a payment whose fate is already recorded: delivered, failed, held by another replica, or in use. */
  async refuseKnown(payment: Payment): Promise<void> {
    const state = await this.lookup(payment.id);
    if (state === undefined) return;
    if (state.startsWith(DELIVERED)) {
      if (!state.endsWith(payment.digest)) throw differentPayload();
      throw new ServiceError('RESULT_DELIVERED', 'the result bought with this payment was already delivered, and results are not kept after delivery; nothing more was charged');
    }
    if (state.startsWith(HELD)) {
      if (!state.slice(HELD.length).startsWith(payment.digest)) throw differentPayload();
      throw unconfirmed('the result is held by another instance of the service');
    }
    if (state === SETTLE_FAILED) throw new ServiceError('SETTLEMENT_FAILED', 'this payment could not be settled; nothing was charged; pay again with a new payment');
    throw inProgress();
  }

  /**
   * Claims the payment for one piece of work (and its client id for this payload); a payment
   * someone else claimed first is refused as whatever became of it, or as still in progress.
   */
  async claim(payment: Payment): Promise<boolean> {
    if (!await this.tryClaim(payment.id, CLAIM_TTL_SECONDS)) return false;
    if (payment.clientId !== undefined) await this.record(clientIdKey(payment.clientId), payment.digest);
    return true;
  }

  /** The work failed or its client left: the authorization is unspent and may be used again. */
  async release(payment: Payment): Promise<void> {
    await this.guard.release(payment.id).catch(() => undefined);
    if (payment.matched.network.startsWith('solana:')) await this.guard.release(svmSettleKey(payment.id)).catch(() => undefined);
  }

  /** One settlement attempt per Solana transaction within the scheme's duplicate window. */
  async claimSolanaSettlement(payment: Payment): Promise<boolean> {
    return !payment.matched.network.startsWith('solana:') || this.tryClaim(svmSettleKey(payment.id), SVM_SETTLE_WINDOW_SECONDS);
  }

  /** Best effort: a store that fails here leaves the in-process record, which still answers this replica. */
  async markHeld(payment: Pick<Payment, 'id' | 'digest'>): Promise<void> {
    await this.record(payment.id, this.heldState(payment)).catch(() => undefined);
  }

  /**
   * Records again that this replica holds the payment's result, unless something is recorded
   * under it already (its delivery, say): after the store restarted empty, a retry reaching
   * another replica is then passed on here instead of being refused as already used.
   */
  async markHeldAgain(payment: Pick<Payment, 'id' | 'digest'>): Promise<void> {
    await this.guard.claim(payment.id, CLAIM_TTL_SECONDS, this.heldState(payment)).catch(() => undefined);
  }

  private heldState(payment: Pick<Payment, 'digest'>): string {
    const holder = this.replicaUrl();
    return `${HELD}${payment.digest}${holder ? ` ${holder}` : ''}`;
  }

  async markDelivered(payment: Payment): Promise<void> {
    await this.record(payment.id, DELIVERED + payment.digest).catch(() => undefined);
  }

  async markSettleFailed(payment: Payment): Promise<void> {
    await this.record(payment.id, SETTLE_FAILED);
  }

  private async tryClaim(id: string, ttl: number): Promise<boolean> {
    try {
      return await this.guard.claim(id, ttl);
    } catch {
      throw guardUnavailable();
    }
  }

  private async lookup(id: string): Promise<string | undefined> {
    try {
      return await this.guard.lookup(id);
    } catch {
      throw guardUnavailable();
    }
  }

  private async record(id: string, value: string): Promise<void> {
    try {
      await this.guard.record(id, value, CLAIM_TTL_SECONDS);
    } catch {
      throw guardUnavailable();
    }
  }
}

// Stage 6, handing the result over: a settled result is held until it has been sent, a result
// whose settlement is unknown is held for the identical retry, and that retry settles it (or
// learns it was settled) and receives it. One payment, one charge, one result.
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { ServiceError } from '../../../core/errors.js';
import { HeldResults, type HeldResult, type Holdable } from '../held-results.js';
import type { Metrics } from '../../metrics.js';
import type { PaymentLedger } from './ledger.js';
import type { Payment } from './payload.js';
import { settlePayment } from './settle.js';
import { differentPayload, unconfirmed } from './refusals.js';

/** What the gate runs the work for: a result ready to be sent, which it may hold for a retry. */
export interface GateResult extends Holdable {
  /** Called when the result will never be sent (its settlement failed or was refused). */
  discard?(): void;
  /**
   * The result is already in the buyer's hands (pushed to their URL): a client that leaves after
   * that is still charged, as it received what it paid for.
   */
  received?: boolean;
}

export type PaidOutcome<T> =
  | { kind: 'payment-required'; paymentRequired: PaymentRequired }
  /** `sent` is told whether the result reached the client; until then it is held for a retry. */
  | { kind: 'paid'; result: T; receipt: SettleResponse; sent(received: boolean): void };

export class ResultHolding {
  private readonly held = new HeldResults<GateResult>();

  constructor(
    private readonly server: Pick<x402ResourceServer, 'settlePayment'>,
    private readonly ledger: PaymentLedger,
    private readonly metrics: Metrics,
  ) {}

  /** The result held here for this payment, if any. */
  heldFor<R extends GateResult>(payment: Payment): HeldResult<R> | undefined {
    return this.held.get(payment.id) as HeldResult<R> | undefined;
  }

  /** A result whose settlement is unknown, held for the identical retry (when it fits). */
  async holdUnconfirmed(payment: Payment, result: GateResult, receipt: SettleResponse | undefined): Promise<void> {
    this.metrics.payments.inc({ stage: 'settle_unknown' });
    if (this.held.hold(payment.id, { payloadDigest: payment.digest, result, settlement: 'unknown', ...(receipt ? { receipt } : {}) })) {
      await this.ledger.markHeld(payment);
    }
  }

  /**
   * A settled result, held until it has been sent: `sent(false)` (the connection closed first)
   * keeps it for the identical retry; `sent(true)` drops it and remembers the delivery.
   */
  deliver<R extends GateResult>(payment: Payment, result: R, receipt: SettleResponse): PaidOutcome<R> {
    const held = this.held.hold(payment.id, { payloadDigest: payment.digest, result, settlement: 'settled', receipt });
    const sent = async (received: boolean) => {
      if (received) {
        this.held.markDelivered(payment.id, payment.digest);
        await this.ledger.markDelivered(payment);
      } else if (held) {
        this.metrics.payments.inc({ stage: 'undelivered_held' });
        await this.ledger.markHeld(payment);
      }
    };
    return { kind: 'paid', result, receipt, sent: (received) => void sent(received) };
  }

  /** A retry of a payment whose result is held here: settled now if it was not known to be. */
  async redeliver<R extends GateResult>(payment: Payment, held: HeldResult<R>): Promise<PaidOutcome<R>> {
    if (held.payloadDigest !== payment.digest) throw differentPayload();
    let receipt = held.receipt;
    if (held.settlement === 'unknown') {
      // Ask the facilitator again with the same payment: it settles it, reconciles a pending
      // settlement, or says the authorization is spent (the first settlement did reach the chain).
      const settlement = await settlePayment(this.server, payment, true, held.receipt);
      if (settlement.kind === 'unknown') throw unconfirmed(settlement.reason);
      // The first settlement's outcome is still unknown: the result stays held for a later retry.
      if (settlement.kind === 'refused') throw unconfirmed(settlement.error.message);
      if (settlement.kind === 'failed' || settlement.kind === 'spent') {
        held.result.discard?.();
        this.held.drop(payment.id);
        await this.ledger.markSettleFailed(payment);
        this.metrics.payments.inc({ stage: 'settle_failed' });
        throw new ServiceError('SETTLEMENT_FAILED', `settlement failed: ${settlement.reason}; nothing was charged and no result is returned`);
      }
      receipt = settlement.receipt;
      this.metrics.payments.inc({ stage: 'settled' });
    }
    this.metrics.payments.inc({ stage: 'redelivered' });
    return this.deliver(payment, held.result, receipt!);
  }

  clear(): void {
    this.held.clear();
  }
}

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
import { settlePayment, type Settlement } from './settle.js';
import { verifyPayment } from './verify.js';
import { describeFailure, differentPayload, expiredUnspent, unconfirmed } from './refusals.js';
import type { AuthorizationReader, AuthorizationState } from './authorization.js';

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
    private readonly server: Pick<x402ResourceServer, 'settlePayment' | 'verifyPayment'>,
    private readonly ledger: PaymentLedger,
    private readonly metrics: Metrics,
    /** Reads a Base authorization on the chain, when a retry's settlement fails; none: the failure stands. */
    private readonly authorizations?: AuthorizationReader,
  ) {}

  /** The result held here for this payment, if any. */
  heldFor<R extends GateResult>(payment: Payment): HeldResult<R> | undefined {
    return this.held.get(payment.id) as HeldResult<R> | undefined;
  }

  /** Whether a result bought with this payment id is held in this process. */
  holdsHere(id: string): boolean {
    return this.held.get(id) !== undefined;
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
      const answer = await settlePayment(this.server, payment, true, held.receipt);
      if (answer.kind === 'unknown' && await this.alreadyOnChain(payment)) return this.deliverLanded(payment, held);
      if (answer.kind === 'unknown') throw unconfirmed(answer.reason);
      // The first settlement's outcome is still unknown: the result stays held for a later retry.
      if (answer.kind === 'refused') throw unconfirmed(answer.error.message);
      const settlement = answer.kind === 'failed' ? await this.askTheChain(payment, held, answer.reason) : answer;
      if (settlement.kind === 'failed' || settlement.kind === 'spent') {
        await this.dropUnpaid(payment, held);
        throw new ServiceError('SETTLEMENT_FAILED', `settlement failed: ${settlement.reason}; nothing was charged and no result is returned`);
      }
      receipt = settlement.receipt;
      this.metrics.payments.inc({ stage: 'settled' });
    }
    this.metrics.payments.inc({ stage: 'redelivered' });
    return this.deliver(payment, held.result, receipt!);
  }

  /**
   * A held Base result whose retry could not be settled: the authorization's record on the chain
   * says whether the first settlement landed (the result is delivered, charged once), or that it
   * expired unspent (dropped, uncharged; the buyer pays again). Unreadable, it stays held.
   */
  private async askTheChain<R extends GateResult>(payment: Payment, held: HeldResult<R>, reason: string): Promise<Extract<Settlement, { kind: 'settled' | 'failed' }>> {
    let state: AuthorizationState | undefined;
    try {
      state = await this.authorizations?.stateOf(payment);
    } catch (err) {
      throw unconfirmed(`the settlement failed (${reason}) and the chain could not be read to learn whether the first one landed: ${describeFailure(err)}`);
    }
    if (state === 'used') return { kind: 'settled', receipt: landedReceipt(payment, held) };
    if (state === 'expired-unused') {
      await this.dropUnpaid(payment, held);
      throw expiredUnspent();
    }
    return { kind: 'failed', reason };
  }

  /**
   * Whether the facilitator's verification finds the payment already spent on the chain. A
   * Solana facilitator refuses to settle a transaction again for two minutes after it first tried
   * (duplicate_settlement), but its verification simulates the transaction, and a transaction the
   * cluster has executed fails that with AlreadyProcessed; on Base a used nonce says the same.
   * Only a transfer to this service's address can spend the payment, so spent means landed.
   */
  private async alreadyOnChain(payment: Payment): Promise<boolean> {
    try {
      await verifyPayment(this.server, payment);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'PAYMENT_ALREADY_USED') return true;
    }
    // Past a Solana blockhash's life the verification proves nothing; the chain's record does.
    try {
      return await this.authorizations?.stateOf(payment) === 'used';
    } catch {
      return false;
    }
  }

  private deliverLanded<R extends GateResult>(payment: Payment, held: HeldResult<R>): PaidOutcome<R> {
    this.metrics.payments.inc({ stage: 'settled' });
    this.metrics.payments.inc({ stage: 'redelivered' });
    return this.deliver(payment, held.result, landedReceipt(payment, held));
  }

  private async dropUnpaid<R extends GateResult>(payment: Payment, held: HeldResult<R>): Promise<void> {
    held.result.discard?.();
    this.held.drop(payment.id);
    await this.ledger.markSettleFailed(payment);
    this.metrics.payments.inc({ stage: 'settle_failed' });
  }

  /** Records in the shared store, again, every result held here (after the store lost its records). */
  async announceHeld(): Promise<void> {
    const held = [...this.held.entries()];
    await Promise.all(held.map(([id, entry]) => this.ledger.markHeldAgain({ id, digest: entry.payloadDigest })));
  }

  clear(): void {
    this.held.clear();
  }
}

/** The receipt of a first settlement known to have landed only from the chain: its transaction, if that answer arrived. */
function landedReceipt(payment: Payment, held: HeldResult<GateResult>): SettleResponse {
  return { success: true, transaction: held.receipt?.transaction ?? '', network: payment.matched.network, ...(held.receipt?.payer ? { payer: held.receipt.payer } : {}) };
}

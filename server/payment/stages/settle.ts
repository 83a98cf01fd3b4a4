// Stage 5, settlement: one attempt, classified by what the facilitator's answer proves about the
// transfer. 'unknown' when it does not say whether the transfer happened (it failed, timed out,
// or is still pending); 'failed' only when it says no; 'spent' when the authorization was already
// used before this attempt.
import type { x402ResourceServer } from '@x402/core/server';
import type { SettleResponse } from '@x402/core/types';
import { FacilitatorRefusedError } from '../facilitators.js';
import type { Payment } from './payload.js';
import { describeFailure } from './refusals.js';

const SETTLEMENT_PENDING = 'settlement_pending';
// A facilitator's refusal to settle an authorization that has already been spent.
export const SPENT_REASONS = new Set(['invalid_exact_evm_nonce_already_used']);
// Solana has no nonce to look up: a transaction the cluster has already executed fails its
// simulation with the TransactionError AlreadyProcessed (its status cache remembers the message
// while its blockhash is valid), which the facilitator reports as a failed simulation carrying
// the cluster's words.
const SVM_SIMULATION_FAILED = /^(?:invalid_exact_svm_(?:smart_wallet_)?)?(?:transaction_)?simulation_failed\b/;
const ALREADY_PROCESSED = /\bAlreadyProcessed\b/;

/** Whether a facilitator's refusal (its reason, and its message if any) says the payment was already spent on the chain. */
export function spentOnChain(reason: string, message = ''): boolean {
  if (SPENT_REASONS.has(reason)) return true;
  return SVM_SIMULATION_FAILED.test(reason) && ALREADY_PROCESSED.test(`${reason} ${message}`);
}
// On the retry of a Solana result held after an unknown outcome, these say nothing of whether the
// first settlement landed: the facilitator still holds that transaction as settling
// (duplicate_settlement, for 120 s), or simulating it again fails, as it does for a transaction
// already processed. The result stays held rather than being dropped as unpaid.
const UNPROVEN_ON_RETRY = new Set(['duplicate_settlement', 'transaction_simulation_failed', 'invalid_exact_svm_transaction_simulation_failed']);

export type Settlement =
  | { kind: 'settled'; receipt: SettleResponse }
  /** The facilitator refused this service's credentials: it did not settle. */
  | { kind: 'refused'; error: FacilitatorRefusedError }
  | { kind: 'failed'; reason: string }
  /** The facilitator says the authorization was spent before this settlement. */
  | { kind: 'spent'; reason: string }
  | { kind: 'unknown'; reason: string; receipt?: SettleResponse };

/**
 * Settles once. On a retry of a result held after an unknown outcome (`pending` is that first
 * answer, if any), a spent authorization means the first settlement reached the chain: only a
 * transfer to this service's address can spend it, so it counts as settled.
 */
export async function settlePayment(server: Pick<x402ResourceServer, 'settlePayment'>, payment: Payment, retry: boolean, pending?: SettleResponse): Promise<Settlement> {
  let receipt: SettleResponse;
  try {
    receipt = await server.settlePayment(payment.payload, payment.matched);
  } catch (err) {
    if (err instanceof FacilitatorRefusedError) return { kind: 'refused', error: err };
    const answered = err instanceof Error && err.name === 'SettleError' ? err as Error & { errorReason?: string; errorMessage?: string } : undefined;
    if (!answered?.errorReason || answered.errorReason === SETTLEMENT_PENDING) return { kind: 'unknown', reason: describeFailure(err) };
    receipt = { success: false, errorReason: answered.errorReason, ...(answered.errorMessage ? { errorMessage: answered.errorMessage } : {}), transaction: '', network: payment.matched.network };
  }
  if (receipt.success) return { kind: 'settled', receipt };
  const reason = receipt.errorReason ?? 'settlement failed';
  if (reason === SETTLEMENT_PENDING) return { kind: 'unknown', reason: 'the settlement is still pending', receipt };
  // A Solana transaction the cluster has already executed (AlreadyProcessed) is proof it landed,
  // as a used nonce is on Base; other failed simulations prove nothing either way.
  if (retry && UNPROVEN_ON_RETRY.has(reason) && !spentOnChain(reason, receipt.errorMessage)) return { kind: 'unknown', reason: `the first settlement's outcome is not known yet (${reason})` };
  if (spentOnChain(reason, receipt.errorMessage)) {
    if (!retry) return { kind: 'spent', reason };
    return { kind: 'settled', receipt: { success: true, transaction: pending?.transaction ?? receipt.transaction ?? '', network: payment.matched.network, ...(receipt.payer ? { payer: receipt.payer } : {}) } };
  }
  return { kind: 'failed', reason };
}

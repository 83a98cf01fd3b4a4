// The gate's answers that are not a 402: what the client is told when a payment is in use,
// already used, unconfirmed, or when this service's side (its facilitator credentials, its guard
// store) is at fault. One place, so every stage says the same thing the same way.
import { ServiceError } from '../../../core/errors.js';
import type { FacilitatorRefusedError } from '../facilitators.js';

export function inProgress(): ServiceError {
  return new ServiceError('PAYMENT_IN_PROGRESS', 'a request paid with this payment is still being processed; retry in a few seconds to receive its result', { retryAfterSeconds: 5 });
}

/** The same payment presented again with a different payload: refused, and nothing more charged. */
export function differentPayload(): ServiceError {
  return new ServiceError('PAYMENT_ID_CONFLICT', 'this payment was already used with a different payload; nothing more was charged');
}

export function unconfirmed(reason: string): ServiceError {
  return new ServiceError('SETTLEMENT_UNCONFIRMED',
    `the settlement of this payment could not be confirmed (${reason.slice(0, 200)}); the result is held for a few minutes: send the identical request with the same payment again to receive it; you will not be charged twice`,
    { retryAfterSeconds: 5 });
}

// The operator's configuration is at fault, never the payment: a 502, never a 402 asking to pay.
export function facilitatorRefused(err: FacilitatorRefusedError, consequence: string): ServiceError {
  const said = `${err.operation === 'supported' ? 'GET /supported' : `POST /${err.operation}`} answered ${err.status}${err.detail ? `: ${err.detail}` : ''}`;
  return new ServiceError('FACILITATOR_REFUSED',
    `the payment facilitator at ${err.facilitator} refused this service's credentials (${said}); the payment is not at fault; ${consequence}`);
}

export function guardUnavailable(): ServiceError {
  return new ServiceError('GUARD_UNAVAILABLE', 'the payment guard store is unreachable, so the payment cannot be used safely; nothing was charged');
}

/** Spent before this service settled it: by an earlier settlement whose record was lost, or by its payer. */
export function alreadySpent(): ServiceError {
  return new ServiceError('PAYMENT_ALREADY_USED', 'this payment\'s authorization was already spent on the chain, by an earlier settlement or by its payer, so it cannot buy this result; nothing more was charged; if an earlier identical request was charged, send it again with the same payment to receive its result where it is held');
}

/** A held result's authorization expired on the chain without being executed: nothing was, or can be, charged. */
export function expiredUnspent(): ServiceError {
  return new ServiceError('SETTLEMENT_FAILED', 'this payment\'s authorization expired (its validBefore has passed on the chain) before its settlement could be confirmed, and the chain shows it was never executed: nothing was charged and nothing can be charged with it; the result it would have bought is not kept: pay again with a new payment');
}

export function describeFailure(err: unknown): string {
  return err instanceof Error ? err.message.slice(0, 300) : 'unknown error';
}

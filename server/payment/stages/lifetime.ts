// Stage 2, the payment's lifetime: before any work, a payment must stay valid until its result is
// handed over. One that expires during the work would be refused at settlement, after the work
// (and, worse, after a push had already handed the bytes to the buyer's URL), so it is refused
// first, with the time it needs.
import type { Payment } from './payload.js';

/**
 * What must fit between now and the payment's expiry, besides the work: the facilitator refuses
 * an EVM authorization within 6 s of its validBefore, and the settlement's own round trip and
 * block take a few seconds more.
 */
export const SETTLEMENT_MARGIN_MS = 10_000;

/** How long the call may take after its payment is accepted: the work's deadline and a push to deliver_to. */
export interface CallDuration {
  workMs: number;
  /** The push's deadline (URL_FETCH_TIMEOUT_MS) when the result goes to deliver_to. */
  pushMs?: number;
}

/** Unix seconds before which the payment must be settled, when the payload says (EIP-3009 validBefore). */
function validBeforeOf(payload: Payment['payload']['payload']): number | undefined {
  type Deposit = { deposit?: { authorization?: { erc3009Authorization?: { validBefore?: unknown } } } };
  const authorization = (payload as { authorization?: { validBefore?: unknown } }).authorization
    ?? (payload as Deposit).deposit?.authorization?.erc3009Authorization;
  const value = authorization?.validBefore;
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? seconds : undefined;
}

const seconds = (ms: number) => Math.ceil(ms / 1000);

/** Why the payment cannot cover this call, as the reason of a 402; undefined when it can. */
export function lifetimeProblem(payment: Payment, duration: CallDuration, now = Date.now()): string | undefined {
  const neededMs = duration.workMs + (duration.pushMs ?? 0) + SETTLEMENT_MARGIN_MS;
  const parts = `the work's deadline (${seconds(duration.workMs)} s)${duration.pushMs ? `, the push to deliver_to (${seconds(duration.pushMs)} s)` : ''} and its settlement (${seconds(SETTLEMENT_MARGIN_MS)} s)`;
  const { network, scheme } = payment.matched;
  if (network.startsWith('solana:') && scheme === 'exact' && duration.pushMs) {
    // A Solana payment is a transaction whose blockhash lives about a minute, and the payment does
    // not say when it was taken: it cannot be known to outlive a job and a push.
    return `deliver_to needs a payment that stays valid for at least ${seconds(neededMs)} s (${parts}), and a Solana payment's transaction expires about a minute after its blockhash; pay on Base (eip155:8453) for deliver_to, or ask for delivery=link; nothing was charged`;
  }
  const validBefore = validBeforeOf(payment.payload.payload);
  if (validBefore === undefined) return undefined;
  const leftMs = validBefore * 1000 - now;
  if (leftMs >= neededMs) return undefined;
  return `the payment's authorization expires in ${Math.max(0, Math.floor(leftMs / 1000))} s (validBefore ${validBefore}), but this call needs it valid for at least ${seconds(neededMs)} s: ${parts}; sign it again with validBefore at least ${seconds(neededMs)} s from now (the quote's maxTimeoutSeconds allows it); nothing was charged and no work was done`;
}

// Stage 3, verification: the facilitator checks the signed payment before any work. An invalid
// payment is the reason of a 402; a facilitator that refuses this service's credentials or cannot
// be reached is this service's fault (502), never the payer's.
import type { x402ResourceServer } from '@x402/core/server';
import { ServiceError } from '../../../core/errors.js';
import { FacilitatorRefusedError } from '../facilitators.js';
import type { Payment } from './payload.js';
import { alreadySpent, facilitatorRefused } from './refusals.js';
import { spentOnChain } from './settle.js';

export type Verification = { kind: 'valid' } | { kind: 'invalid'; reason: string };

/**
 * An authorization the facilitator finds already spent (an EVM nonce used, a Solana transaction
 * already processed) is never answered with a request to pay again.
 */
function refuseSpent(reason: string, message: string | undefined): Verification {
  if (spentOnChain(reason, message)) throw alreadySpent();
  return { kind: 'invalid', reason };
}

export async function verifyPayment(server: Pick<x402ResourceServer, 'verifyPayment'>, payment: Payment): Promise<Verification> {
  let verified;
  try {
    verified = await server.verifyPayment(payment.payload, payment.matched);
  } catch (err) {
    if (err instanceof FacilitatorRefusedError) throw facilitatorRefused(err, 'nothing was charged and no work was done');
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== undefined && status < 500 && 'invalidReason' in (err as object)) {
      const answered = err as { invalidReason?: string; invalidMessage?: string };
      return refuseSpent(String(answered.invalidReason ?? 'payment invalid'), answered.invalidMessage);
    }
    throw new ServiceError('FACILITATOR_UNREACHABLE', 'the payment facilitator could not verify the payment; nothing was charged and no work was done');
  }
  if (!verified.isValid) return refuseSpent(verified.invalidReason ?? verified.invalidMessage ?? 'payment invalid', verified.invalidMessage);
  return { kind: 'valid' };
}

// Stage 1, reading the payment: its shape, version, the requirement it matches, its unique id on
// the chain and the client's own idempotency key. Nothing here asks anyone anything; a problem is
// returned as the reason of a 402.
import { createHash } from 'node:crypto';
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { extractPaymentIdentifier, isValidPaymentId } from '@x402/extensions/payment-identifier';
import { paymentId } from '../guard.js';

/** One payment being used: its unique id on the chain, the digest of the payload, and the match. */
export interface Payment {
  id: string;
  digest: string;
  payload: PaymentPayload;
  matched: PaymentRequirements;
  /** The client's own idempotency key (the payment-identifier extension), when it sent one. */
  clientId?: string;
}

// A real PaymentPayload nests a few levels (payload.authorization.*, extensions.*.schema.*) and
// holds a few hundred values; x402's matching walks it recursively, so anything far deeper or
// larger is refused before it is touched.
export const MAX_PAYLOAD_DEPTH = 32;
export const MAX_PAYLOAD_VALUES = 20_000;

/** What is wrong with the payload's shape, walked without recursion; undefined when it is fine. */
export function payloadShapeProblem(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return 'the payment payload must be a JSON object';
  const stack: Array<[unknown, number]> = [[payload, 1]];
  let values = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (++values > MAX_PAYLOAD_VALUES) return `the payment payload holds more than ${MAX_PAYLOAD_VALUES} values; a PaymentPayload holds a few hundred`;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_PAYLOAD_DEPTH) return `the payment payload is nested more than ${MAX_PAYLOAD_DEPTH} levels deep; a PaymentPayload nests a few`;
    for (const inner of Object.values(value)) stack.push([inner, depth + 1]);
  }
  return undefined;
}

export function digestOf(payload: PaymentPayload): string {
  return createHash('sha256').update(JSON.stringify(payload)).digest('base64url');
}

/** Only the shape and version, which need no requirements: checked before they are built. */
export function versionProblem(payload: PaymentPayload): string | undefined {
  return payloadShapeProblem(payload)
    ?? (payload.x402Version !== 2 ? `x402Version ${String(payload.x402Version)} is not supported; use 2` : undefined);
}

/** The payment as the gate uses it, or the reason it cannot buy what the requirements sell. */
export function readPayment(server: Pick<x402ResourceServer, 'findMatchingRequirements'>, requirements: PaymentRequirements[], payload: PaymentPayload): { payment: Payment } | { refusal: string } {
  const matched = server.findMatchingRequirements(requirements, payload);
  if (!matched) return { refusal: 'No matching payment requirements: the payment does not match this request\'s price, network, asset or payTo' };
  const id = paymentId(payload);
  if (!id) return { refusal: 'the payment payload has no authorization nonce or transaction signature' };
  // Only the id is checked (its length and characters), never the schema the payload echoes:
  // compiling a client's JSON Schema on every paid request would be slow and theirs to shape.
  const clientId = extractPaymentIdentifier(payload, false);
  if (clientId !== null && !isValidPaymentId(clientId)) {
    return { refusal: 'the payment-identifier extension is invalid: its id must be 16 to 128 letters, digits, hyphens or underscores' };
  }
  return { payment: { id, digest: digestOf(payload), payload, matched, ...(clientId !== null ? { clientId } : {}) } };
}

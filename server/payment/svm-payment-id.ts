// The unique id of a Solana x402 payment, known before anything is sent to the chain.
//
// Why not the transaction signature: in the exact scheme the facilitator is the fee payer, so the
// first signature slot of the client's partially signed transaction is still empty (all zeros);
// the on-chain signature only exists once the facilitator co-signs at settle time. The payer's own
// signature is no key either: whoever holds the payer key can sign the same message again with a
// different nonce, and the chain would still treat both as the one transaction. The message
// (fee payer, accounts, transfer, memo nonce, blockhash) is what the chain deduplicates on, so a
// hash of the message bytes names the payment. It is computed exactly like @x402/svm's own
// settlement-cache key (base64 of SHA-256 over the message bytes), so both can be matched in logs.
import { createHash } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';

const SIGNATURE_BYTES = 64;

/** Reads Solana's compact-u16 length prefix; undefined when the bytes are not one. */
function readShortVec(bytes: Uint8Array, offset: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let i = 0; i < 3; i += 1) {
    const byte = bytes[offset + i];
    if (byte === undefined) return undefined;
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return { value, next: offset + i + 1 };
  }
  return undefined;
}

/** The message bytes of a wire transaction (everything after the signatures), or undefined. */
export function transactionMessageBytes(wire: Uint8Array): Uint8Array | undefined {
  const count = readShortVec(wire, 0);
  if (!count || count.value < 1) return undefined;
  const messageStart = count.next + count.value * SIGNATURE_BYTES;
  // A message holds at least a header, one account and a blockhash.
  if (wire.length < messageStart + 3 + 1 + 32 + 32) return undefined;
  return wire.subarray(messageStart);
}

/**
 * The payment id of an exact-scheme Solana payload: base64 SHA-256 of the transaction message in
 * `payload.payload.transaction`. Undefined when the payload carries no decodable transaction.
 */
export function solanaPaymentId(payload: Pick<PaymentPayload, 'payload'>): string | undefined {
  const transaction = (payload.payload as { transaction?: unknown } | undefined)?.transaction;
  if (typeof transaction !== 'string' || transaction.length === 0 || transaction.length > 8192) return undefined;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(transaction)) return undefined;
  const message = transactionMessageBytes(Buffer.from(transaction, 'base64'));
  if (!message) return undefined;
  return createHash('sha256').update(message).digest('base64');
}

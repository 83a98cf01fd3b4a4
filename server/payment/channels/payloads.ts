// What the gate reads of a payment channel's payload (x402's batch-settlement scheme): its kind,
// the voucher it carries as a unique id, and whether the buyer asked to withdraw.
import type { PaymentPayload, SettleResponse } from '@x402/core/types';

export const BATCH_SETTLEMENT = 'batch-settlement';

export type ChannelPayloadType = 'deposit' | 'voucher' | 'refund';

/** The kind of a channel payload; undefined for any other scheme or an unknown kind. */
export function channelPayloadType(payload: PaymentPayload): ChannelPayloadType | undefined {
  if (payload.accepted?.scheme !== BATCH_SETTLEMENT) return undefined;
  const type = (payload.payload as { type?: unknown } | undefined)?.type;
  return type === 'deposit' || type === 'voucher' || type === 'refund' ? type : undefined;
}

/**
 * A voucher is unique by its channel and its cumulative amount: a voucher buys one result, and the
 * same voucher again is the retry of that purchase (never a second charge).
 */
export function channelVoucherId(payload: PaymentPayload): string | undefined {
  const voucher = (payload.payload as { voucher?: { channelId?: unknown; maxClaimableAmount?: unknown } }).voucher;
  if (typeof voucher?.channelId !== 'string' || typeof voucher.maxClaimableAmount !== 'string') return undefined;
  return `${payload.accepted.network}:channel:${voucher.channelId.toLowerCase()}:${voucher.maxClaimableAmount}`;
}

/** Whether a channel's state in a receipt shows the buyer asked for a timed withdrawal. */
export function withdrawalRequested(receipt: SettleResponse): boolean {
  const state = (receipt.extra as { channelState?: { withdrawRequestedAt?: unknown } } | undefined)?.channelState;
  return Number(state?.withdrawRequestedAt ?? 0) > 0;
}

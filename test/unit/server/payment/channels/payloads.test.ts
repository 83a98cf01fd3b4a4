// server/payment/channels/payloads.ts: what the gate reads of x402's batch-settlement payloads:
// the kind (anything else is not a channel payload), the voucher as a payment id (one per channel
// and cumulative amount, the channel's id lowercased), and a withdrawal asked for in a receipt.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import type { PaymentPayload, SettleResponse } from '@x402/core/types';
import { channelPayloadType, channelVoucherId, withdrawalRequested } from '../../../../../server/payment/channels/payloads.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const payload = (scheme: string, inner: Record<string, unknown>) => ({
  x402Version: 2, accepted: { scheme, network: 'eip155:84532', amount: '5000', asset: '0xa', payTo: '0xb', maxTimeoutSeconds: 60, extra: {} }, payload: inner,
}) as unknown as PaymentPayload;
const receipt = (channelState: Record<string, unknown> | undefined) =>
  ({ success: true, transaction: '', network: 'eip155:84532', extra: { channelState } }) as SettleResponse;

describe('server/payment/channels/payloads', () => {
  it('a channel payload is a deposit, a voucher or a refund of the batch-settlement scheme; nothing else is', () => {
    for (const type of ['deposit', 'voucher', 'refund'] as const) {
      expect(channelPayloadType(payload('batch-settlement', { type }))).to.equal(type);
    }
    expect(channelPayloadType(payload('batch-settlement', { type: 'withdraw' }))).to.be.undefined();
    expect(channelPayloadType(payload('batch-settlement', {}))).to.be.undefined();
    expect(channelPayloadType(payload('exact', { type: 'voucher' }))).to.be.undefined();
  });

  it('a voucher\'s id is its network, channel (lowercased) and cumulative amount; a voucher missing either has none', () => {
    const voucher = (v: Record<string, unknown>) => payload('batch-settlement', { type: 'voucher', voucher: v });
    expect(channelVoucherId(voucher({ channelId: '0xAbC123', maxClaimableAmount: '25000' }))).to.equal('eip155:84532:channel:0xabc123:25000');
    expect(channelVoucherId(voucher({ channelId: '0xabc123', maxClaimableAmount: '30000' }))).to.equal('eip155:84532:channel:0xabc123:30000');
    expect(channelVoucherId(voucher({ channelId: '0xabc123', maxClaimableAmount: 25000 }))).to.be.undefined();
    expect(channelVoucherId(voucher({ maxClaimableAmount: '25000' }))).to.be.undefined();
    expect(channelVoucherId(payload('batch-settlement', { type: 'deposit' }))).to.be.undefined();
  });

  it('a withdrawal was asked for when the channel\'s state in the receipt has a time for it', () => {
    expect(withdrawalRequested(receipt({ withdrawRequestedAt: 1764300000 }))).to.be.true();
    expect(withdrawalRequested(receipt({ withdrawRequestedAt: '1764300000' }))).to.be.true();
    expect(withdrawalRequested(receipt({ withdrawRequestedAt: 0 }))).to.be.false();
    expect(withdrawalRequested(receipt({}))).to.be.false();
    expect(withdrawalRequested(receipt(undefined))).to.be.false();
    expect(withdrawalRequested({ success: true, transaction: '', network: 'eip155:84532' } as SettleResponse)).to.be.false();
  });
});

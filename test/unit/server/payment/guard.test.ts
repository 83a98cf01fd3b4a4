// server/payment/guard.ts: "one payment buys one result". The in-memory guard's claims, records,
// expiry and release, and each chain's payment id: who paid and which authorization, lowercased
// so that the same payment written otherwise is still the same claim.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import type { PaymentPayload } from '@x402/core/types';
import { CLAIMED, MemoryGuard, paymentId } from '../../../../server/payment/guard.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const payload = (network: string, inner: Record<string, unknown>, scheme = 'exact') => ({
  x402Version: 2, accepted: { scheme, network, amount: '5000', asset: '0xa', payTo: '0xb', maxTimeoutSeconds: 60, extra: {} }, payload: inner,
}) as unknown as PaymentPayload;

describe('server/payment/guard', () => {
  it('a claim holds an id once: the second claim fails until it is released; record replaces what is held', async () => {
    const guard = new MemoryGuard();
    expect(await guard.claim('eip155:1:0xabc:0x01', 60)).to.be.true();
    expect(await guard.claim('eip155:1:0xabc:0x01', 60)).to.be.false();
    expect(await guard.lookup('eip155:1:0xabc:0x01')).to.equal(CLAIMED);
    await guard.record('eip155:1:0xabc:0x01', 'held digest-1', 60);
    expect(await guard.lookup('eip155:1:0xabc:0x01')).to.equal('held digest-1');
    expect(await guard.claim('eip155:1:0xabc:0x01', 60, 'other')).to.be.false();
    await guard.release('eip155:1:0xabc:0x01');
    expect(await guard.lookup('eip155:1:0xabc:0x01')).to.be.undefined();
    expect(await guard.claim('eip155:1:0xabc:0x01', 60, 'second')).to.be.true();
    expect(await guard.lookup('eip155:1:0xabc:0x01')).to.equal('second');
  });

  it('a claim ends with its time; concurrent claims of one id: exactly one wins', async () => {
    const guard = new MemoryGuard();
    expect(await guard.claim('short', 0.05)).to.be.true();
    await new Promise((resolve) => setTimeout(resolve, 70));
    expect(await guard.lookup('short')).to.be.undefined();
    expect(await guard.claim('short', 60)).to.be.true();
    const wins = await Promise.all(Array.from({ length: 20 }, () => guard.claim('contended', 60)));
    expect(wins.filter(Boolean)).to.have.length(1);
  });

  it('the payment id: EVM by payer and nonce (lowercased), Solana by its message hash, a channel by its voucher', () => {
    const evm = payload('eip155:84532', { authorization: { from: '0xAbCdEf0000000000000000000000000000000001', nonce: '0xFF00' }, signature: '0x1' });
    expect(paymentId(evm)).to.equal('eip155:84532:0xabcdef0000000000000000000000000000000001:0xff00');
    expect(paymentId(payload('eip155:84532', { authorization: { from: '0x1' } }))).to.be.undefined();
    const voucher = payload('eip155:84532', { type: 'voucher', voucher: { channelId: '0xCHAN', maxClaimableAmount: '15000' } }, 'batch-settlement');
    expect(paymentId(voucher)).to.equal('eip155:84532:channel:0xchan:15000');
    expect(paymentId(payload('solana:devnet', { transaction: 'not a transaction' }))).to.be.undefined();
    expect(paymentId(payload('cosmos:hub', { authorization: { from: '0x1', nonce: '0x2' } }))).to.be.undefined();
  });
});

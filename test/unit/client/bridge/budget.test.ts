// client/bridge/budget.ts: MAX_USD_TOTAL's arithmetic at its edges (the last atomic unit, parallel
// reservations, a channel's deposits against its charges) and lapsed authorizations released only
// on what the local Base chain shows.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { createPublicClient, http } from 'viem';
import { startEvmRig, type EvmRig } from '../../../../devchains/index.js';
import { Budget, type Authorization } from '../../../../client/bridge/budget.js';
import { EvmChain } from '../../../../client/bridge/chain.js';
import { freePort } from '../../../support/paying.js';
import { advanceChain, settle, signAuthorization } from '../../../support/authorizations.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const USD = 1_000_000n;

const refusal = async (budget: Budget, price: bigint) => {
  try {
    await budget.reserve(price);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('reserved');
};
const evmAuthorization = (amount: bigint, validBefore: bigint): Authorization => ({
  amount, spent: false, evm: { from: '0x0000000000000000000000000000000000000001', nonce: `0x${'1'.padStart(64, '0')}`, validBefore },
});

describe('the bridge\'s budget (MAX_USD_TOTAL)', () => {
  it('lets the total be reached to the last atomic unit, and not passed by one', async () => {
    const budget = new Budget(USD, undefined);
    await budget.reserve(USD - 1n);
    await budget.reserve(1n);
    expect(budget.left()).to.equal(0n);
    expect(await refusal(budget, 1n)).to.equal('the price is 0.000001 USD, and only 0 USD of MAX_USD_TOTAL (1 USD) is left; '
      + 'nothing was signed or paid. Spent so far: 0 of 1 USD (MAX_USD_TOTAL).');
    budget.unreserve(USD);
    expect(budget.left()).to.equal(USD);
  });

  it('gives the last room to one of two calls reserving at once', async () => {
    const budget = new Budget(USD, undefined);
    const results = await Promise.allSettled([budget.reserve(600_000n), budget.reserve(600_000n)]);
    expect(results.map((r) => r.status).sort()).to.equal(['fulfilled', 'rejected']);
    expect(budget.left()).to.equal(400_000n);
  });

  it('counts a signed authorization until known spent or unspent, and says which counts how', async () => {
    const budget = new Budget(USD, undefined);
    const paid = evmAuthorization(250_000n, 1n);
    budget.record(paid);
    budget.record({ amount: 100_000n, spent: false });
    expect([budget.left(), budget.spent()]).to.equal([650_000n, 0n]);
    paid.spent = true;
    expect([budget.left(), budget.spent()]).to.equal([650_000n, 250_000n]);
    expect(budget.spending()).to.equal('Spent so far: 0.25 of 1 USD (MAX_USD_TOTAL). A further 0.1 USD is signed for calls not paid for; '
      + 'it counts until the chain shows its authorization expired unspent (on Solana: until this bridge restarts).');
    // With no chain to read, a lapsed authorization (valid before 1970's second 1) stays counted.
    expect(await refusal(budget, 650_001n)).to.startWith('the price is 0.650001 USD, and only 0.65 USD of MAX_USD_TOTAL (1 USD) is left;');
  });

  it('keeps lapsed authorizations counted when the chain cannot be read', async () => {
    const port = await freePort();
    const unreachable = new EvmChain(createPublicClient({ transport: http(`http://127.0.0.1:${port}`, { retryCount: 0 }) }),
      { network: 'eip155:8453', family: 'evm', usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' });
    const budget = new Budget(USD, unreachable);
    budget.record(evmAuthorization(USD, 1n));
    expect(await refusal(budget, 1n)).to.startWith('the price is 0.000001 USD, and only 0 USD of MAX_USD_TOTAL (1 USD) is left;');
  });

  describe('a payment channel', () => {
    it('counts what a voucher draws beyond this run\'s deposits, and the deposits themselves', () => {
      const budget = new Budget(USD, undefined);
      expect(budget.channelBeyond(10_000n)).to.equal(10_000n);
      budget.channel.deposited = 50_000n;
      expect(budget.channelBeyond(10_000n)).to.equal(0n);
      budget.channel.charged = 45_000n;
      expect(budget.channelBeyond(5_000n)).to.equal(0n);
      expect(budget.channelBeyond(10_000n)).to.equal(5_000n);
      expect(budget.left()).to.equal(USD - 50_000n);
      // Charges beyond this run's deposits draw on an earlier run's: they count too.
      budget.channel.charged = 80_000n;
      expect([budget.left(), budget.spent()]).to.equal([USD - 80_000n, 80_000n]);
      expect(budget.spending()).to.equal('Spent so far: 0.08 of 1 USD (MAX_USD_TOTAL). Of it, the payment channel on Base: '
        + '0.05 USD deposited by this bridge, 0.08 USD charged; what is not charged stays the wallet\'s (a refund returns it).');
    });

    it('approves a deposit that fills the total exactly, and refuses one atomic unit more, keeping why', async () => {
      const budget = new Budget(100_000n, undefined);
      await budget.reserve(10_000n);
      budget.signingThroughChannel({ price: 10_000n, reserved: 10_000n });
      budget.approveDeposit(100_000n);
      expect(budget.channelRefusal()).to.be.undefined();
      expect(() => budget.approveDeposit(100_001n)).to.throw('the payment channel needs a deposit of 0.100001 USD (CHANNEL_DEPOSIT_USD) '
        + 'for this 0.01 USD call, and only 0.1 USD of MAX_USD_TOTAL (0.1 USD) is left; nothing was signed or paid. '
        + 'Spent so far: 0 of 0.1 USD (MAX_USD_TOTAL).');
      expect(budget.channelRefusal()!.message).to.startWith('the payment channel needs a deposit of 0.100001 USD');
      budget.signingThroughChannel(undefined);
      expect(budget.channelRefusal()).to.be.undefined();
    });
  });

  describe('on the local Base chain', () => {
    let rig: EvmRig;
    let chain: EvmChain;

    before(async () => {
      rig = await startEvmRig();
      chain = new EvmChain(createPublicClient({ transport: http(rig.rpcUrl) }), { network: rig.network, family: 'evm', usdc: rig.asset });
    });

    after(async () => {
      await rig?.stop();
    });

    it('releases a lapsed authorization the chain shows unused, and keeps one it shows used as spent', async () => {
      const unused = await signAuthorization(rig, 400_000n);
      const used = await signAuthorization(rig, 500_000n);
      await settle(rig, used);
      let clock = BigInt(Math.floor(Date.now() / 1000));
      const budget = new Budget(USD, chain, () => clock);
      budget.record(unused.authorization);
      budget.record(used.authorization);
      // Still valid: nothing is asked of the chain, and the room is short.
      expect(await refusal(budget, 200_000n)).to.startWith('the price is 0.2 USD, and only 0.1 USD of MAX_USD_TOTAL (1 USD) is left;');
      // The bridge's clock passes validBefore first: the chain's latest block has not, so it is final nowhere yet.
      clock += 60n;
      expect(await refusal(budget, 200_000n)).to.startWith('the price is 0.2 USD, and only 0.1 USD of MAX_USD_TOTAL (1 USD) is left;');
      await advanceChain(rig, 60);
      await budget.reserve(200_000n);
      expect([budget.left(), budget.spent()]).to.equal([300_000n, 500_000n]);
      expect(budget.spending()).to.equal('Spent so far: 0.5 of 1 USD (MAX_USD_TOTAL).');
    });
  });
});

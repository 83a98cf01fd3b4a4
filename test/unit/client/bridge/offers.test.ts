// client/bridge/offers.ts: which offer of a quote the bridge signs, on quotes built here in shapes
// the service never sends (the hostile system test shows a few; here each rule alone).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { chooseOffer, describeOffer, isPaymentRequired } from '../../../../client/bridge/offers.js';
import { BASE_MAINNET, SOLANA_MAINNET, type Payable } from '../../../../client/bridge/settings.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const BASE: Payable = { network: BASE_MAINNET, family: 'evm', usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' };
const SOLANA: Payable = { network: SOLANA_MAINNET, family: 'svm', usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' };

const offer = (over: Partial<PaymentRequirements> = {}): PaymentRequirements => ({
  scheme: 'exact', network: BASE_MAINNET, asset: BASE.usdc, amount: '5000', payTo: '0x0000000000000000000000000000000000000001',
  maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' }, ...over,
} as PaymentRequirements);
const quote = (...accepts: PaymentRequirements[]): PaymentRequired =>
  ({ x402Version: 2, resource: { url: 'mcp://x' }, accepts } as PaymentRequired);
const refusal = (pr: PaymentRequired, networks = [BASE], channelDeposit?: bigint) => {
  try {
    chooseOffer(pr, { networks, ...(channelDeposit !== undefined ? { channelDeposit } : {}) });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('signed');
};

describe('the offer the bridge signs', () => {
  it('takes the first configured network that is offered, whatever order the quote lists them in', () => {
    const onSolana = offer({ network: SOLANA_MAINNET, asset: SOLANA.usdc, extra: { feePayer: 'F' } });
    const onBase = offer();
    expect(chooseOffer(quote(onBase, onSolana), { networks: [SOLANA, BASE] })).to.shallow.equal(onSolana);
    expect(chooseOffer(quote(onSolana, onBase), { networks: [BASE, SOLANA] })).to.shallow.equal(onBase);
  });

  it('reads an EVM address in any case, a Solana mint exactly', () => {
    expect(chooseOffer(quote(offer({ asset: BASE.usdc.toLowerCase() })), { networks: [BASE] }).asset).to.equal(BASE.usdc.toLowerCase());
    const message = refusal(quote(offer({ network: SOLANA_MAINNET, asset: SOLANA.usdc.toLowerCase() })), [SOLANA]);
    const lower = SOLANA.usdc.toLowerCase();
    expect(message).to.startWith(`the service offers only payments this bridge does not sign: 5000 of ${lower} on ${SOLANA_MAINNET};`);
  });

  it('signs EIP-3009 transfers only: a Permit2 offer is refused, naming its method', () => {
    expect(chooseOffer(quote(offer({ extra: { assetTransferMethod: 'eip3009' } })), { networks: [BASE] })).to.exist();
    expect(refusal(quote(offer({ extra: { assetTransferMethod: 'permit2' } })))).to.equal(
      `the service offers only payments this bridge does not sign: 5000 of ${BASE.usdc} on ${BASE_MAINNET} (by permit2); `
      + `this bridge signs USDC (${BASE.usdc}) on ${BASE_MAINNET} only (PAYDOC_NETWORKS). Nothing was signed or paid.`);
  });

  it('refuses an amount that is not a plain number of atomic units', () => {
    for (const amount of ['-1', '1e6', '0x10', '1'.repeat(31), '']) {
      expect(refusal(quote(offer({ amount }))), amount).to.startWith('the service offers only payments this bridge does not sign');
    }
    expect(chooseOffer(quote(offer({ amount: '9'.repeat(30) })), { networks: [BASE] }).amount).to.have.length(30);
  });

  it('with a channel deposit, pays Base only through the channel, and says so', () => {
    const channel = offer({ scheme: 'batch-settlement' });
    expect(chooseOffer(quote(offer(), channel), { networks: [BASE], channelDeposit: 1n })).to.shallow.equal(channel);
    expect(refusal(quote(offer()), [BASE], 1n)).to.endWith(
      `this bridge signs USDC (${BASE.usdc}) on ${BASE_MAINNET} through a payment channel (CHANNEL_DEPOSIT_USD) only (PAYDOC_NETWORKS). `
      + 'Nothing was signed or paid.');
    expect(refusal(quote(channel))).to.contain(`(scheme batch-settlement)`);
  });

  it('names at most five offers, each bounded, and an x402 version it does not speak', () => {
    const many = Array.from({ length: 9 }, (_, i) => offer({ network: `eip155:${i}`, asset: `${'A'.repeat(200)}${i}` }));
    const message = refusal(quote(...many));
    expect(message.match(/ of A+ on /g)).to.have.length(5);
    expect(message).to.not.contain('A'.repeat(81));
    expect(refusal({ ...quote(offer()), x402Version: 1 })).to.startWith(
      'the service offers only payments this bridge does not sign: x402 version 1;');
    expect(refusal(quote())).to.startWith('the service offers only payments this bridge does not sign: none;');
    expect(describeOffer(offer({ amount: '1\n2' }))).to.equal(`1 2 of ${BASE.usdc} on ${BASE_MAINNET}`);
  });

  it('knows a quote: a version number and a list of offers', () => {
    expect(isPaymentRequired(quote())).to.be.true();
    expect(isPaymentRequired({ x402Version: '2', accepts: [] })).to.be.false();
    expect(isPaymentRequired({ x402Version: 2 })).to.be.false();
    expect(isPaymentRequired(null)).to.be.false();
  });
});

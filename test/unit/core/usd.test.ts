// core/usd.ts: atomic USDC (6 decimals) to the dollar strings people read, and the dollar
// amounts people write back to atomic units, exactly (no float anywhere on the way).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { fromUsd, toUsd, USDC_DECIMALS } from '../../../core/usd.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('USDC amounts and dollars', () => {
  it('writes atomic units as the shortest dollar string', () => {
    expect(USDC_DECIMALS).to.equal(6);
    expect(toUsd(5000n)).to.equal('0.005');
    expect(toUsd(1_500_000n)).to.equal('1.5');
    expect(toUsd(1n)).to.equal('0.000001');
    expect(toUsd(0n)).to.equal('0');
    expect(toUsd(2_000_000n)).to.equal('2');
    // Beyond what a double holds exactly: the digits stay exact.
    expect(toUsd(9_007_199_254_740_993n)).to.equal('9007199254.740993');
  });

  it('reads the dollar amounts a person writes, and refuses anything else', () => {
    expect(fromUsd('0.10')).to.equal(100_000n);
    expect(fromUsd('5')).to.equal(5_000_000n);
    expect(fromUsd(' 0.005 ')).to.equal(5000n);
    expect(fromUsd('0.000001')).to.equal(1n);
    for (const text of ['', '.5', '1.', '-1', '1e3', '0.0000001', '1,50', '$1', 'one', '1234567890123']) {
      expect(fromUsd(text), text).to.be.undefined();
    }
  });

  it('gives back the same amount both ways, for every price the service can quote', () => {
    for (const atomic of [1n, 999n, 5000n, 10_000n, 123_456n, 1_000_000n, 50_000_000n, 999_999_999_999_999_999n]) {
      expect(fromUsd(toUsd(atomic)), String(atomic)).to.equal(atomic);
    }
  });
});

// server/payment/pricing.ts: the price of one call from its operation's declaration (flat, or
// the rate times every page of every input) and the range the discovery documents advertise.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { operationById } from '../../../../operations/index.js';
import { priceOf, priceRange } from '../../../../server/payment/pricing.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('pricing', () => {
  it('a flat operation costs its rate whatever it is given', () => {
    const resize = operationById('image.resize');
    expect(resize.price).to.equal({ model: 'flat', rate: 5000 });
    expect(priceOf(resize, [])).to.equal(5000n);
    expect(priceOf(resize, [40])).to.equal(5000n);
    expect(priceRange(resize)).to.equal({ min: 5000n, max: 5000n });
  });

  it('a per-page operation costs its rate times the pages of all its inputs', () => {
    const split = operationById('pdf.split');
    expect(split.price).to.equal({ model: 'per-page', rate: 5000 });
    expect(priceOf(split, [3])).to.equal(15_000n);
    const merge = operationById('pdf.merge');
    expect(priceOf(merge, [2, 5, 1])).to.equal(BigInt(merge.price.rate) * 8n);
  });

  it('a per-page price needs at least one page: no input, zero pages or an unsafe count is an error, never a free call', () => {
    const split = operationById('pdf.split');
    expect(() => priceOf(split, [])).to.throw('a per-page price needs at least one page');
    expect(() => priceOf(split, [0])).to.throw('a per-page price needs at least one page');
    expect(() => priceOf(split, [Number.MAX_SAFE_INTEGER, 1])).to.throw('a per-page price needs at least one page');
  });

  it('advertises one page at the rate up to the page limit times the rate, and no maximum without a limit', () => {
    const render = operationById('pdf.render');
    expect(render.input.maxPages).to.equal(50);
    expect(priceRange(render)).to.equal({ min: 10_000n, max: 500_000n });
    const split = operationById('pdf.split');
    expect(split.input.maxPages).to.be.undefined();
    expect(priceRange(split)).to.equal({ min: 5000n });
  });
});

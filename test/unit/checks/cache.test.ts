// The inspection cache (checks/cache.ts): a quote and its paid retry inspect a file once.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { InspectionCache } from '../../../checks/cache.js';
import { makePdf, textPages } from '../../support/pdf-fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('inspection cache', () => {
  it('keys by the bytes and the password, forgets after its time, and drops the oldest beyond its size', async () => {
    const lookups: boolean[] = [];
    const cache = new InspectionCache({ maxEntries: 2, ttlMs: 50, onLookup: (hit) => lookups.push(hit) });
    const bytes = makePdf(textPages(1));
    const digest = cache.digest(bytes);
    expect(cache.digest(Buffer.from(bytes))).to.equal(digest);
    expect(cache.digest(bytes, 'secret')).to.not.equal(digest);
    expect(cache.digest(bytes, 'secret')).to.not.equal(cache.digest(bytes, 'other'));
    expect(new InspectionCache().digest(bytes)).to.not.equal(digest); // salted per cache
    cache.set(`pdf:${digest}`, { pages: 1 });
    expect(cache.get(`pdf:${digest}`)).to.equal({ pages: 1 });
    expect(cache.get(`pdf:${cache.digest(makePdf(textPages(2)))}`)).to.be.undefined();
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.size).to.equal(2);
    expect(cache.get(`pdf:${digest}`)).to.be.undefined();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(cache.get('a')).to.be.undefined();
    expect(lookups).to.equal([true, false, false, false]);
  });
});

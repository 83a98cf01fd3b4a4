// server/expiring-store.ts: entries kept until they expire, their bytes counted through every change.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { ExpiringStore, tokenKey } from '../../../server/expiring-store.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('server/expiring-store', () => {
  it('counts entries and bytes as they are set, replaced, updated and deleted', () => {
    const store = new ExpiringStore<string>();
    store.set('a', 'first', 10, Infinity);
    store.set('b', 'second', 5, Date.now() + 60_000);
    expect(store.size).to.equal({ count: 2, bytes: 15 });
    store.set('a', 'again', 3, Infinity);
    expect(store.size).to.equal({ count: 2, bytes: 8 });
    store.update('b', { value: 'ended', bytes: 20 });
    expect(store.get('b')).to.include({ value: 'ended', bytes: 20 });
    expect(store.size.bytes).to.equal(23);
    store.update('missing', { bytes: 100 });
    store.delete('a');
    store.delete('a');
    expect(store.size).to.equal({ count: 1, bytes: 20 });
    store.clear();
    expect(store.size).to.equal({ count: 0, bytes: 0 });
  });

  it('an expired entry is gone, with its bytes; one that expires at Infinity stays', async () => {
    const store = new ExpiringStore<string>();
    store.set('short', 'x', 7, Date.now() + 20);
    store.set('running', 'y', 0, Infinity);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(store.get('short')).to.be.undefined();
    expect(store.get('running')!.value).to.equal('y');
    expect(store.size).to.equal({ count: 1, bytes: 0 });
    store.update('running', { expiresAt: Date.now() - 1 });
    expect(store.size.count).to.equal(0);
  });

  it('a token is kept as its SHA-256 hash, never as itself', () => {
    const token = 'A'.repeat(43);
    expect(tokenKey(token)).to.equal('DwBzhbb51LfusnSGBa_hqYSgo7-j8BTQnip4TOnlzRo').and.to.not.include(token);
  });
});

// server/payment/held-results.ts: results held for the identical retry of a payment whose answer
// was lost. What a service test cannot pin down: the bounds (bytes and count) never push out a
// result someone may have paid for, a replaced entry is counted once, expiry frees its memory, and
// a delivery is remembered (by its payload digest) for its own, longer time.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { HeldResults, HELD_RESULT_LIMITS, type HeldResultLimits } from '../../../../server/payment/held-results.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const limits = (overrides: Partial<HeldResultLimits> = {}): HeldResultLimits => ({
  maxBytes: 1000, maxCount: 3, ttlMs: 60_000, deliveredTtlMs: 60_000, ...overrides,
});
interface Result { heldBytes: number; name: string }
const result = (heldBytes: number, name = 'r'): Result => ({ heldBytes, name });
const entry = (heldBytes: number, payloadDigest = 'digest-1') => ({
  payloadDigest, result: result(heldBytes), settlement: 'unknown' as const,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('held results', () => {
  it('holds a result under its key until its time is up, with the payload that bought it', () => {
    const held = new HeldResults<Result>(limits());
    const before = Date.now();
    const receipt = { success: true, transaction: '0xab', network: 'eip155:31337' } as const;
    expect(held.hold('nonce-a', { payloadDigest: 'd-a', result: result(10, 'a'), settlement: 'settled', receipt })).to.be.true();
    const got = held.get('nonce-a')!;
    expect([got.payloadDigest, got.result, got.settlement, got.receipt]).to.equal(['d-a', { heldBytes: 10, name: 'a' }, 'settled', receipt]);
    expect(got.expiresAt - before).to.be.within(60_000, 60_000 + (Date.now() - before));
    expect(held.get('nonce-b')).to.be.undefined();
    expect(held.size).to.equal({ count: 1, bytes: 10 });
  });

  it('a result past the byte bound or the count bound is not held, and nothing held is pushed out for it', () => {
    const held = new HeldResults<Result>(limits());
    expect(held.hold('a', entry(600))).to.be.true();
    expect(held.hold('b', entry(401))).to.be.false();
    expect(held.hold('b', entry(400))).to.be.true();
    expect(held.size).to.equal({ count: 2, bytes: 1000 });
    expect(held.hold('c', entry(1))).to.be.false();
    expect(held.hold('c', entry(0))).to.be.true();
    expect(held.hold('d', entry(0))).to.be.false();
    expect([...held.entries()].map(([key]) => key)).to.equal(['a', 'b', 'c']);
    expect(new HeldResults<Result>(limits()).hold('huge', entry(1001))).to.be.false();
  });

  it('holding again under the same key replaces the entry, counted once (a full store takes the replacement)', () => {
    const held = new HeldResults<Result>(limits({ maxCount: 2 }));
    held.hold('a', entry(500));
    held.hold('b', entry(500));
    expect(held.hold('a', { payloadDigest: 'digest-2', result: result(300, 'again'), settlement: 'settled' })).to.be.true();
    expect(held.size).to.equal({ count: 2, bytes: 800 });
    const replaced = held.get('a')!;
    expect([replaced.payloadDigest, replaced.result.name, replaced.settlement]).to.equal(['digest-2', 'again', 'settled']);
    // A replacement that does not fit leaves the key empty: the old entry was dropped first.
    expect(held.hold('b', entry(801))).to.be.false();
    expect([held.get('b'), held.size]).to.equal([undefined, { count: 1, bytes: 300 }]);
  });

  it('an expired result is gone from get and entries, and its memory is free for the next one', async () => {
    const held = new HeldResults<Result>(limits({ maxBytes: 100, ttlMs: 40 }));
    held.hold('old', entry(100));
    expect(held.hold('new', entry(1))).to.be.false();
    await sleep(60);
    expect([...held.entries()]).to.equal([]);
    expect(held.get('old')).to.be.undefined();
    expect(held.size).to.equal({ count: 0, bytes: 0 });
    expect(held.hold('new', entry(100))).to.be.true();
  });

  it('a delivered result is dropped and its delivery remembered for deliveredTtlMs, under the payload that bought it', async () => {
    const held = new HeldResults<Result>(limits({ ttlMs: 30, deliveredTtlMs: 80 }));
    held.hold('a', entry(50, 'payload-a'));
    held.markDelivered('a', 'payload-a');
    expect([held.get('a'), held.size, held.deliveredUnder('a')?.payloadDigest]).to.equal([undefined, { count: 0, bytes: 0 }, 'payload-a']);
    expect(held.deliveredUnder('b')).to.be.undefined();
    // Past the held results' time, within the deliveries'.
    await sleep(45);
    expect(held.deliveredUnder('a')?.payloadDigest).to.equal('payload-a');
    await sleep(60);
    expect(held.deliveredUnder('a')).to.be.undefined();
  });

  it('remembers at most 100,000 deliveries: past that the oldest are forgotten first', () => {
    const held = new HeldResults<Result>(limits());
    for (let i = 0; i <= 100_000; i++) held.markDelivered(`k${i}`, `p${i}`);
    expect(held.deliveredUnder('k0')).to.be.undefined();
    expect(held.deliveredUnder('k1')?.payloadDigest).to.equal('p1');
    expect(held.deliveredUnder('k100000')?.payloadDigest).to.equal('p100000');
  });

  it('clear forgets results and deliveries; drop of an unknown key changes nothing', () => {
    const held = new HeldResults<Result>(limits());
    held.hold('a', entry(10));
    held.markDelivered('b', 'p');
    held.drop('unknown');
    expect(held.size).to.equal({ count: 1, bytes: 10 });
    held.clear();
    expect([held.size, held.get('a'), held.deliveredUnder('b')]).to.equal([{ count: 0, bytes: 0 }, undefined, undefined]);
  });

  it('the default bounds: 512 MiB and 256 results for 5 minutes, deliveries remembered 10 minutes (links share the first two)', () => {
    expect(HELD_RESULT_LIMITS).to.equal({ maxBytes: 512 * 1024 * 1024, maxCount: 256, ttlMs: 300_000, deliveredTtlMs: 600_000 });
  });
});

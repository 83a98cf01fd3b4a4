// The long-job store (server/jobs.ts): a job exists only once accepted, a call that ends before is
// answered as itself, failures become the error body, tokens are unguessable and kept as hashes,
// ended jobs expire, the store is bounded, and the registry learns which replica holds a job.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { Jobs, JOB_TOKEN, jobHolder, jobLifetimeMs, jobRegistryKey } from '../../../server/jobs.js';
import { ServiceError } from '../../../core/errors.js';
import { loadConfig } from '../../../server/config.js';
import type { SettleResponse } from '@x402/core/types';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const receipt: SettleResponse = { success: true, transaction: '0xabc', network: 'eip155:8453' };
const done = (value: string) => ({ state: 'done' as const, receipt, report: { value } });

/** A registry in memory, as the payment guard's store is. */
function registry() {
  const values = new Map<string, { value: string; seconds: number }>();
  return {
    values,
    record: async (id: string, value: string, seconds: number) => { values.set(id, { value, seconds }); },
    lookup: async (id: string) => values.get(id)?.value,
  };
}

describe('long jobs', () => {
  it('a call that ends before acceptance is answered as itself, and no job is made', async () => {
    const jobs = new Jobs({ keepMs: 60_000 });
    expect(await jobs.start(async () => 'quote', done, 60)).to.equal({ accepted: false, outcome: 'quote' });
    const refused = await jobs.start(() => Promise.reject(new ServiceError('FIELD_INVALID', 'bad')), done, 60).then(() => undefined, (e: unknown) => e);
    expect((refused as ServiceError).code).to.equal('FIELD_INVALID');
    expect(jobs.size).to.equal(0);
  });

  it('once accepted, the token comes at once; the job runs on and ends done or failed with the error body', async () => {
    const jobs = new Jobs({ keepMs: 60_000 });
    let finish!: (value: string) => void;
    const work = (accepted: () => void) => {
      accepted();
      return new Promise<string>((resolve) => { finish = resolve; });
    };
    const started = await jobs.start(work, done, 60);
    expect(started.accepted).to.be.true();
    const token = (started as { token: string }).token;
    expect(token).to.match(JOB_TOKEN);
    expect(jobs.get(token)).to.equal({ state: 'running' });
    finish('ok');
    await new Promise((r) => setImmediate(r));
    expect(jobs.get(token)).to.equal({ state: 'done', receipt, report: { value: 'ok' } });

    const failing = await jobs.start(async (accepted) => { accepted(); throw new ServiceError('CORRUPT_INPUT', 'the image cannot be decoded'); }, done, 60);
    await new Promise((r) => setImmediate(r));
    expect(jobs.get((failing as { token: string }).token)).to.equal({ state: 'failed', error: { code: 'CORRUPT_INPUT', status: 422, message: 'the image cannot be decoded' } });
    // Anything else is the catalog's INTERNAL, with no detail.
    const crashing = await jobs.start(async (accepted) => { accepted(); throw new Error('secret path /tmp/x'); }, done, 60);
    await new Promise((r) => setImmediate(r));
    const crashed = jobs.get((crashing as { token: string }).token) as { error: { code: string; message: string } };
    expect(crashed.error.code).to.equal('INTERNAL');
    expect(crashed.error.message).to.not.include('secret');
  });

  it('tokens are 256 random bits, different each time; an unknown token finds nothing', async () => {
    const jobs = new Jobs({ keepMs: 60_000 });
    const tokens = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const started = await jobs.start(async (accepted) => { accepted(); return 'x'; }, done, 60);
      tokens.add((started as { token: string }).token);
    }
    expect(tokens.size).to.equal(20);
    expect(Buffer.from([...tokens][0], 'base64url').length).to.equal(32);
    expect(jobs.get('A'.repeat(43))).to.be.undefined();
  });

  it('an ended job is kept keepMs, then gone; a running one is not expired', async () => {
    const jobs = new Jobs({ keepMs: 30 });
    let finish!: () => void;
    const running = await jobs.start((accepted) => { accepted(); return new Promise<string>((resolve) => { finish = () => resolve('late'); }); }, done, 60);
    const ended = await jobs.start(async (accepted) => { accepted(); return 'x'; }, done, 60);
    await new Promise((r) => setTimeout(r, 60));
    expect(jobs.get((ended as { token: string }).token)).to.be.undefined();
    expect(jobs.get((running as { token: string }).token)).to.equal({ state: 'running' });
    finish();
    await new Promise((r) => setImmediate(r));
    expect(jobs.get((running as { token: string }).token)!.state).to.equal('done');
  });

  it('a full store refuses before payment (requireRoom) and at acceptance with a 503 that says nothing was charged', async () => {
    const jobs = new Jobs({ keepMs: 60_000, maxCount: 1 });
    expect(() => jobs.requireRoom()).to.not.throw();
    await jobs.start(async (accepted) => { accepted(); return 'x'; }, done, 60);
    expect(jobs.hasRoom()).to.be.false();
    const early = (() => { try { jobs.requireRoom(); } catch (err) { return err as ServiceError; } })();
    expect([early?.code, early?.extra.retryAfterSeconds]).to.equal(['UNAVAILABLE', 60]);
    const refused = await jobs.start(async (accepted) => { accepted(); return 'never'; }, done, 60).then(() => undefined, (e: unknown) => e);
    expect((refused as ServiceError).code).to.equal('UNAVAILABLE');
    expect((refused as ServiceError).message).to.include('nothing was charged');
  });

  it('the registry holds the hash of the token with this replica\'s address, and says where a job is', async () => {
    const store = registry();
    const jobs = new Jobs({ keepMs: 60_000, registry: store, replicaUrl: () => 'http://10.0.0.5:8080' });
    const started = await jobs.start(async (accepted) => { accepted(); return 'x'; }, done, 1234);
    const token = (started as { token: string }).token;
    const [[key, entry]] = [...store.values];
    expect(key).to.equal(jobRegistryKey(token));
    expect(key).to.not.include(token);
    expect(entry).to.equal({ value: 'held http://10.0.0.5:8080', seconds: 1234 });
    expect(await jobHolder(store, token)).to.equal({ address: 'http://10.0.0.5:8080' });
    expect(await jobHolder(store, 'B'.repeat(43))).to.be.undefined();
  });

  it('idle waits for the calls under way (jobs and tracked tasks), or for its timeout', async () => {
    const jobs = new Jobs({ keepMs: 60_000 });
    let finish!: () => void;
    await jobs.start((accepted) => { accepted(); return new Promise<string>((resolve) => { finish = () => resolve('x'); }); }, done, 60);
    let taskEnded = false;
    jobs.track(new Promise((resolve) => setTimeout(resolve, 30)).then(() => { taskEnded = true; }));
    const started = Date.now();
    await jobs.idle(50);
    expect(Date.now() - started).to.be.within(45, 500);
    expect(taskEnded).to.be.true();
    setTimeout(() => finish(), 20);
    await jobs.idle(5000);
    expect(Date.now() - started).to.be.below(2000);
  });

  it('a job\'s lifetime covers the longest deadline, a push, settlement and its keeping', () => {
    const config = loadConfig({}, {});
    expect(jobLifetimeMs(config)).to.be.above(config.jobTimeoutMs + config.resultLinkTtlS * 1000);
  });
});

// server/payment/redis-guard.ts: the guard replicas share, on a throwaway redis-server on loopback.
// What the scale test cannot pin down: two replicas' claims of one payment race and exactly one
// wins; a claim expires with its time; Redis down makes claims throw (the gate answers 503, never
// a second use); and a Redis that restarts empty is reported once it is reached again.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import os from 'node:os';
import path from 'node:path';
import net, { type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { RedisGuard } from '../../../../server/payment/redis-guard.js';
import { CLAIMED } from '../../../../server/payment/guard.js';
import { RedisProcess, waitFor } from '../../../support/processes.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('server/payment/redis-guard', () => {
  let dir: string;
  let redis: RedisProcess;
  let replicaA: RedisGuard;
  let replicaB: RedisGuard;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'paydoc-redis-guard-'));
    redis = new RedisProcess(await freePort(), dir);
    await redis.start();
    replicaA = await RedisGuard.connect(redis.url);
    replicaB = await RedisGuard.connect(redis.url);
  });

  after(async () => {
    await replicaA.close();
    await replicaB.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one replica\'s claim is seen by the other: claimed, recorded, released', async () => {
    expect(await replicaA.claim('eip155:1:0xa:0x1', 60)).to.be.true();
    expect(await replicaB.claim('eip155:1:0xa:0x1', 60)).to.be.false();
    expect(await replicaB.lookup('eip155:1:0xa:0x1')).to.equal(CLAIMED);
    await replicaA.record('eip155:1:0xa:0x1', 'delivered digest-9', 60);
    expect(await replicaB.lookup('eip155:1:0xa:0x1')).to.equal('delivered digest-9');
    await replicaB.release('eip155:1:0xa:0x1');
    expect(await replicaA.lookup('eip155:1:0xa:0x1')).to.be.undefined();
  });

  it('claims of one payment racing from two replicas: exactly one wins', async () => {
    const claims = Array.from({ length: 20 }, (_, i) => (i % 2 ? replicaA : replicaB).claim('race', 60));
    expect((await Promise.all(claims)).filter(Boolean)).to.have.length(1);
  });

  it('a claim ends with its time, and the id can be claimed again', async () => {
    expect(await replicaA.claim('brief', 1)).to.be.true();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(await replicaB.lookup('brief')).to.be.undefined();
    expect(await replicaB.claim('brief', 60)).to.be.true();
  });

  it('Redis down: a claim throws rather than risk a second use; restarted empty, the guard says so once reached again', async () => {
    let reconnects = 0;
    replicaA.onReconnect(() => reconnects++);
    expect(await replicaA.claim('before-restart', 60)).to.be.true();
    await redis.stop();
    await expect(replicaA.claim('while-down', 60)).to.reject();
    await redis.start();
    await waitFor('the guard to reconnect', async () => (reconnects > 0 ? true : undefined), 10_000);
    expect(reconnects).to.equal(1);
    expect(await replicaA.lookup('before-restart')).to.be.undefined();
    expect(await replicaA.claim('while-down', 60)).to.be.true();
  });
});

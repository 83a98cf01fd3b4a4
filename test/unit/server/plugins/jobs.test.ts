// server/plugins/jobs.ts: GET /v1/jobs/{token} on hapi servers holding real job stores and sharing
// one registry (the in-memory guard, as replicas share Redis). A job accepted by one replica is
// read at another (passed on to the holder, running then done); a holder that cannot be reached,
// or that accepts the connection and never answers, gives 503 RESULT_ELSEWHERE with Retry-After,
// within the forward's own bounds, never a 500 or a hang. The paid path is service/long-jobs and
// system/scale (two replicas sharing Redis and the chain).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import net from 'node:net';
import pino from 'pino';
import type { SettleResponse } from '@x402/core/types';
import { jobsPlugin } from '../../../../server/plugins/jobs.js';
import { errorsPlugin } from '../../../../server/plugins/errors.js';
import { Jobs, recordJobHolder } from '../../../../server/jobs.js';
import { MemoryGuard } from '../../../../server/payment/guard.js';
import { loadConfig, type Config } from '../../../../server/config.js';
import type { App } from '../../../../server/app.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface Replica { server: Hapi.Server; jobs: Jobs; url: string }

// How long a forward waits for a holder that accepted the connection (FACILITATOR_TIMEOUT_MS).
const IDLE_MS = 600;

/** A replica with the parts the route reads: its settings, its job store recording into the shared registry. */
async function startReplica(registry: MemoryGuard, settings: Partial<Config> = {}): Promise<Replica> {
  const server = Hapi.server({ host: '127.0.0.1', port: 0 });
  const config = loadConfig({ facilitatorTimeoutMs: IDLE_MS, ...settings }, {});
  const jobs = new Jobs({ keepMs: 60_000, registry, replicaUrl: () => config.replicaUrl || undefined });
  const app = { config, jobs, gate: { guard: registry }, logger: pino({ enabled: false }) } as unknown as App;
  await server.register([{ plugin: errorsPlugin, options: { app } }, { plugin: jobsPlugin, options: { app } }]);
  await server.start();
  // Where the other replicas reach this one, unless the test says it is elsewhere.
  config.replicaUrl = settings.replicaUrl ?? server.info.uri;
  return { server, jobs, url: server.info.uri };
}

const receipt: SettleResponse = { success: true, transaction: '0xabc', network: 'eip155:8453' };

/** Starts a job at the replica that runs until `finish` is called; its token. */
async function runningJob(replica: Replica): Promise<{ token: string; finish: () => void }> {
  let finish!: () => void;
  const started = await replica.jobs.start(
    (accepted) => { accepted(); return new Promise<string>((resolve) => { finish = () => resolve('ok'); }); },
    () => ({ state: 'done', receipt }), 60,
  );
  if (!started.accepted) throw new Error('not accepted');
  // The holder is recorded without being awaited, as the service does.
  await new Promise((resolve) => setImmediate(resolve));
  return { token: started.token, finish };
}

async function answerOf(url: string): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
}

describe('server/plugins/jobs', () => {
  const registry = new MemoryGuard();
  let here: Replica;
  let holder: Replica;

  before(async () => {
    here = await startReplica(registry);
    holder = await startReplica(registry);
  });

  after(async () => {
    await here.server.stop();
    await holder.server.stop();
  });

  it('a job accepted by another replica is read here: passed on to its holder, running, then done', async () => {
    const { token, finish } = await runningJob(holder);
    expect(here.jobs.get(token)).to.be.undefined();
    const running = await answerOf(`${here.url}/v1/jobs/${token}`);
    expect([running.status, running.body]).to.equal([200, { job: { state: 'running' } }]);
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    const done = await answerOf(`${here.url}/v1/jobs/${token}`);
    expect([done.status, done.body]).to.equal([200, { job: { state: 'done', receipt } }]);
  });

  it('a holder that cannot be reached: 503 RESULT_ELSEWHERE with Retry-After, at once', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const gone = await startReplica(registry, { replicaUrl: `http://127.0.0.1:${port}` });
    try {
      const { token, finish } = await runningJob(gone);
      const started = Date.now();
      const answer = await answerOf(`${here.url}/v1/jobs/${token}`);
      expect([answer.status, answer.retryAfter, (answer.body.error as { code: string }).code]).to.equal([503, '1', 'RESULT_ELSEWHERE']);
      expect((answer.body.error as { message: string }).message).to.include('held by another instance');
      expect(Date.now() - started).to.be.below(IDLE_MS);
      finish();
    } finally {
      await gone.server.stop();
    }
  });

  it('a holder that accepts the connection and never answers: 503 RESULT_ELSEWHERE once the forward\'s idle time has passed, no hang', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => { sockets.push(socket); });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const token = (await runningJob(holder)).token;
    recordJobHolder(registry, `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, token, 60);
    await new Promise((resolve) => setImmediate(resolve));
    holder.jobs.clear();
    try {
      const started = Date.now();
      const answer = await answerOf(`${here.url}/v1/jobs/${token}`);
      expect([answer.status, answer.retryAfter, (answer.body.error as { code: string }).code]).to.equal([503, '1', 'RESULT_ELSEWHERE']);
      expect(sockets.length).to.equal(1);
      expect(Date.now() - started).to.be.within(IDLE_MS - 50, IDLE_MS + 2000);
    } finally {
      sockets.forEach((socket) => socket.destroy());
      silent.close();
    }
  });

  it('held elsewhere with no address: 503 RESULT_ELSEWHERE; an unknown token: 404 NOT_FOUND', async () => {
    const token = (await runningJob(holder)).token;
    recordJobHolder(registry, undefined, token, 60);
    await new Promise((resolve) => setImmediate(resolve));
    holder.jobs.clear();
    const elsewhere = await answerOf(`${here.url}/v1/jobs/${token}`);
    expect([elsewhere.status, elsewhere.retryAfter]).to.equal([503, '1']);
    const unknown = await answerOf(`${here.url}/v1/jobs/${'B'.repeat(43)}`);
    expect([unknown.status, (unknown.body.error as { code: string }).code]).to.equal([404, 'NOT_FOUND']);
  });
});

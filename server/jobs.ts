// Long jobs (HTTP `Prefer: respond-async`): a paid call answered 202 once its payment is verified,
// then run to its end without the client; its state is read at /v1/jobs/{token}. The payment is
// settled only when the result is ready, as for any call, so a job that fails is never charged.
// Jobs live in this process's memory only, keyed by the hash of their 256-bit token.
import { randomBytes } from 'node:crypto';
import type { SettleResponse } from '@x402/core/types';
import { ServiceError, asServiceError, type ErrorBody } from '../core/errors.js';
import { HELD_RESULT_LIMITS } from './payment/held-results.js';
import type { LinkReceipt, PushReceipt, LinkRegistry } from './delivery.js';
import { ABORT_GRACE_MS } from './pool.js';
import type { Config } from './config.js';
import { ExpiringStore, tokenKey as keyOf } from './expiring-store.js';

/** What GET /v1/jobs/{token} answers inside `job`. */
export type JobState =
  | { state: 'running' }
  | { state: 'failed'; error: ErrorBody['error'] }
  | { state: 'done'; result?: LinkReceipt; delivered?: PushReceipt; receipt: SettleResponse; report?: Record<string, unknown> };

/** How the start of a job ended: accepted (its token), or the call's own outcome before acceptance. */
export type JobStart<T> = { accepted: true; token: string } | { accepted: false; outcome: T };

// 32 random bytes in base64url, as result links.
export const JOB_TOKEN = /^[A-Za-z0-9_-]{43}$/;

const JOB_HELD = 'held';

/**
 * The longest a job (or an MCP task) can be asked about: the longest deadline with its grace, a
 * push to deliver_to, settlement, then its keeping (RESULT_LINK_TTL_S, the result link's lifetime).
 */
type LifetimeSettings = Pick<Config, 'jobTimeoutMs' | 'urlFetchTimeoutMs' | 'facilitatorTimeoutMs' | 'resultLinkTtlS'>;

export function jobLifetimeMs(config: LifetimeSettings): number {
  return config.jobTimeoutMs + ABORT_GRACE_MS + config.urlFetchTimeoutMs + config.facilitatorTimeoutMs + config.resultLinkTtlS * 1000;
}

/** Records in the shared store that this replica holds the job (or task) with this token; best effort. */
export function recordJobHolder(registry: LinkRegistry | undefined, replicaUrl: string | undefined, token: string, seconds: number): void {
  // An empty REPLICA_URL says nothing of where the job is.
  void registry?.record(jobRegistryKey(token), replicaUrl ? `${JOB_HELD} ${replicaUrl}` : JOB_HELD, seconds).catch(() => undefined);
}

/** The registry's key for a job token: its hash, never the token. */
export function jobRegistryKey(token: string): string {
  return `job:${keyOf(token)}`;
}

export interface JobsOptions {
  /** How long a job's state is kept after it ended (the result link's own lifetime, RESULT_LINK_TTL_S). */
  keepMs: number;
  /** Jobs kept at once, running or ended; a paid request past it is refused before payment. */
  maxCount?: number;
  /** Where the other replicas learn which one holds a job (the payment guard's store), and this one's address. */
  registry?: LinkRegistry;
  /** Read when a job is accepted (REPLICA_URL; empty: none). */
  replicaUrl?: () => string | undefined;
}

export class Jobs {
  /** A running job does not expire (it is bounded by its deadline); an ended one is kept keepMs. */
  private readonly jobs = new ExpiringStore<JobState>();
  /** Calls still under way (HTTP jobs and MCP tasks), which a stopping service lets finish. */
  private readonly running = new Set<Promise<unknown>>();
  private readonly maxCount: number;

  constructor(private readonly options: JobsOptions) {
    this.maxCount = options.maxCount ?? HELD_RESULT_LIMITS.maxCount;
  }

  /** Whether another job fits now. */
  hasRoom(): boolean {
    return this.jobs.size.count < this.maxCount;
  }

  /**
   * Refuses a job that does not fit: before its payment is verified, and again at acceptance
   * (another job may have taken the last place meanwhile).
   */
  requireRoom(): void {
    if (!this.hasRoom()) throw unavailable();
  }

  /**
   * Runs `call`, which calls `accepted()` once its payment is verified and its work is about to
   * start. Resolves then with the job's token; or, when the call ended before that (a quote, a
   * refusal), with its outcome or its error as if it had not been a job. After acceptance, the
   * call's outcome becomes the job's state through `stateOf`, and any error a failed state.
   * `recordSeconds` is how long the registry keeps the job's holder: its run and its keeping.
   */
  start<T>(call: (accepted: () => void) => Promise<T>, stateOf: (outcome: T) => JobState, recordSeconds: number): Promise<JobStart<T>> {
    return new Promise((resolve, reject) => {
      let token: string | undefined;
      const accepted = () => {
        this.requireRoom();
        token = randomBytes(32).toString('base64url');
        this.jobs.set(keyOf(token), { state: 'running' }, 0, Infinity);
        recordJobHolder(this.options.registry, this.options.replicaUrl?.(), token, recordSeconds);
        resolve({ accepted: true, token });
      };
      this.track(call(accepted).then(
        (outcome) => (token ? this.end(token, stateOf(outcome)) : resolve({ accepted: false, outcome })),
        (err: unknown) => (token ? this.end(token, failedState(err)) : reject(err)),
      ));
    });
  }

  /** Counts a call that runs on without its client (an MCP task) among those a stop waits for. */
  track(call: Promise<unknown>): void {
    const settled = call.catch(() => undefined).finally(() => this.running.delete(settled));
    this.running.add(settled);
  }

  /**
   * Resolves when every call under way has ended (its result kept, its payment settled or
   * released), or after `timeoutMs`: a stopping service waits for this before it stops its workers
   * and its payment gate, so that no job is settled after the gate has closed.
   */
  async idle(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => { timer = setTimeout(resolve, timeoutMs); });
    await Promise.race([Promise.all([...this.running]), timeout]);
    clearTimeout(timer);
  }

  /** The job's state, while it is kept; undefined for an unknown or expired token. */
  get(token: string): JobState | undefined {
    return this.jobs.get(keyOf(token))?.value;
  }

  get size(): number {
    return this.jobs.size.count;
  }

  clear(): void {
    this.jobs.clear();
  }

  private end(token: string, job: JobState): void {
    this.jobs.update(keyOf(token), { value: job, expiresAt: Date.now() + this.options.keepMs });
  }
}

/** A failed job's state: the error body the synchronous call would have answered. */
export function failedState(err: unknown): JobState {
  return { state: 'failed', error: asServiceError(err).body().error };
}

function unavailable(): ServiceError {
  return new ServiceError('UNAVAILABLE',
    'the service holds as many long jobs as it can right now; retry in a minute, or call without Prefer: respond-async; nothing was charged',
    { retryAfterSeconds: 60 });
}

/**
 * What the registry says of a job this instance does not hold: held by another instance (with its
 * address, if it said), or undefined (expired, or never made).
 */
export async function jobHolder(registry: LinkRegistry, token: string): Promise<{ address?: string } | undefined> {
  const state = await registry.lookup(jobRegistryKey(token)).catch(() => undefined);
  if (state !== JOB_HELD && !state?.startsWith(`${JOB_HELD} `)) return undefined;
  const address = state.slice(JOB_HELD.length + 1);
  return address ? { address } : {};
}

// One paid call, the same for HTTP routes and MCP tools: a private job directory, every check
// before payment (prepare), the payment gate around the job, and the job's outcome counted.
// The plugins only translate a request into a PaidCall and the outcome into their protocol.
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { priceRange } from './payment/pricing.js';
import { requireProvider } from './content-route.js';
import type { Operation } from '../operations/define.js';
import type { JobOutput } from '../core/job.js';
import { ServiceError } from '../core/errors.js';
import { prepare, execute, jobTimeoutMs, type RawRequest } from './pipeline.js';
import { ABORT_GRACE_MS } from './pool.js';
import { LazyJobDir } from './jobdir.js';
import { prepareDelivery, type Deliverable, type Surface } from './delivery.js';
import type { PaidOutcome, ResourceDescription } from './payment/gate.js';
import type { App } from './app.js';

export interface PaidCall<T> {
  op: Operation;
  raw: RawRequest;
  resource: ResourceDescription;
  /** How the surface answers a result inline, and how much it carries. */
  surface: Surface<T>;
  /**
   * Present when the request carries a payment; read only after the checks, so that bad input
   * is reported before a malformed payment.
   */
  payment?: () => PaymentPayload;
  /** Aborted when the client has gone: the job stops and nothing is settled. */
  clientGone?: AbortSignal;
  /**
   * A long job's start (HTTP respond-async): called once the payment is verified, as the work
   * begins; a throw refuses the call before any work, uncharged.
   */
  accepted?: () => void;
  /**
   * Whether a paid call can still be taken (a long job: room in the job store), asked once the
   * checks passed, after a payment already known got its answer (its held result, or what became of
   * it) and before a new one is verified; a throw refuses it, nothing verified or charged.
   */
  admit?: () => void;
}

export type JobOutcome = 'ok' | 'failed' | 'timeout' | 'cancelled';

function outcomeOf(err: unknown): JobOutcome {
  if (!(err instanceof ServiceError)) return 'failed';
  if (err.code === 'JOB_TIMEOUT') return 'timeout';
  // Refused by the pool before it started (the queue filled up after the quote).
  if (err.code === 'QUEUE_FULL' || err.code === 'CLIENT_GONE') return 'cancelled';
  return 'failed';
}

/**
 * A price probe: a POST with no body or an empty JSON object, as discovery services and crawlers
 * send, is answered with the operation's minimum price (one page for per-page operations), checked
 * for nothing but the provider. A real request is always checked in full before its quote.
 */
export async function probePrice(app: App, op: Operation, resource: ResourceDescription): Promise<PaymentRequired> {
  requireProvider(app.config, op);
  return app.gate.quote(priceRange(op).min, resource);
}

/**
 * Runs one call to its outcome: a quote, or a result ready to be sent with its receipt; refusals
 * are thrown as ServiceError. The result is made deliverable (encoded for the surface, kept for
 * a link, or pushed) before settlement, so a result that cannot be delivered is not charged.
 */
export async function paidCall<T>(app: App, call: PaidCall<T>): Promise<PaidOutcome<Deliverable<T>>> {
  const { op } = call;
  const jobDir = new LazyJobDir(app.config.tmpDir);
  try {
    const prepared = await prepare(op, call.raw, jobDir, app, call.payment !== undefined);
    // The 402 names the media type the result will have, where the plan settled it.
    const mediaType = op.resultMediaType?.(prepared.params as never);
    const resource = mediaType ? { ...call.resource, key: `${call.resource.key} ${mediaType}`, mimeType: mediaType } : call.resource;
    const { delivery, pushTo } = prepared;
    // The payment must outlive the job (the pool stops it a grace after its deadline) and a push.
    const duration = { workMs: jobTimeoutMs(op, app.config) + ABORT_GRACE_MS, ...(pushTo ? { pushMs: app.config.urlFetchTimeoutMs } : {}) };
    return await app.gate.run(prepared.amount, resource, call.payment?.(), call.clientGone, duration, async () => {
      call.accepted?.();
      app.metrics.jobs.inc({ operation: op.id, outcome: 'started' });
      let output: JobOutput;
      try {
        output = await execute(prepared, app.config, app.pool, app.outbound, call.clientGone);
        app.metrics.jobs.inc({ operation: op.id, outcome: 'ok' });
      } catch (err) {
        app.metrics.jobs.inc({ operation: op.id, outcome: outcomeOf(err) });
        throw err;
      }
      const context = {
        links: app.links, outbound: app.outbound, baseUrl: app.config.baseUrl, registry: app.gate.guard,
        ...(app.config.replicaUrl ? { replicaUrl: app.config.replicaUrl } : {}),
      };
      return prepareDelivery(output, delivery, pushTo, call.surface, context, call.clientGone);
    }, call.admit);
  } finally {
    await jobDir.remove();
  }
}

// How a paid result leaves, made ready before settlement so that nothing is charged for a result
// that cannot be delivered: in the answer (within what the surface carries, encoded), kept
// behind a one-time link, or PUT to the buyer's URL (settled only after a 2xx).
import { createHash, randomBytes } from 'node:crypto';
import type { JobOutput } from '../core/job.js';
import { ServiceError, fail, megabytes } from '../core/errors.js';
import { pushToBuyerUrl, type OutboundRules } from './outbound/fetcher.js';
import { HELD_RESULT_LIMITS } from './payment/held-results.js';
import type { Delivery } from './pipeline.js';
import { ExpiringStore, tokenKey as keyOf } from './expiring-store.js';

/** What a result link answers with: where to download it once, and what it is. */
export interface LinkReceipt {
  url: string;
  mediaType: string;
  bytes: number;
  sha256: string;
  expiresAt: string;
}

/** What a push answers with: the buyer's server's status and what was sent. */
export interface PushReceipt {
  status: number;
  bytes: number;
  sha256: string;
  mediaType: string;
}

/**
 * A result ready to be sent; `heldBytes` is what it keeps in memory while held for a retry. The
 * operation's report (output.report) goes with the answer whichever way the file leaves.
 */
export type Deliverable<T> = (
  | { kind: 'inline'; body: T; heldBytes: number; discard?: undefined }
  | { kind: 'link'; result: LinkReceipt; heldBytes: number; discard(): void }
  | { kind: 'pushed'; delivered: PushReceipt; heldBytes: number; discard?: undefined; received: true }
) & { report?: Record<string, unknown> };

/** A surface (HTTP, MCP) says how much it carries inline and encodes a result for itself. */
export interface Surface<T> {
  /** The largest result, in bytes before the surface's own encoding, it answers inline. */
  maxInlineBytes: number;
  /** What "ask for a link instead" is called on this surface, for the refusal's message. */
  linkHint: string;
  encode(output: JobOutput): T;
  /** The memory the encoded answer keeps while it is held for a retry (base64 is a third larger). */
  heldBytesOf(output: JobOutput): number;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * Results kept for a one-time download, in this process's memory only, under the same bounds as
 * held results (count and bytes). The token is 256 random bits and is kept only as its hash, so
 * the store holds no value a log or a heap dump could replay.
 */
export class ResultLinks {
  private readonly stored = new ExpiringStore<JobOutput>();

  constructor(
    private readonly ttlMs: number,
    private readonly limits = { maxBytes: HELD_RESULT_LIMITS.maxBytes, maxCount: HELD_RESULT_LIMITS.maxCount },
  ) {}

  /** Keeps the output and returns its token; refuses, uncharged, when it does not fit. */
  keep(output: JobOutput): { token: string; expiresAt: number } {
    const now = Date.now();
    const size = output.body.byteLength;
    if (size > this.limits.maxBytes) {
      fail('RESULT_TOO_LARGE', `the result is ${megabytes(size)}, more than the ${megabytes(this.limits.maxBytes)} a link can hold; nothing was charged`);
    }
    const held = this.stored.size;
    if (held.bytes + size > this.limits.maxBytes || held.count >= this.limits.maxCount) {
      throw new ServiceError('UNAVAILABLE', 'the service holds as many results for links as it can right now; retry in a minute, or ask for the result inline; nothing was charged', { retryAfterSeconds: 60 });
    }
    const token = randomBytes(32).toString('base64url');
    const expiresAt = now + this.ttlMs;
    this.stored.set(keyOf(token), output, size, expiresAt);
    return { token, expiresAt };
  }

  /** The result behind a token, while it can still be downloaded. */
  get(token: string): JobOutput | undefined {
    return this.stored.get(keyOf(token))?.value;
  }

  /** Ends a link: after its first complete download, or when its result will never be paid for. */
  drop(token: string): void {
    this.stored.delete(keyOf(token));
  }

  get size(): { count: number; bytes: number } {
    return this.stored.size;
  }

  clear(): void {
    this.stored.clear();
  }
}

export interface DeliveryContext {
  links: ResultLinks;
  outbound: OutboundRules;
  baseUrl: string;
  /** Where the replicas learn that a link is held elsewhere (the payment guard's store). */
  registry?: LinkRegistry;
  /** Where the other replicas reach this one (REPLICA_URL), recorded with the links it holds. */
  replicaUrl?: string;
}

/** The part of the payment guard's store that result links use. */
export interface LinkRegistry {
  record(id: string, value: string, ttlSeconds: number): Promise<void>;
  lookup(id: string): Promise<string | undefined>;
}

const LINK_HELD = 'held';
const LINK_ENDED = 'ended';

/** The registry's key for a token: its hash, never the token. */
export function linkRegistryKey(token: string): string {
  return `result-link:${keyOf(token)}`;
}

/**
 * What the registry says of a link this instance does not hold: held by another instance (with
 * the address it recorded, if it said where), or undefined (ended, or never made).
 */
export async function linkHolder(registry: LinkRegistry, token: string): Promise<{ address?: string } | undefined> {
  const state = await registry.lookup(linkRegistryKey(token)).catch(() => undefined);
  if (state !== LINK_HELD && !state?.startsWith(`${LINK_HELD} `)) return undefined;
  const address = state.slice(LINK_HELD.length + 1);
  return address ? { address } : {};
}

/** Ends a link here and tells the other instances, so none of them answers "held elsewhere" for it. */
export async function endLink(context: Pick<DeliveryContext, 'links' | 'registry'>, token: string, ttlSeconds: number): Promise<void> {
  context.links.drop(token);
  await context.registry?.record(linkRegistryKey(token), LINK_ENDED, ttlSeconds).catch(() => undefined);
}

/**
 * Makes the output ready to be sent the way the buyer asked, before anything is settled: a
 * refusal here (too large for the surface, no room for a link, a push that failed) is thrown and
 * nothing is charged.
 */
export async function prepareDelivery<T>(
  output: JobOutput, delivery: Delivery, pushTo: URL | undefined, surface: Surface<T>, context: DeliveryContext, signal?: AbortSignal,
): Promise<Deliverable<T>> {
  const ready = await deliverable(output, delivery, pushTo, surface, context, signal);
  return output.report ? { ...ready, report: output.report } : ready;
}

async function deliverable<T>(
  output: JobOutput, delivery: Delivery, pushTo: URL | undefined, surface: Surface<T>, context: DeliveryContext, signal?: AbortSignal,
): Promise<Deliverable<T>> {
  const size = output.body.byteLength;
  if (delivery.kind === 'link') {
    const { token, expiresAt } = context.links.keep(output);
    const ttlSeconds = Math.ceil((expiresAt - Date.now()) / 1000);
    // Best effort: without the registry a link still works on this instance, the others answer 410.
    await context.registry?.record(linkRegistryKey(token), context.replicaUrl ? `${LINK_HELD} ${context.replicaUrl}` : LINK_HELD, ttlSeconds).catch(() => undefined);
    return {
      kind: 'link', heldBytes: 0,
      result: { url: `${context.baseUrl}/v1/results/${token}`, mediaType: output.mediaType, bytes: size, sha256: sha256(output.body), expiresAt: new Date(expiresAt).toISOString() },
      discard: () => void endLink(context, token, ttlSeconds),
    };
  }
  if (delivery.kind === 'push') {
    const { status } = await pushToBuyerUrl(pushTo!, output.body, output.mediaType, { field: 'deliver_to', rules: context.outbound, ...(signal ? { signal } : {}) });
    return { kind: 'pushed', heldBytes: 0, received: true, delivered: { status, bytes: size, sha256: sha256(output.body), mediaType: output.mediaType } };
  }
  if (size > surface.maxInlineBytes) {
    fail('RESULT_TOO_LARGE', `the result is ${megabytes(size)} (${size} bytes), more than the ${megabytes(surface.maxInlineBytes)} this way of calling returns inline; nothing was charged: ${surface.linkHint}`);
  }
  let body: T;
  try {
    body = surface.encode(output);
  } catch {
    // A string or buffer past what the runtime can build: the same answer, never a 500 after payment.
    fail('RESULT_TOO_LARGE', `the result is ${megabytes(size)}, too large to encode for this way of calling; nothing was charged: ${surface.linkHint}`);
  }
  return { kind: 'inline', body, heldBytes: surface.heldBytesOf(output) };
}

// The x402 v2 gate, shared by HTTP routes and MCP tools: quote, match, verify, guard, work,
// settle. Built on @x402/core's resource server (which routes each network to the facilitator
// that supports it); nothing here touches headers or hapi.
import { createHash } from 'node:crypto';
import { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { extractPaymentIdentifier, isValidPaymentId } from '@x402/extensions/payment-identifier';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import { ServiceError } from '../../core/errors.js';
import { paymentId, type PaymentGuard } from './guard.js';
import { HeldResults, type HeldResult, type Holdable } from './held-results.js';
import { AuthenticatedFacilitatorClient, FacilitatorRefusedError, type FacilitatorAuth } from './facilitators.js';
import type { Metrics } from '../metrics.js';

export const MAX_TIMEOUT_SECONDS = 300;
// A claim outlives the authorization it guards, so a payment can never be used twice.
const CLAIM_TTL_SECONDS = MAX_TIMEOUT_SECONDS * 2;
// The duplicate-settlement window the Solana exact scheme recommends.
const SVM_SETTLE_WINDOW_SECONDS = 120;
// How long a facilitator call may take before its outcome counts as unknown (x402's default is 90 s).
export const DEFAULT_FACILITATOR_TIMEOUT_MS = 30_000;
const SETTLEMENT_PENDING = 'settlement_pending';
// A facilitator's refusal to settle an authorization that has already been spent.
const SPENT_REASONS = new Set(['invalid_exact_evm_nonce_already_used']);
// What the guard records about a claimed payment (besides the bare claim).
const HELD = 'held:';
const DELIVERED = 'delivered:';
const SETTLE_FAILED = 'settle-failed';

/** One payment being used: its unique id on the chain, the digest of the payload, and the match. */
interface Payment {
  id: string;
  digest: string;
  payload: PaymentPayload;
  matched: PaymentRequirements;
  /** The client's own idempotency key (the payment-identifier extension), when it sent one. */
  clientId?: string;
}

type Settlement =
  | { kind: 'settled'; receipt: SettleResponse }
  /** The facilitator refused this service's credentials: it did not settle. */
  | { kind: 'refused'; error: FacilitatorRefusedError }
  | { kind: 'failed'; reason: string }
  /** The facilitator says the authorization was spent before this settlement. */
  | { kind: 'spent'; reason: string }
  | { kind: 'unknown'; reason: string; receipt?: SettleResponse };

// A real PaymentPayload nests a few levels (payload.authorization.*, extensions.*.schema.*) and
// holds a few hundred values; x402's matching walks it recursively, so anything far deeper or
// larger is refused before it is touched.
const MAX_PAYLOAD_DEPTH = 32;
const MAX_PAYLOAD_VALUES = 20_000;

/** What is wrong with the payload's shape, walked without recursion; undefined when it is fine. */
function payloadShapeProblem(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return 'the payment payload must be a JSON object';
  const stack: Array<[unknown, number]> = [[payload, 1]];
  let values = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (++values > MAX_PAYLOAD_VALUES) return `the payment payload holds more than ${MAX_PAYLOAD_VALUES} values; a PaymentPayload holds a few hundred`;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_PAYLOAD_DEPTH) return `the payment payload is nested more than ${MAX_PAYLOAD_DEPTH} levels deep; a PaymentPayload nests a few`;
    for (const inner of Object.values(value)) stack.push([inner, depth + 1]);
  }
  return undefined;
}

function digestOf(payload: PaymentPayload): string {
  return createHash('sha256').update(JSON.stringify(payload)).digest('base64url');
}

const clientIdKey = (clientId: string) => `payment-identifier:${clientId}`;

function inProgress(): ServiceError {
  return new ServiceError('PAYMENT_IN_PROGRESS', 'a request paid with this payment is still being processed; retry in a few seconds to receive its result', { retryAfterSeconds: 5 });
}

/** The same payment presented again with a different payload: refused, and nothing more charged. */
function differentPayload(): ServiceError {
  return new ServiceError('PAYMENT_ID_CONFLICT', 'this payment was already used with a different payload; nothing more was charged');
}

function unconfirmed(reason: string): ServiceError {
  return new ServiceError('SETTLEMENT_UNCONFIRMED',
    `the settlement of this payment could not be confirmed (${reason.slice(0, 200)}); the result is held for a few minutes: send the identical request with the same payment again to receive it; you will not be charged twice`,
    { retryAfterSeconds: 5 });
}

// The operator's configuration is at fault, never the payment: a 502, never a 402 asking to pay.
function facilitatorRefused(err: FacilitatorRefusedError, consequence: string): ServiceError {
  const said = `${err.operation === 'supported' ? 'GET /supported' : `POST /${err.operation}`} answered ${err.status}${err.detail ? `: ${err.detail}` : ''}`;
  return new ServiceError('FACILITATOR_REFUSED',
    `the payment facilitator at ${err.facilitator} refused this service's credentials (${said}); the payment is not at fault; ${consequence}`);
}

function guardUnavailable(): ServiceError {
  return new ServiceError('GUARD_UNAVAILABLE', 'the payment guard store is unreachable, so the payment cannot be used safely; nothing was charged');
}

export interface ChainConfig {
  network: `${string}:${string}`;
  asset: string;
  payTo: string;
  facilitatorUrl: string;
  /** How calls to a hosted facilitator are authenticated (CDP or PayAI JWTs, or a fixed header). */
  facilitatorAuth?: FacilitatorAuth;
  /** EIP-712 domain of the token for EVM chains. */
  extra?: Record<string, unknown>;
}

export interface ResourceDescription {
  /** Names what is sold (an HTTP route, an MCP tool) apart from others at the same URL: quotes are kept by it. */
  key: string;
  url: string;
  description: string;
  mimeType: string;
  extensions?: Record<string, unknown>;
}

/** What the gate runs the work for: a result ready to be sent, which it may hold for a retry. */
export interface GateResult extends Holdable {
  /** Called when the result will never be sent (its settlement failed or was refused). */
  discard?(): void;
}

export type PaidOutcome<T> =
  | { kind: 'payment-required'; paymentRequired: PaymentRequired }
  /** `sent` is told whether the result reached the client; until then it is held for a retry. */
  | { kind: 'paid'; result: T; receipt: SettleResponse; sent(received: boolean): void };

// Distinct quotes kept: one per operation and amount seen (per-page prices vary with the page count).
const MAX_KEPT_QUOTES = 1024;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function describeFailure(err: unknown): string {
  return err instanceof Error ? err.message.slice(0, 300) : 'unknown error';
}

export class PaymentGate {
  // A quote depends only on the amount and the resource, so each is built once; frozen, since
  // every caller shares it.
  private readonly quotes = new Map<string, PaymentRequired>();
  private readonly held = new HeldResults<GateResult>();

  private constructor(
    private readonly server: x402ResourceServer,
    readonly chains: readonly ChainConfig[],
    /** Shared with the replicas through Redis when REDIS_URL is set: also where result links are registered. */
    readonly guard: PaymentGuard,
    private readonly metrics: Metrics,
  ) {}

  /** Connects to every facilitator; fails the boot when a chain has no facilitator that supports it. */
  static async create(chains: readonly ChainConfig[], guard: PaymentGuard, metrics: Metrics, facilitatorTimeoutMs = DEFAULT_FACILITATOR_TIMEOUT_MS): Promise<PaymentGate> {
    if (chains.length === 0) throw new Error('no payment chain is configured');
    const clients = chains.map((chain) => new AuthenticatedFacilitatorClient(chain.facilitatorUrl, facilitatorTimeoutMs, chain.facilitatorAuth));
    const server = new x402ResourceServer(clients);
    for (const chain of chains) {
      if (chain.network.startsWith('eip155:')) server.register(chain.network, new ExactEvmScheme());
      else if (chain.network.startsWith('solana:')) server.register(chain.network, new ExactSvmScheme());
      else throw new Error(`unsupported network ${chain.network}: only eip155:* and solana:* are known`);
    }
    let unreachable: unknown;
    try {
      await server.initialize();
    } catch (err) {
      unreachable = err;
    }
    // A refused key says so, with the variables that hold it, rather than "unreachable" or "unsupported".
    chains.forEach((chain, i) => {
      const failure = clients[i].supportedFailure;
      if (failure instanceof FacilitatorRefusedError) {
        throw new Error(`the ${chain.network} facilitator at ${clients[i].host} refused this service's credentials at start (GET /supported answered ${failure.status}${failure.detail ? `: ${failure.detail}` : ''}); check ${failure.credentials ?? 'its credentials'}`);
      }
    });
    if (unreachable) throw new Error(`the payment facilitators could not be reached at start: ${describeFailure(unreachable)}`);
    for (const chain of chains) {
      if (!server.getSupportedKind(2, chain.network, 'exact')) {
        throw new Error(`the facilitator at ${chain.facilitatorUrl} does not support the exact scheme on ${chain.network}`);
      }
    }
    return new PaymentGate(server, chains, guard, metrics);
  }

  /** Each chain's facilitator (its URL without any credentials) and whether its /supported lists the chain. */
  facilitators(): Array<{ network: string; url: string; supported: boolean }> {
    return this.chains.map((chain) => {
      const url = new URL(chain.facilitatorUrl);
      url.username = '';
      url.password = '';
      return { network: chain.network, url: url.toString().replace(/\/$/, ''), supported: Boolean(this.server.getSupportedKind(2, chain.network, 'exact')) };
    });
  }

  /** One requirement per chain, all for the same amount. */
  async requirements(amount: bigint): Promise<PaymentRequirements[]> {
    const all: PaymentRequirements[] = [];
    for (const chain of this.chains) {
      all.push(...await this.server.buildPaymentRequirements({
        scheme: 'exact',
        network: chain.network,
        payTo: chain.payTo,
        price: { amount: amount.toString(), asset: chain.asset, ...(chain.extra ? { extra: chain.extra } : {}) },
        maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
      }));
    }
    return all;
  }

  async paymentRequired(amount: bigint, resource: ResourceDescription, error?: string, built?: PaymentRequirements[]): Promise<PaymentRequired> {
    const accepts = built ?? await this.requirements(amount);
    return this.server.createPaymentRequiredResponse(
      accepts,
      { url: resource.url, description: resource.description, mimeType: resource.mimeType },
      error,
      resource.extensions,
    );
  }

  /** The quote for an amount: built once per amount and resource, then shared. */
  async quote(amount: bigint, resource: ResourceDescription): Promise<PaymentRequired> {
    const key = `${amount} ${resource.key} ${resource.url}`;
    let quote = this.quotes.get(key);
    if (!quote) {
      // A copy: the resource description it carries is shared with refusals built later.
      quote = deepFreeze(structuredClone(await this.paymentRequired(amount, resource)));
      if (this.quotes.size >= MAX_KEPT_QUOTES) this.quotes.delete(this.quotes.keys().next().value!);
      this.quotes.set(key, quote);
    }
    return quote;
  }

  /**
   * Runs one paid call: without a payload it answers the quote; with one it verifies, claims the
   * payment, runs the work, and settles only when the work succeeded and the client is still
   * there. A result whose settlement is not known, or that was not received, is held for the
   * identical retry of the same payment, which gets it without a second charge.
   */
  async run<R extends GateResult>(
    amount: bigint,
    resource: ResourceDescription,
    payload: PaymentPayload | undefined,
    clientGone: AbortSignal | undefined,
    work: () => Promise<R>,
  ): Promise<PaidOutcome<R>> {
    // Built once per request: the match below and any refusal's 402 share them.
    let requirements: PaymentRequirements[] | undefined;
    const refuse = async (reason: string): Promise<PaidOutcome<R>> => {
      this.metrics.payments.inc({ stage: 'refused' });
      return { kind: 'payment-required', paymentRequired: await this.paymentRequired(amount, resource, reason, requirements) };
    };
    if (!payload) return { kind: 'payment-required', paymentRequired: await this.quote(amount, resource) };
    const shapeProblem = payloadShapeProblem(payload);
    if (shapeProblem) return refuse(shapeProblem);
    if (payload.x402Version !== 2) return refuse(`x402Version ${String(payload.x402Version)} is not supported; use 2`);

    requirements = await this.requirements(amount);
    const matched = this.server.findMatchingRequirements(requirements, payload);
    if (!matched) return refuse('No matching payment requirements: the payment does not match this request\'s price, network, asset or payTo');
    const id = paymentId(payload);
    if (!id) return refuse('the payment payload has no authorization nonce or transaction signature');
    // Only the id is checked (its length and characters), never the schema the payload echoes:
    // compiling a client's JSON Schema on every paid request would be slow and theirs to shape.
    const clientId = extractPaymentIdentifier(payload, false);
    if (clientId !== null && !isValidPaymentId(clientId)) {
      return refuse('the payment-identifier extension is invalid: its id must be 16 to 128 letters, digits, hyphens or underscores');
    }
    const payment: Payment = { id, digest: digestOf(payload), payload, matched, clientId: clientId ?? undefined };

    // A payment this service already knows: its result held here, or what became of it.
    if (payment.clientId !== undefined) {
      const bought = await this.lookup(clientIdKey(payment.clientId));
      if (bought !== undefined && bought !== payment.digest) {
        throw new ServiceError('PAYMENT_ID_CONFLICT', 'this payment identifier was already used with a different payment; use a new identifier for a new payment');
      }
    }
    const held = this.held.get(id);
    if (held) return this.redeliver(payment, held as HeldResult<R>);
    await this.refuseKnown(payment);

    let verified;
    try {
      verified = await this.server.verifyPayment(payload, matched);
    } catch (err) {
      if (err instanceof FacilitatorRefusedError) {
        this.metrics.payments.inc({ stage: 'facilitator_refused' });
        throw facilitatorRefused(err, 'nothing was charged and no work was done');
      }
      this.metrics.payments.inc({ stage: 'verify_error' });
      const status = (err as { statusCode?: number }).statusCode;
      if (status !== undefined && status < 500 && 'invalidReason' in (err as object)) {
        return refuse(String((err as { invalidReason?: string }).invalidReason ?? 'payment invalid'));
      }
      throw new ServiceError('FACILITATOR_UNREACHABLE', 'the payment facilitator could not verify the payment; nothing was charged and no work was done');
    }
    if (!verified.isValid) return refuse(verified.invalidReason ?? verified.invalidMessage ?? 'payment invalid');
    this.metrics.payments.inc({ stage: 'verified' });

    if (!await this.claim(id, CLAIM_TTL_SECONDS)) {
      this.metrics.payments.inc({ stage: 'replay_refused' });
      await this.refuseKnown(payment);
      throw inProgress();
    }
    if (payment.clientId !== undefined) await this.record(clientIdKey(payment.clientId), payment.digest);

    let result: R;
    try {
      result = await work();
    } catch (err) {
      // Nothing settled: the authorization is unspent, so the payer may retry with it.
      await this.guard.release(id).catch(() => undefined);
      this.metrics.payments.inc({ stage: clientGone?.aborted ? 'cancelled_client_gone' : 'cancelled' });
      throw err;
    }
    // A client that has gone would never receive the result: it is not charged for it.
    if (clientGone?.aborted) {
      result.discard?.();
      await this.guard.release(id).catch(() => undefined);
      this.metrics.payments.inc({ stage: 'cancelled_client_gone' });
      throw new ServiceError('CLIENT_GONE', 'the client closed the connection before the result was ready; nothing was charged');
    }

    // The claim is kept from here on, whatever settlement does: a settlement that reached the
    // chain but whose answer was lost must not let the same payment buy a second result.
    if (matched.network.startsWith('solana:') && !await this.claim(`svm-settle:${id}`, SVM_SETTLE_WINDOW_SECONDS)) {
      result.discard?.();
      return this.settlementFailed(amount, resource, 'duplicate settlement refused');
    }
    const settlement = await this.settle(payment, false);
    if (settlement.kind !== 'settled' && settlement.kind !== 'unknown') result.discard?.();
    if (settlement.kind === 'spent') {
      // Spent before this settlement: by an earlier one whose record was lost (a guard store that
      // restarted empty), or by the payer cancelling it. Either way asking to pay again would be
      // wrong; the result is not given for a transfer this service cannot see.
      this.metrics.payments.inc({ stage: 'settle_failed' });
      throw new ServiceError('PAYMENT_ALREADY_USED', 'this payment\'s authorization was already spent on the chain, by an earlier settlement or by its payer, so it cannot buy this result; nothing more was charged; if an earlier identical request was charged, send it again with the same payment to receive its result where it is held');
    }
    if (settlement.kind === 'refused') {
      // Refused before anything was sent to the chain: the payment is unspent and may be used again.
      await this.guard.release(id).catch(() => undefined);
      if (matched.network.startsWith('solana:')) await this.guard.release(`svm-settle:${id}`).catch(() => undefined);
      this.metrics.payments.inc({ stage: 'facilitator_refused' });
      throw facilitatorRefused(settlement.error, 'nothing was charged and no result is returned; the same payment can be sent again once the service is fixed');
    }
    if (settlement.kind === 'failed') return this.settlementFailed(amount, resource, settlement.reason);
    if (settlement.kind === 'unknown') {
      await this.holdUnconfirmed(payment, result, settlement.receipt);
      throw unconfirmed(settlement.reason);
    }
    this.metrics.payments.inc({ stage: 'settled' });
    return this.deliver(payment, result, settlement.receipt);
  }

  /** A retry of a payment whose result is held here: settled now if it was not known to be. */
  private async redeliver<R extends GateResult>(payment: Payment, held: HeldResult<R>): Promise<PaidOutcome<R>> {
    if (held.payloadDigest !== payment.digest) {
      throw differentPayload();
    }
    let receipt = held.receipt;
    if (held.settlement === 'unknown') {
      // Ask the facilitator again with the same payment: it settles it, reconciles a pending
      // settlement, or says the authorization is spent (the first settlement did reach the chain).
      const settlement = await this.settle(payment, true, held.receipt);
      if (settlement.kind === 'unknown') throw unconfirmed(settlement.reason);
      // The first settlement's outcome is still unknown: the result stays held for a later retry.
      if (settlement.kind === 'refused') throw unconfirmed(settlement.error.message);
      if (settlement.kind === 'failed' || settlement.kind === 'spent') {
        held.result.discard?.();
        this.held.drop(payment.id);
        await this.record(payment.id, SETTLE_FAILED);
        this.metrics.payments.inc({ stage: 'settle_failed' });
        throw new ServiceError('SETTLEMENT_FAILED', `settlement failed: ${settlement.reason}; nothing was charged and no result is returned`);
      }
      receipt = settlement.receipt;
      this.metrics.payments.inc({ stage: 'settled' });
    }
    this.metrics.payments.inc({ stage: 'redelivered' });
    return this.deliver(payment, held.result, receipt!);
  }

  /** Refuses a payment whose fate is already recorded: delivered, failed, or held by another replica. */
  private async refuseKnown(payment: Payment): Promise<void> {
    const state = await this.lookup(payment.id);
    if (state === undefined) return;
    if (state.startsWith(DELIVERED)) {
      if (!state.endsWith(payment.digest)) throw differentPayload();
      throw new ServiceError('RESULT_DELIVERED', 'the result bought with this payment was already delivered, and results are not kept after delivery; nothing more was charged');
    }
    if (state.startsWith(HELD)) throw unconfirmed('the result is held by another instance of the service');
    if (state === SETTLE_FAILED) throw new ServiceError('SETTLEMENT_FAILED', 'this payment could not be settled; nothing was charged; pay again with a new payment');
    throw inProgress();
  }

  /**
   * One settlement attempt. 'unknown' when the facilitator's answer does not say whether the
   * transfer happened (it failed, timed out, or is still pending); 'failed' only when it says no.
   */
  private async settle(payment: Payment, retry: boolean, pending?: SettleResponse): Promise<Settlement> {
    let receipt: SettleResponse;
    try {
      receipt = await this.server.settlePayment(payment.payload, payment.matched);
    } catch (err) {
      if (err instanceof FacilitatorRefusedError) return { kind: 'refused', error: err };
      const answered = err instanceof Error && err.name === 'SettleError' ? err as Error & { errorReason?: string } : undefined;
      if (!answered?.errorReason || answered.errorReason === SETTLEMENT_PENDING) return { kind: 'unknown', reason: describeFailure(err) };
      receipt = { success: false, errorReason: answered.errorReason, transaction: '', network: payment.matched.network };
    }
    if (receipt.success) return { kind: 'settled', receipt };
    const reason = receipt.errorReason ?? 'settlement failed';
    if (reason === SETTLEMENT_PENDING) return { kind: 'unknown', reason: 'the settlement is still pending', receipt };
    // On a retry, a spent authorization means the first settlement reached the chain: only a
    // transfer to this service's address can spend it.
    if (SPENT_REASONS.has(reason)) {
      if (!retry) return { kind: 'spent', reason };
      return { kind: 'settled', receipt: { success: true, transaction: pending?.transaction ?? receipt.transaction ?? '', network: payment.matched.network, ...(receipt.payer ? { payer: receipt.payer } : {}) } };
    }
    return { kind: 'failed', reason };
  }

  private async holdUnconfirmed(payment: Payment, result: GateResult, receipt: SettleResponse | undefined): Promise<void> {
    this.metrics.payments.inc({ stage: 'settle_unknown' });
    if (this.held.hold(payment.id, { payloadDigest: payment.digest, result, settlement: 'unknown', ...(receipt ? { receipt } : {}) })) {
      await this.record(payment.id, HELD + payment.digest).catch(() => undefined);
    }
  }

  /**
   * A settled result, held until it has been sent: `sent(false)` (the connection closed first)
   * keeps it for the identical retry; `sent(true)` drops it and remembers the delivery.
   */
  private deliver<R extends GateResult>(payment: Payment, result: R, receipt: SettleResponse): PaidOutcome<R> {
    const held = this.held.hold(payment.id, { payloadDigest: payment.digest, result, settlement: 'settled', receipt });
    const sent = async (received: boolean) => {
      if (received) {
        this.held.markDelivered(payment.id, payment.digest);
        await this.record(payment.id, DELIVERED + payment.digest).catch(() => undefined);
      } else if (held) {
        this.metrics.payments.inc({ stage: 'undelivered_held' });
        await this.record(payment.id, HELD + payment.digest).catch(() => undefined);
      }
    };
    return { kind: 'paid', result, receipt, sent: (received) => void sent(received) };
  }

  private async claim(id: string, ttl: number): Promise<boolean> {
    try {
      return await this.guard.claim(id, ttl);
    } catch {
      throw guardUnavailable();
    }
  }

  private async lookup(id: string): Promise<string | undefined> {
    try {
      return await this.guard.lookup(id);
    } catch {
      throw guardUnavailable();
    }
  }

  private async record(id: string, value: string): Promise<void> {
    try {
      await this.guard.record(id, value, CLAIM_TTL_SECONDS);
    } catch {
      throw guardUnavailable();
    }
  }

  private async settlementFailed<R>(amount: bigint, resource: ResourceDescription, reason: string): Promise<PaidOutcome<R>> {
    this.metrics.payments.inc({ stage: 'settle_failed' });
    return {
      kind: 'payment-required',
      paymentRequired: await this.paymentRequired(amount, resource, `settlement failed: ${reason}; nothing was charged and no result is returned`),
    };
  }

  async close(): Promise<void> {
    this.held.clear();
    await this.guard.close();
  }
}

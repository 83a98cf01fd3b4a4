// The x402 v2 gate, shared by HTTP routes and MCP tools: quote, match, verify, guard, work,
// settle. Built on @x402/core's resource server (which routes each network to the facilitator
// that supports it); nothing here touches headers or hapi.
import { x402ResourceServer, HTTPFacilitatorClient, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import { ServiceError } from '../../core/errors.js';
import { paymentId, type PaymentGuard } from './guard.js';
import type { Metrics } from '../metrics.js';

export const MAX_TIMEOUT_SECONDS = 300;
// A claim outlives the authorization it guards, so a payment can never be used twice.
const CLAIM_TTL_SECONDS = MAX_TIMEOUT_SECONDS * 2;
// The duplicate-settlement window the Solana exact scheme recommends.
const SVM_SETTLE_WINDOW_SECONDS = 120;

export interface ChainConfig {
  network: `${string}:${string}`;
  asset: string;
  payTo: string;
  facilitatorUrl: string;
  /** Value of an Authorization header the facilitator needs (hosted facilitators). */
  facilitatorAuth?: string;
  /** EIP-712 domain of the token for EVM chains. */
  extra?: Record<string, unknown>;
}

export interface ResourceDescription {
  url: string;
  description: string;
  mimeType: string;
  extensions?: Record<string, unknown>;
}

export type PaidOutcome<T> =
  | { kind: 'payment-required'; paymentRequired: PaymentRequired }
  | { kind: 'paid'; result: T; receipt: SettleResponse };

function facilitatorClient(chain: ChainConfig): FacilitatorClient {
  const auth = chain.facilitatorAuth;
  return new HTTPFacilitatorClient({
    url: chain.facilitatorUrl,
    ...(auth ? {
      createAuthHeaders: async () => ({ verify: { Authorization: auth }, settle: { Authorization: auth }, supported: { Authorization: auth } }),
    } : {}),
  });
}

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

  private constructor(
    private readonly server: x402ResourceServer,
    readonly chains: readonly ChainConfig[],
    private readonly guard: PaymentGuard,
    private readonly metrics: Metrics,
  ) {}

  /** Connects to every facilitator; fails the boot when a chain has no facilitator that supports it. */
  static async create(chains: readonly ChainConfig[], guard: PaymentGuard, metrics: Metrics): Promise<PaymentGate> {
    if (chains.length === 0) throw new Error('no payment chain is configured');
    const server = new x402ResourceServer(chains.map(facilitatorClient));
    for (const chain of chains) {
      if (chain.network.startsWith('eip155:')) server.register(chain.network, new ExactEvmScheme());
      else if (chain.network.startsWith('solana:')) server.register(chain.network, new ExactSvmScheme());
      else throw new Error(`unsupported network ${chain.network}: only eip155:* and solana:* are known`);
    }
    try {
      await server.initialize();
    } catch (err) {
      throw new Error(`the payment facilitators could not be reached at start: ${describeFailure(err)}`);
    }
    for (const chain of chains) {
      if (!server.getSupportedKind(2, chain.network, 'exact')) {
        throw new Error(`the facilitator at ${chain.facilitatorUrl} does not support the exact scheme on ${chain.network}`);
      }
    }
    return new PaymentGate(server, chains, guard, metrics);
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

  private async quote(amount: bigint, resource: ResourceDescription): Promise<PaymentRequired> {
    const key = `${amount} ${resource.url}`;
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
   * payment, runs the work, and settles only when the work succeeded.
   */
  async run<T>(
    amount: bigint,
    resource: ResourceDescription,
    payload: PaymentPayload | undefined,
    clientGone: AbortSignal | undefined,
    work: () => Promise<T>,
  ): Promise<PaidOutcome<T>> {
    // Built once per request: the match below and any refusal's 402 share them.
    let requirements: PaymentRequirements[] | undefined;
    const refuse = async (reason: string): Promise<PaidOutcome<T>> => {
      this.metrics.payments.inc({ stage: 'refused' });
      return { kind: 'payment-required', paymentRequired: await this.paymentRequired(amount, resource, reason, requirements) };
    };
    if (!payload) return { kind: 'payment-required', paymentRequired: await this.quote(amount, resource) };
    if (payload.x402Version !== 2) return refuse(`x402Version ${String(payload.x402Version)} is not supported; use 2`);

    requirements = await this.requirements(amount);
    const matched = this.server.findMatchingRequirements(requirements, payload);
    if (!matched) return refuse('No matching payment requirements: the payment does not match this request\'s price, network, asset or payTo');
    const id = paymentId(payload);
    if (!id) return refuse('the payment payload has no authorization nonce or transaction signature');

    let verified;
    try {
      verified = await this.server.verifyPayment(payload, matched);
    } catch (err) {
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
      return refuse('this payment has already been used for a result');
    }

    let result: T;
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
      await this.guard.release(id).catch(() => undefined);
      this.metrics.payments.inc({ stage: 'cancelled_client_gone' });
      throw new ServiceError('CLIENT_GONE', 'the client closed the connection before the result was ready; nothing was charged');
    }

    // The claim is kept from here on, whatever settlement does: a settlement that reached the
    // chain but whose answer was lost must not let the same payment buy a second result.
    if (matched.network.startsWith('solana:') && !await this.claim(`svm-settle:${id}`, SVM_SETTLE_WINDOW_SECONDS)) {
      return this.settlementFailed(amount, resource, 'duplicate settlement refused');
    }
    let receipt: SettleResponse;
    try {
      receipt = await this.server.settlePayment(payload, matched);
    } catch (err) {
      return this.settlementFailed(amount, resource, describeFailure(err));
    }
    if (!receipt.success) return this.settlementFailed(amount, resource, receipt.errorReason ?? 'settlement failed');
    this.metrics.payments.inc({ stage: 'settled' });
    return { kind: 'paid', result, receipt };
  }

  private async claim(id: string, ttl: number): Promise<boolean> {
    try {
      return await this.guard.claim(id, ttl);
    } catch {
      throw new ServiceError('GUARD_UNAVAILABLE', 'the payment guard store is unreachable, so the payment cannot be used safely; nothing was charged');
    }
  }

  private async settlementFailed<T>(amount: bigint, resource: ResourceDescription, reason: string): Promise<PaidOutcome<T>> {
    this.metrics.payments.inc({ stage: 'settle_failed' });
    return {
      kind: 'payment-required',
      paymentRequired: await this.paymentRequired(amount, resource, `settlement failed: ${reason}; nothing was charged and no result is returned`),
    };
  }

  async close(): Promise<void> {
    await this.guard.close();
  }
}

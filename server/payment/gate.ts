// The x402 v2 gate, shared by HTTP routes and MCP tools. Built on @x402/core's resource server
// (which routes each network to the facilitator that supports it); nothing here touches headers
// or hapi. A paid call goes through named stages, each in its own file under stages/:
//   payload (read and match) → ledger (what is known of it; claim) → lifetime (it outlives the
//   call) → verify → the work → settle → holding (deliver, or hold for the identical retry).
import { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import { ServiceError } from '../../core/errors.js';
import { paymentId, type PaymentGuard } from './guard.js';
import { AuthenticatedFacilitatorClient, FacilitatorRefusedError, type FacilitatorAuth } from './facilitators.js';
import type { Metrics } from '../metrics.js';
import { readPayment, versionProblem, type Payment } from './stages/payload.js';
import { MAX_TIMEOUT_SECONDS, PaymentLedger } from './stages/ledger.js';
import { verifyPayment } from './stages/verify.js';
import { lifetimeProblem, type CallDuration } from './stages/lifetime.js';
import { settlePayment } from './stages/settle.js';
import { ResultHolding, type GateResult, type PaidOutcome } from './stages/holding.js';
import { ChainAuthorizationReader, ChainReaders } from './stages/authorization.js';
import { SolanaTransactionReader } from './stages/solana-transactions.js';
import { alreadySpent, describeFailure, facilitatorRefused, inProgress, unconfirmed } from './stages/refusals.js';
import { BATCH_SETTLEMENT, type PaymentChannels } from './channels/channels.js';
import { CHANNEL_REFUND_PATH } from '../../core/protocol.js';
import { channelPayloadType, withdrawalRequested } from './channels/payloads.js';

export { MAX_TIMEOUT_SECONDS } from './stages/ledger.js';
export type { GateResult, PaidOutcome } from './stages/holding.js';
export type { CallDuration } from './stages/lifetime.js';

// How long a facilitator call may take before its outcome counts as unknown (x402's default is 90 s).
export const DEFAULT_FACILITATOR_TIMEOUT_MS = 30_000;

export interface ChainConfig {
  network: `${string}:${string}`;
  asset: string;
  payTo: string;
  facilitatorUrl: string;
  /** How calls to a hosted facilitator are authenticated (CDP or PayAI JWTs, or a fixed header). */
  facilitatorAuth?: FacilitatorAuth;
  /** EIP-712 domain of the token for EVM chains. */
  extra?: Record<string, unknown>;
  /**
   * The JSON-RPC the service reads a payment's fate from, when a held result's retry cannot be
   * settled or confirmed by the facilitator (EVM: the authorization's state; Solana: the payer's
   * recent transactions). None: EVM results are not read; Solana uses the network's public RPC.
   */
  rpcUrl?: string;
}

/** What a buyer needs to know of the payment channels before the first 402. */
export interface ChannelTerms {
  network: string;
  receiverAuthorizer: string;
  withdrawDelay: number;
  refundPath: string;
}

export interface ResourceDescription {
  /** Names what is sold (an HTTP route, an MCP tool) apart from others at the same URL: quotes are kept by it. */
  key: string;
  url: string;
  description: string;
  mimeType: string;
  extensions?: Record<string, unknown>;
}

// How often the results held here are recorded again where nothing is recorded for their payment:
// a record lost with the store, or a claim another replica released, is restored within this.
const ANNOUNCE_HELD_MS = 2000;

// Distinct quotes kept: one per operation and amount seen (per-page prices vary with the page count).
const MAX_KEPT_QUOTES = 1024;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

export class PaymentGate {
  // A quote depends only on the amount and the resource, so each is built once; frozen, since
  // every caller shares it.
  private readonly quotes = new Map<string, PaymentRequired>();
  private readonly ledger: PaymentLedger;
  private readonly holding: ResultHolding;
  private readonly announcing: NodeJS.Timeout;

  private constructor(
    private readonly server: x402ResourceServer,
    readonly chains: readonly ChainConfig[],
    /** Shared with the replicas through Redis when REDIS_URL is set: also where result links are registered. */
    readonly guard: PaymentGuard,
    private readonly metrics: Metrics,
    /** Where the other replicas reach this one (REPLICA_URL), if they can. */
    private readonly replicaUrl: () => string | undefined,
    /** Payment channels on Base (batch-settlement), when the operator offers them. */
    readonly channels: PaymentChannels | undefined,
    clients: readonly AuthenticatedFacilitatorClient[],
  ) {
    this.ledger = new PaymentLedger(guard, replicaUrl);
    const evmRpcUrls = new Map(chains.filter((chain) => chain.network.startsWith('eip155:') && chain.rpcUrl).map((chain) => [chain.network, chain.rpcUrl!]));
    const svmRpcUrls = new Map(chains.filter((chain) => chain.network.startsWith('solana:')).map((chain) => [chain.network, chain.rpcUrl]));
    const readers = new ChainReaders([new ChainAuthorizationReader(evmRpcUrls), new SolanaTransactionReader(svmRpcUrls)]);
    this.holding = new ResultHolding(server, this.ledger, metrics, readers);
    guard.onReconnect(() => void this.holding.announceHeld());
    this.announcing = setInterval(() => void this.holding.announceHeld(), ANNOUNCE_HELD_MS).unref();
    if (channels) {
      const facilitator = clients[chains.findIndex((chain) => chain.network === channels.settings.network)];
      channels.start(facilitator, this.channelEvents);
      metrics.sampleChannels(async () => {
        const totals = await channels.totals();
        return {
          openChannels: totals.openChannels,
          unclaimedUsd: Number(totals.unclaimedAtomic) / 1e6,
          lastClaimAt: totals.lastClaimAt ? Math.floor(totals.lastClaimAt / 1000) : 0,
        };
      });
    }
  }

  private readonly channelEvents = {
    onClaim: (vouchers: number) => this.metrics.channelClaims.inc(vouchers),
    onError: () => this.metrics.payments.inc({ stage: 'channel_claim_failed' }),
  };

  /** Connects to every facilitator; fails the boot when a chain has no facilitator that supports it. */
  static async create(
    chains: readonly ChainConfig[],
    guard: PaymentGuard,
    metrics: Metrics,
    facilitatorTimeoutMs = DEFAULT_FACILITATOR_TIMEOUT_MS,
    replicaUrl: () => string | undefined = () => undefined,
    channels?: PaymentChannels,
  ): Promise<PaymentGate> {
    if (chains.length === 0) throw new Error('no payment chain is configured');
    const clients = chains.map((chain) =>
      new AuthenticatedFacilitatorClient(chain.facilitatorUrl, facilitatorTimeoutMs, chain.facilitatorAuth));
    const server = new x402ResourceServer(clients);
    for (const chain of chains) {
      if (chain.network.startsWith('eip155:')) server.register(chain.network, new ExactEvmScheme());
      else if (chain.network.startsWith('solana:')) server.register(chain.network, new ExactSvmScheme());
      else throw new Error(`unsupported network ${chain.network}: only eip155:* and solana:* are known`);
    }
    if (channels) server.register(channels.settings.network, channels.scheme);
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
    if (channels && !server.getSupportedKind(2, channels.settings.network, BATCH_SETTLEMENT)) {
      throw new Error(`the facilitator of ${channels.settings.network} does not support the batch-settlement scheme (payment channels); unset BATCH_RECEIVER_AUTHORIZER_KEY to offer exact payments only`);
    }
    return new PaymentGate(server, chains, guard, metrics, replicaUrl, channels, clients);
  }

  /**
   * The address of the other replica holding the result this payment bought, as it recorded it,
   * so that the retry can be passed on to it; undefined when this replica holds it, when none
   * does, or when the holder did not say where it is.
   */
  async holderElsewhere(payload: PaymentPayload): Promise<string | undefined> {
    const id = paymentId(payload);
    if (!id || this.holding.holdsHere(id)) return undefined;
    const holder = await this.ledger.holderOf({ id });
    return holder !== undefined && holder !== this.replicaUrl() ? holder : undefined;
  }

  /** The terms of the payment channels offered (batch-settlement), for the discovery documents; none when not offered. */
  get channelTerms(): ChannelTerms | undefined {
    if (!this.channels) return undefined;
    const { network, withdrawDelayS } = this.channels.settings;
    const receiverAuthorizer = this.channels.receiverAuthorizer;
    return { network, receiverAuthorizer, withdrawDelay: withdrawDelayS, refundPath: CHANNEL_REFUND_PATH };
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

  /**
   * One `exact` requirement per chain, all for the same amount, then a payment channel
   * (`batch-settlement`) on Base where channels are offered: clients that know only `exact` pick
   * the first they can pay.
   */
  async requirements(amount: bigint, schemes: readonly string[] = ['exact', BATCH_SETTLEMENT]): Promise<PaymentRequirements[]> {
    const all: PaymentRequirements[] = [];
    const offer = async (scheme: string, chain: ChainConfig) => all.push(...await this.server.buildPaymentRequirements({
      scheme,
      network: chain.network,
      payTo: chain.payTo,
      price: { amount: amount.toString(), asset: chain.asset, ...(chain.extra ? { extra: chain.extra } : {}) },
      maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    }));
    if (schemes.includes('exact')) for (const chain of this.chains) await offer('exact', chain);
    const channelChain = this.channels && this.chains.find((chain) => chain.network === this.channels!.settings.network);
    if (channelChain && schemes.includes(BATCH_SETTLEMENT)) await offer(BATCH_SETTLEMENT, channelChain);
    return all;
  }

  /** A 402; given the refused payload, a channel's corrective 402 carries the channel's state. */
  async paymentRequired(
    amount: bigint, resource: ResourceDescription, error?: string, built?: PaymentRequirements[], refused?: PaymentPayload,
  ): Promise<PaymentRequired> {
    const accepts = built ?? await this.requirements(amount);
    return this.server.createPaymentRequiredResponse(
      accepts,
      { url: resource.url, description: resource.description, mimeType: resource.mimeType },
      error,
      // x402 writes what its extensions add into the object it is given: the description's own stays as declared.
      resource.extensions && { ...resource.extensions },
      undefined,
      refused,
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
   * identical retry of the same payment, which gets it without a second charge. `duration` is how
   * long the call may take once the payment is accepted: a payment that expires sooner is refused.
   */
  async run<R extends GateResult>(
    amount: bigint,
    resource: ResourceDescription,
    payload: PaymentPayload | undefined,
    clientGone: AbortSignal | undefined,
    duration: CallDuration,
    work: () => Promise<R>,
    admit?: () => void,
  ): Promise<PaidOutcome<R>> {
    if (!payload) return { kind: 'payment-required', paymentRequired: await this.quote(amount, resource) };
    // Built once per request: the match below and any refusal's 402 share them.
    let requirements: PaymentRequirements[] | undefined;
    const refuse = async (reason: string): Promise<PaidOutcome<R>> => {
      this.metrics.payments.inc({ stage: 'refused' });
      return { kind: 'payment-required', paymentRequired: await this.paymentRequired(amount, resource, reason, requirements, payload) };
    };

    // 1. Read: shape, version, the requirement it matches, its ids.
    const problem = versionProblem(payload);
    if (problem) return refuse(problem);
    requirements = await this.requirements(amount);
    const read = readPayment(this.server, requirements, payload);
    if ('refusal' in read) return refuse(read.refusal);
    const { payment } = read;
    if (channelPayloadType(payment.payload) === 'refund') {
      return refuse(`a refund payload buys nothing here: send it to GET ${CHANNEL_REFUND_PATH}, where the rest of the channel is returned`);
    }

    // 2. Known: its result held here, or what became of it elsewhere.
    await this.ledger.checkClientId(payment);
    const held = this.holding.heldFor<R>(payment);
    if (held) return this.holding.redeliver(payment, held);
    try {
      await this.ledger.refuseKnown(payment);
    } catch (err) {
      // A channel voucher for a total already spent on another request is stale, not a conflict:
      // verification answers it with the corrective 402, from which the buyer's client catches up.
      if (!(channelPayloadType(payment.payload) && err instanceof ServiceError && err.code === 'PAYMENT_ID_CONFLICT')) throw err;
    }
    const tooShort = lifetimeProblem(payment, duration);
    if (tooShort) return refuse(tooShort);
    // A payment known above got its answer; a new one is refused here when the call cannot be taken.
    admit?.();

    // 3. Verify with the facilitator, then claim it for this work.
    const verification = await this.verify(payment);
    if (verification.kind === 'invalid') return refuse(verification.reason);
    if (!await this.ledger.claim(payment)) {
      this.metrics.payments.inc({ stage: 'replay_refused' });
      await this.ledger.refuseKnown(payment);
      throw inProgress();
    }

    // 4. The work, and making its result deliverable: any failure leaves the payment unspent.
    const result = await this.work(payment, clientGone, work);

    // 5. Settle. The claim is kept from here on, whatever settlement does: a settlement that
    // reached the chain but whose answer was lost must not let the same payment buy a second result.
    if (!await this.ledger.claimSolanaSettlement(payment)) {
      result.discard?.();
      return this.settlementFailed(amount, resource, 'duplicate settlement refused');
    }
    const settlement = await settlePayment(this.server, payment, false);
    if (settlement.kind !== 'settled' && settlement.kind !== 'unknown') result.discard?.();
    switch (settlement.kind) {
      case 'refused':
        // Refused before anything was sent to the chain: the payment is unspent and may be used again.
        await this.ledger.release(payment);
        this.metrics.payments.inc({ stage: 'facilitator_refused' });
        throw facilitatorRefused(settlement.error, 'nothing was charged and no result is returned; the same payment can be sent again once the service is fixed');
      case 'spent':
        // Spent before this settlement: by an earlier one whose record was lost (a guard store that
        // restarted empty), or by its payer. Asking to pay again would be wrong either way. This
        // claim is not the payment's fate: left in place, it would answer every retry "in
        // progress" and keep the replica holding the result from recording it again.
        await this.ledger.release(payment);
        this.metrics.payments.inc({ stage: 'settle_failed' });
        throw alreadySpent();
      case 'failed':
        return this.settlementFailed(amount, resource, settlement.reason);
      case 'unknown':
        await this.holding.holdUnconfirmed(payment, result, settlement.receipt);
        throw unconfirmed(settlement.reason);
      case 'settled':
        // 6. Hand it over, held until it has been sent.
        this.metrics.payments.inc({ stage: 'settled' });
        // A buyer who asked for a timed withdrawal is owed nothing more: what it was charged is claimed now.
        if (this.channels && withdrawalRequested(settlement.receipt)) this.channels.claimNow(this.channelEvents);
        return this.holding.deliver(payment, result, settlement.receipt);
    }
  }

  private async verify(payment: Payment) {
    try {
      const verification = await verifyPayment(this.server, payment);
      if (verification.kind === 'valid') this.metrics.payments.inc({ stage: 'verified' });
      return verification;
    } catch (err) {
      const refusedCredentials = err instanceof ServiceError && err.code === 'FACILITATOR_REFUSED';
      this.metrics.payments.inc({ stage: refusedCredentials ? 'facilitator_refused' : 'verify_error' });
      throw err;
    }
  }

  /** Runs the work; a failure, or a client gone by its end, releases the payment unspent. */
  private async work<R extends GateResult>(payment: Payment, clientGone: AbortSignal | undefined, work: () => Promise<R>): Promise<R> {
    let result: R;
    try {
      result = await work();
    } catch (err) {
      await this.cancelVerified(payment);
      await this.ledger.release(payment);
      this.metrics.payments.inc({ stage: clientGone?.aborted ? 'cancelled_client_gone' : 'cancelled' });
      throw err;
    }
    // A client that has gone would never receive the result: it is not charged for it.
    if (clientGone?.aborted && !result.received) {
      result.discard?.();
      await this.cancelVerified(payment);
      await this.ledger.release(payment);
      this.metrics.payments.inc({ stage: 'cancelled_client_gone' });
      throw new ServiceError('CLIENT_GONE', 'the client closed the connection before the result was ready; nothing was charged');
    }
    return result;
  }

  /**
   * A buyer's cooperative refund of its channel (x402's client asks with GET, then sends the
   * refund payload): its zero-charge voucher must equal what the channel was charged; the
   * facilitator then claims what is owed and returns the rest to the buyer in one transaction.
   * No work is done and nothing is charged.
   */
  async refund(amount: bigint, resource: ResourceDescription, payload: PaymentPayload | undefined): Promise<PaidOutcome<never> | { kind: 'refunded'; receipt: SettleResponse }> {
    const requirements = await this.requirements(amount, [BATCH_SETTLEMENT]);
    const refuse = async (reason?: string) => ({ kind: 'payment-required' as const, paymentRequired: await this.paymentRequired(amount, resource, reason, requirements, payload) });
    if (!payload) return refuse();
    const read = readPayment(this.server, requirements, payload);
    const problem = versionProblem(payload) ?? ('refusal' in read ? read.refusal : undefined);
    if (problem || 'refusal' in read) return refuse(problem);
    if (channelPayloadType(payload) !== 'refund') return refuse('only a channel\'s refund payload is taken here; pay for an operation at its own path');
    const verification = await this.verify(read.payment);
    if (verification.kind === 'invalid') return refuse(verification.reason);
    const settlement = await settlePayment(this.server, read.payment, false);
    switch (settlement.kind) {
      case 'settled':
        this.metrics.payments.inc({ stage: 'channel_refunded' });
        return { kind: 'refunded', receipt: settlement.receipt };
      case 'refused':
        throw facilitatorRefused(settlement.error, 'nothing was refunded; the same refund can be asked again once the service is fixed');
      case 'unknown':
        throw new ServiceError('SETTLEMENT_UNCONFIRMED', `the refund's transaction could not be confirmed (${settlement.reason.slice(0, 200)}); read the channel on the chain, or ask for the refund again`, { retryAfterSeconds: 5 });
      default:
        return refuse(`the refund failed: ${settlement.reason}; nothing was refunded`);
    }
  }

  /** The work failed: the scheme forgets what it reserved for this payment (a channel is free for the same voucher again). */
  private async cancelVerified(payment: Payment): Promise<void> {
    await this.server.createPaymentCancellationDispatcher(payment.payload, payment.matched).cancel({ reason: 'handler_failed' }).catch(() => undefined);
  }

  private async settlementFailed<R>(amount: bigint, resource: ResourceDescription, reason: string): Promise<PaidOutcome<R>> {
    this.metrics.payments.inc({ stage: 'settle_failed' });
    return {
      kind: 'payment-required',
      paymentRequired: await this.paymentRequired(amount, resource, `settlement failed: ${reason}; nothing was charged and no result is returned`),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.announcing);
    this.holding.clear();
    await this.channels?.close().catch(() => undefined);
    await this.guard.close();
  }
}

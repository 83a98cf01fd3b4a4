// Payment channels on Base: x402's batch-settlement scheme. A buyer deposits once into x402's
// channel contract, then signs a cumulative voucher per call; the service checks a voucher
// locally (no chain, no facilitator), runs the work, records the charge durably, answers, and
// claims the latest vouchers on the chain in batches, sweeping them to the merchant.
// x402's server scheme does the checking and the bookkeeping through the resource server's hooks;
// this module gives it a durable store, the receiver-authorizer key, and the claim, settle and
// refund schedule, and reports what is owed.
import { privateKeyToAccount } from 'viem/accounts';
import type { FacilitatorClient } from '@x402/core/server';
import { BatchSettlementEvmScheme, type BatchSettlementChannelManager, type Channel, type ChannelStorage } from '@x402/evm/batch-settlement/server';
import { FileChannelStore } from './file-store.js';

export { BATCH_SETTLEMENT } from './payloads.js';

/** The operator's channel settings (CHANNEL_* and BATCH_* variables). */
export interface ChannelSettings {
  network: `${string}:${string}`;
  asset: `0x${string}`;
  payTo: `0x${string}`;
  /** Signs claims and refunds; its address is the channels' receiverAuthorizer. */
  receiverAuthorizerKey: `0x${string}`;
  withdrawDelayS: number;
  claimIntervalS: number;
  settleIntervalS: number;
  /** Channels without a call for this long are refunded; 0: never. */
  idleRefundS: number;
}

/** What the service owes itself on the chain: charged vouchers not yet claimed, and the channels open. */
export interface ChannelTotals {
  openChannels: number;
  unclaimedAtomic: bigint;
  lastClaimAt: number | undefined;
}

export interface ChannelEvents {
  onError(err: unknown): void;
  onClaim(vouchers: number): void;
}

export class PaymentChannels {
  readonly scheme: BatchSettlementEvmScheme;
  /** The address that signs claims and refunds: the channels' receiverAuthorizer. */
  readonly receiverAuthorizer: `0x${string}`;
  private manager: BatchSettlementChannelManager | undefined;
  private lastClaimAt: number | undefined;
  private claiming: Promise<unknown> = Promise.resolve();

  constructor(readonly settings: ChannelSettings, private readonly storage: ChannelStorage & { close?(): void }) {
    const signer = privateKeyToAccount(settings.receiverAuthorizerKey);
    this.receiverAuthorizer = signer.address;
    this.scheme = new BatchSettlementEvmScheme(settings.payTo, {
      storage,
      receiverAuthorizerSigner: signer,
      withdrawDelay: settings.withdrawDelayS,
    });
  }

  /** The embedded store for one process, under `dir`. */
  static withFileStore(settings: ChannelSettings, dir: string): PaymentChannels {
    return new PaymentChannels(settings, FileChannelStore.open(dir));
  }

  /**
   * Starts the schedule: claims every BATCH_CLAIM_INTERVAL_S (always well inside the withdrawal
   * delay, so a buyer's timed withdrawal cannot complete over an unclaimed voucher), sweeps to the
   * merchant every BATCH_SETTLE_INTERVAL_S, refunds idle channels. Claims left by an earlier run
   * are claimed and swept at once.
   */
  start(facilitator: FacilitatorClient, events: ChannelEvents): void {
    const { settings } = this;
    this.manager = this.scheme.createChannelManager(facilitator, settings.network, settings.asset);
    this.manager.start({
      claimIntervalSecs: settings.claimIntervalS,
      settleIntervalSecs: settings.settleIntervalS,
      ...(settings.idleRefundS > 0 ? {
        refundIntervalSecs: Math.max(settings.claimIntervalS, Math.min(settings.idleRefundS, 3600)),
        selectRefundChannels: (channels: Channel[]) => idle(channels, settings.idleRefundS),
      } : {}),
      onClaim: (result) => { this.lastClaimAt = Date.now(); events.onClaim(result.vouchers); },
      onError: events.onError,
    });
    this.claimNow(events);
  }

  /** Claims and sweeps now, outside the schedule (a buyer asked for a timed withdrawal; start-up). */
  claimNow(events: ChannelEvents): void {
    const manager = this.manager;
    if (!manager) return;
    this.claiming = this.claiming.then(async () => {
      const { claims } = await manager.claimAndSettle();
      if (claims.length > 0) {
        this.lastClaimAt = Date.now();
        events.onClaim(claims.reduce((sum, claim) => sum + claim.vouchers, 0));
      }
    }).catch(events.onError);
  }

  async totals(): Promise<ChannelTotals> {
    const channels = await this.storage.list();
    let unclaimed = 0n;
    for (const channel of channels) {
      const owed = BigInt(channel.chargedCumulativeAmount) - BigInt(channel.totalClaimed);
      if (owed > 0n) unclaimed += owed;
    }
    return { openChannels: channels.length, unclaimedAtomic: unclaimed, lastClaimAt: this.lastClaimAt };
  }

  /** At shutdown: outstanding vouchers are claimed and swept before the process ends. */
  async close(): Promise<void> {
    await this.claiming;
    await this.manager?.stop({ flush: true });
    this.storage.close?.();
  }
}

function idle(channels: Channel[], idleS: number): Channel[] {
  const before = Date.now() - idleS * 1000;
  const unclaimed = (channel: Channel) => BigInt(channel.balance) > BigInt(channel.chargedCumulativeAmount);
  return channels.filter((channel) => channel.lastRequestTimestamp < before && unclaimed(channel));
}

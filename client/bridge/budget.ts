// MAX_USD_TOTAL, kept: every signed authorization counts from the moment it is signed until it is
// known unspent (its validity has passed and the chain shows it unused), prices being signed are
// reserved so that parallel calls cannot pass the total together, and a payment channel counts what
// it deposited this run or what it was charged, whichever is more.
import { toUsd } from '../../core/usd.js';
import { Refusal } from './refusal.js';

/**
 * One signed authorization. It counts against MAX_USD_TOTAL from the moment it is signed until it is
 * known unspent: its validity has passed on the chain and the chain shows it unused.
 */
export interface Authorization {
  amount: bigint;
  /** Known to have moved money: the service's receipt said so, or the chain showed it used. */
  spent: boolean;
  /** EIP-3009: the authorizer and nonce the USDC contract's authorizationState reads, and the end of its validity. */
  evm?: { from: `0x${string}`; nonce: `0x${string}`; validBefore: bigint };
}

/** What the chain says of lapsed authorizations (client/bridge/chain.ts reads it). */
export interface LapsedReader {
  settled(authorizations: Authorization[]): Promise<{ unused: Authorization[]; used: Authorization[] }>;
}

/** The call being signed through the channel: its price, and the room reserved for it. */
interface ChannelSigning { price: bigint; reserved: bigint; refusal?: Refusal }

export class Budget {
  /** Every authorization signed and not yet known unspent. */
  private signed: Authorization[] = [];
  /** Prices of authorizations being signed: counted already, so that parallel calls cannot pass the total together. */
  private reserved = 0n;
  /**
   * The payment channel this run: what it deposited (counted against MAX_USD_TOTAL from signing on)
   * and what its calls were charged. Charges beyond this run's deposits draw on an earlier run's and
   * count too, so the channel counts max(deposited, charged).
   */
  readonly channel = { deposited: 0n, charged: 0n };
  private channelSigning: ChannelSigning | undefined;

  constructor(
    readonly total: bigint,
    private readonly chain: LapsedReader | undefined,
    private readonly now: () => bigint = () => BigInt(Math.floor(Date.now() / 1000)),
  ) {}

  private channelCounted(): bigint {
    const { deposited, charged } = this.channel;
    return deposited > charged ? deposited : charged;
  }

  /** What is known paid: authorizations the service or the chain showed spent, and the channel. */
  spent(): bigint {
    return this.signed.reduce((sum, a) => (a.spent ? sum + a.amount : sum), 0n) + this.channelCounted();
  }

  /** What may still be signed: the total less what is reserved, signed and counted for the channel. */
  left(): bigint {
    return this.total - this.reserved - this.signed.reduce((sum, a) => sum + a.amount, 0n) - this.channelCounted();
  }

  /** The spending as the host reads it, after every payment and refusal. */
  spending(): string {
    const pending = this.signed.reduce((sum, a) => (a.spent ? sum : sum + a.amount), 0n);
    const solana = this.signed.some((a) => !a.spent && !a.evm);
    const { deposited, charged } = this.channel;
    const until = `until the chain shows its authorization expired unspent${solana ? ' (on Solana: until this bridge restarts)' : ''}`;
    return [
      `Spent so far: ${toUsd(this.spent())} of ${toUsd(this.total)} USD (MAX_USD_TOTAL).`,
      ...(deposited > 0n || charged > 0n
        ? [`Of it, the payment channel on Base: ${toUsd(deposited)} USD deposited by this bridge, ${toUsd(charged)} USD charged; `
          + 'what is not charged stays the wallet\'s (a refund returns it).']
        : []),
      ...(pending > 0n ? [`A further ${toUsd(pending)} USD is signed for calls not paid for; it counts ${until}.`] : []),
    ].join(' ');
  }

  /** Authorizations past their validity that the chain shows unused are released; those it shows used stay, as spent. */
  private async releaseLapsed(): Promise<void> {
    const now = this.now();
    const lapsed = this.signed.filter((a) => !a.spent && a.evm && a.evm.validBefore <= now);
    if (!this.chain || lapsed.length === 0) return;
    try {
      const { unused, used } = await this.chain.settled(lapsed);
      for (const a of used) a.spent = true;
      this.signed = this.signed.filter((a) => !unused.includes(a));
    } catch (err) {
      // Unread, they stay counted: the total is never passed on a guess.
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
      process.stderr.write(`paydoc-mcp: could not read the chain for lapsed authorizations: ${reason}\n`);
    }
  }

  /** Reserves `price` within MAX_USD_TOTAL, or refuses; to be signed for at once, then `unreserve`d. */
  async reserve(price: bigint): Promise<void> {
    if (price > this.left()) await this.releaseLapsed();
    // Checked and taken in one step, with no wait between: parallel calls cannot share the last room.
    const left = this.left();
    if (price > left) {
      throw new Refusal(`the price is ${toUsd(price)} USD, and only ${toUsd(left < 0n ? 0n : left)} USD of MAX_USD_TOTAL `
        + `(${toUsd(this.total)} USD) is left; nothing was signed or paid. ${this.spending()}`);
    }
    this.reserved += price;
  }

  /** Signing is over (signed or failed): the reservation ends; a signed authorization is `record`ed. */
  unreserve(price: bigint): void {
    this.reserved -= price;
  }

  /** A signed authorization: it counts from here on, until known unspent. */
  record(authorization: Authorization): void {
    this.signed.push(authorization);
  }

  /** What a channel voucher for `price` draws beyond this run's deposits: it counts now (a deposit counts when asked for). */
  channelBeyond(price: bigint): bigint {
    const { deposited, charged } = this.channel;
    return charged + price > deposited ? charged + price - (deposited > charged ? deposited : charged) : 0n;
  }

  /** A channel call is being signed for `price`, with `reserved` of room; undefined when signing is over. */
  signingThroughChannel(signing: { price: bigint; reserved: bigint } | undefined): void {
    this.channelSigning = signing;
  }

  /** Why the deposit asked for while signing through the channel was refused, if it was. */
  channelRefusal(): Refusal | undefined {
    return this.channelSigning?.refusal;
  }

  /**
   * x402's channel scheme asks before it signs a deposit: refused when counting it would pass
   * MAX_USD_TOTAL (the room reserved for the call's voucher is this deposit's to use).
   */
  approveDeposit(deposit: bigint): void {
    const signing = this.channelSigning!;
    const { deposited, charged } = this.channel;
    const after = deposited + deposit > charged + signing.price ? deposited + deposit : charged + signing.price;
    const room = this.left() + signing.reserved;
    if (after - this.channelCounted() > room) {
      signing.refusal = new Refusal(`the payment channel needs a deposit of ${toUsd(deposit)} USD (CHANNEL_DEPOSIT_USD) `
        + `for this ${toUsd(signing.price)} USD call, and only ${toUsd(room < 0n ? 0n : room)} USD of MAX_USD_TOTAL `
        + `(${toUsd(this.total)} USD) is left; nothing was signed or paid. ${this.spending()}`);
      throw signing.refusal;
    }
  }
}

// One tool call through the bridge: local files read, the call quoted upstream, the quote's offer
// chosen and checked against both caps, paid (one exact authorization, or a voucher through the
// payment channel), the paid call made, and file results written to the output folder.
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { PAYMENT_META_KEY, RECEIPT_META_KEY } from '../../core/protocol.js';
import { toUsd } from '../../core/usd.js';
import { Budget, type Authorization, type LapsedReader } from './budget.js';
import { withLocalFiles, type FilesRoot } from './local-files.js';
import { chooseOffer, isPaymentRequired } from './offers.js';
import { OutputFolder } from './output.js';
import { Refusal, shown, toolError } from './refusal.js';
import { CHANNEL_SCHEME, type BridgeSettings } from './settings.js';
import { deliveredElsewhere } from './tools.js';

// A result the service holds after an unconfirmed settlement is fetched again with the same payment.
const HELD_CODES = new Set(['SETTLEMENT_UNCONFIRMED', 'PAYMENT_IN_PROGRESS']);
const HELD_RETRIES = 6;
const HELD_RETRY_DELAY_MS = 2_000;
// Model jobs may run four minutes; the service's progress notifications keep the call alive.
const CALL_TIMEOUT_MS = 15 * 60_000;

export interface Payers { evm?: x402Client; svm?: x402Client }
export type Progress = (p: { progress: number; total?: number; message?: string }) => void;

function errorCodeOf(result: CallToolResult): string | undefined {
  return (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A refusal thrown by `work` as the tool error the host sees; any other failure goes on. */
async function orRefusal(work: () => Promise<void> | void): Promise<CallToolResult | undefined> {
  try {
    await work();
    return undefined;
  } catch (err) {
    if (err instanceof Refusal) return toolError(err.message);
    throw err;
  }
}

export class Bridge {
  private readonly budget: Budget;
  private readonly output: OutputFolder;
  /** One channel call at a time: each voucher goes on from the total the previous one left. */
  private channelQueue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly settings: BridgeSettings,
    private readonly root: FilesRoot,
    private readonly upstream: Client,
    private readonly payers: Payers,
    chain: LapsedReader | undefined,
  ) {
    this.budget = new Budget(settings.total, chain);
    this.output = new OutputFolder(settings.outputDir);
  }

  /** x402's channel scheme asks before it signs a deposit: refused when counting it would pass MAX_USD_TOTAL. */
  approveDeposit(deposit: bigint): void {
    this.budget.approveDeposit(deposit);
  }

  /**
   * A call paid through the payment channel: a voucher, with a deposit when the channel runs short.
   * A corrective 402 (the service's charged total differs from the local one) resyncs the channel
   * through x402's scheme, and the call is signed once more.
   */
  private async channelCall(
    name: string, args: Record<string, unknown>, pr: PaymentRequired, offer: PaymentRequirements, price: bigint, onprogress?: Progress,
  ): Promise<CallToolResult> {
    const payer = this.payers.evm!;
    const { budget } = this;
    for (let attempt = 0; ; attempt++) {
      // What the voucher draws beyond this run's deposits counts now; a deposit is counted when asked for.
      const beyond = budget.channelBeyond(price);
      const refused = await orRefusal(() => budget.reserve(beyond));
      if (refused) return refused;
      budget.signingThroughChannel({ price, reserved: beyond });
      let payment: PaymentPayload;
      try {
        payment = await payer.createPaymentPayload({ ...pr, accepts: [offer] });
      } catch (err) {
        const refusal = budget.channelRefusal();
        if (refusal) return toolError(refusal.message);
        throw err;
      } finally {
        budget.unreserve(beyond);
      }
      budget.signingThroughChannel(undefined);
      const deposit = (payment.payload as { deposit?: { amount?: string } }).deposit?.amount;
      // Signed: the deposit counts from here on, whatever the service answers.
      if (deposit) budget.channel.deposited += BigInt(deposit);
      const result = await this.paidCall(name, args, payment, onprogress);
      const receipt = result._meta?.[RECEIPT_META_KEY] as SettleResponse | undefined;
      if (!result.isError && receipt?.success) {
        const chargedNow = (receipt.extra as { chargedAmount?: unknown } | undefined)?.chargedAmount;
        budget.channel.charged += typeof chargedNow === 'string' && /^\d{1,30}$/.test(chargedNow) ? BigInt(chargedNow) : price;
        await payer.handlePaymentResponse({ paymentPayload: payment, requirements: payment.accepted, settleResponse: receipt });
        const channelId = (receipt.extra as { channelState?: { channelId?: unknown } } | undefined)?.channelState?.channelId;
        const how = ` through the payment channel ${shown(channelId)}${deposit
          ? `, depositing ${toUsd(BigInt(deposit))} USD in transaction ${shown(receipt.transaction)}`
          : ', by voucher (no transaction)'}`;
        return await this.deliver(name, result, price, how);
      }
      if (isPaymentRequired(result.structuredContent) && attempt === 0) {
        const paymentRequired = result.structuredContent;
        const recovered = await payer.handlePaymentResponse({ paymentPayload: payment, requirements: payment.accepted, paymentRequired });
        if (recovered?.recovered) continue;
      }
      if (deposit) {
        const counted = `its deposit of ${toUsd(BigInt(deposit))} USD stays counted`;
        process.stderr.write(`paydoc-mcp: ${shown(name)} not confirmed paid; ${counted}\n`);
      }
      return result;
    }
  }

  /** Signs the offer with the reserved price; the authorization counts from here on. */
  private async sign(
    pr: PaymentRequired, offer: PaymentRequirements, price: bigint,
  ): Promise<{ payment: PaymentPayload; authorization: Authorization }> {
    const payer = offer.network.startsWith('eip155:') ? this.payers.evm! : this.payers.svm!;
    let payment: PaymentPayload;
    try {
      payment = await payer.createPaymentPayload({ ...pr, accepts: [offer] });
    } finally {
      this.budget.unreserve(price);
    }
    type Eip3009 = { from: `0x${string}`; nonce: `0x${string}`; validBefore: string };
    const eip3009 = (payment.payload as { authorization?: Eip3009 }).authorization;
    // Solana's signed transaction names no nonce the chain could be asked about: it is never released.
    const evm = eip3009 ? { evm: { from: eip3009.from, nonce: eip3009.nonce, validBefore: BigInt(eip3009.validBefore) } } : {};
    const authorization: Authorization = { amount: price, spent: false, ...evm };
    this.budget.record(authorization);
    return { payment, authorization };
  }

  /**
   * One call upstream. Its result is not checked against the tool's outputSchema here: a paid result
   * the schema does not describe (a link, say) must still reach the host.
   */
  private callUpstream(
    name: string, args: Record<string, unknown>, payment?: PaymentPayload, onprogress?: Progress,
  ): Promise<CallToolResult> {
    return this.upstream.request(
      { method: 'tools/call', params: { name, arguments: args, ...(payment ? { _meta: { [PAYMENT_META_KEY]: payment } } : {}) } },
      CallToolResultSchema,
      { timeout: CALL_TIMEOUT_MS, maxTotalTimeout: CALL_TIMEOUT_MS, resetTimeoutOnProgress: true, ...(onprogress ? { onprogress } : {}) },
    ) as Promise<CallToolResult>;
  }

  /** The paid call; a held result is asked for again with the same payment (the same authorization, counted once). */
  private async paidCall(
    name: string, args: Record<string, unknown>, payment: PaymentPayload, onprogress?: Progress,
  ): Promise<CallToolResult> {
    for (let attempt = 0; ; attempt++) {
      const result = await this.callUpstream(name, args, payment, onprogress);
      const code = errorCodeOf(result);
      if (!result.isError || !code || !HELD_CODES.has(code) || attempt >= HELD_RETRIES) return result;
      await sleep(HELD_RETRY_DELAY_MS);
    }
  }

  /** Files in the result written to the output folder; everything else (links included) passed on as it came. */
  private async deliver(name: string, result: CallToolResult, price: bigint, how?: string): Promise<CallToolResult> {
    const receipt = result._meta?.[RECEIPT_META_KEY] as SettleResponse | undefined;
    const content: CallToolResult['content'] = [];
    const files: Array<{ path: string; mediaType: string; bytes: number }> = [];
    for (const item of result.content) {
      let bytes: Buffer | undefined;
      let mediaType = '';
      if (item.type === 'image') {
        bytes = Buffer.from(item.data, 'base64');
        mediaType = item.mimeType;
      } else if (item.type === 'resource' && 'blob' in item.resource) {
        bytes = Buffer.from(item.resource.blob, 'base64');
        mediaType = item.resource.mimeType ?? 'application/octet-stream';
      }
      if (!bytes) { content.push(item); continue; }
      let file: string;
      try {
        file = await this.output.write(name, mediaType, bytes);
      } catch (err) {
        // Paid for: the result is returned inline rather than lost.
        const text = `Could not write the ${shown(mediaType)} result to the output folder (${(err as Error).message}); it follows inline.`;
        content.push({ type: 'text', text }, item);
        continue;
      }
      files.push({ path: file, mediaType, bytes: bytes.length });
      const uri = pathToFileURL(file).href;
      content.push({ type: 'resource_link', uri, name: path.basename(file), mimeType: mediaType, size: bytes.length });
    }
    const transaction = how ?? (receipt?.transaction ? `, transaction ${receipt.transaction}` : '');
    const paid = `Paid ${toUsd(price)} USD on ${receipt?.network ?? 'the quoted network'}${transaction}.`;
    const wrote = files.map((f) => `Wrote ${f.path} (${shown(f.mediaType)}, ${f.bytes} bytes).`);
    content.unshift({ type: 'text', text: [...wrote, paid, this.budget.spending()].join(' ') });
    const written = files.length > 0 ? { files, receipt, spentUsd: toUsd(this.budget.spent()) } : undefined;
    const structured = result.structuredContent ?? written;
    return { content, ...(structured ? { structuredContent: structured } : {}), _meta: { [RECEIPT_META_KEY]: receipt } };
  }

  /** One tool call from the host: `returnsFiles` when the tool declares no structured output (its results are files). */
  async call(
    name: string, returnsFiles: boolean, given: Record<string, unknown> | undefined, onprogress?: Progress,
  ): Promise<CallToolResult> {
    let args: Record<string, unknown> = {};
    const unreadable = await orRefusal(async () => { args = await withLocalFiles(given, this.root); });
    if (unreadable) return unreadable;
    const quote = await this.callUpstream(name, args);
    if (!quote.isError) return quote;
    if (!isPaymentRequired(quote.structuredContent)) return quote;
    const pr = quote.structuredContent;
    let offer: PaymentRequirements | undefined;
    let price = 0n;
    const refused = await orRefusal(() => {
      offer = chooseOffer(pr, this.settings);
      price = BigInt(offer.amount);
      if (price > this.settings.perCall) {
        throw new Refusal(`the price is ${toUsd(price)} USD, above MAX_USD_PER_CALL (${toUsd(this.settings.perCall)} USD); `
          + `nothing was signed or paid. ${this.budget.spending()}`);
      }
    });
    if (refused) return refused;
    const chosen = offer!;
    if (returnsFiles && !deliveredElsewhere(args)) {
      try {
        await this.output.ready();
      } catch (err) {
        return toolError(`the output folder cannot be made (${(err as Error).message}); set OUTPUT_DIR to a writable folder. `
          + 'Nothing was signed or paid.');
      }
    }
    if (chosen.scheme === CHANNEL_SCHEME) {
      const queued = this.channelQueue.then(() => this.channelCall(name, args, pr, chosen, price, onprogress));
      this.channelQueue = queued.catch(() => undefined);
      return queued;
    }
    const overBudget = await orRefusal(() => this.budget.reserve(price));
    if (overBudget) return overBudget;
    const { payment, authorization } = await this.sign(pr, chosen, price);
    const result = await this.paidCall(name, args, payment, onprogress);
    const receipt = result._meta?.[RECEIPT_META_KEY] as SettleResponse | undefined;
    if (result.isError || !receipt?.success) {
      const counted = `its ${toUsd(price)} USD stays counted until the chain shows it unspent`;
      process.stderr.write(`paydoc-mcp: ${name} not confirmed paid; ${counted}\n`);
      return result;
    }
    authorization.spent = true;
    return await this.deliver(name, result, price);
  }
}

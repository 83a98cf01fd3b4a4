// The paying side, built only from the standard x402 client packages: used by the CLI and the
// MCP bridge in bin/, the dev mode's demo payer, the tests and the benchmarks. It registers
// exactly one chain, so that chain is the one paid.
import os from 'node:os';
import path from 'node:path';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { FileClientChannelStorage } from '@x402/evm/batch-settlement/client/file-storage';
import { createPublicClient, http } from 'viem';
import { base } from 'viem/chains';
import { privateKeyToAccount } from 'viem/accounts';
import { createSvmClientSigner, registerSvmPayer } from './svm-payer.js';
import { fromUsd, toUsd } from '../core/usd.js';

export type PayChain = 'base' | 'solana';

/** The x402 client's own cap on one payment when none is given. */
const X402_DEFAULT_MAX_USD = '1';

/** Where channel state is kept between runs: PAYDOC_CHANNELS_DIR, else ~/.paydoc/channels. */
export function channelsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.PAYDOC_CHANNELS_DIR || path.join(os.homedir(), '.paydoc', 'channels'));
}

/** Paying through a payment channel (x402's batch-settlement on Base) instead of one transfer per call. */
export interface ChannelOptions {
  /** What each deposit puts into the channel, in atomic USDC: the first one, and each top-up when it runs short. */
  deposit: bigint;
  /** The folder x402's file storage keeps the channel's state in (under client/<channel id>.json). */
  directory: string;
  /** The Base RPC the channel is read from (to recover its state, to check a corrective 402); viem's public Base RPC unless given. */
  rpcUrl?: string;
  /** Called with each deposit before it is signed; throwing refuses the payment, nothing signed. */
  approveDeposit?: (deposit: bigint, price: bigint) => void;
}

/** Channel options as both paying clients read them: each deposit `deposit`, state in channelsDir(), Base read at EVM_RPC_URL. */
export function channelOptions(deposit: bigint, env: NodeJS.ProcessEnv = process.env): ChannelOptions {
  return { deposit, directory: channelsDir(env), ...(env.EVM_RPC_URL ? { rpcUrl: env.EVM_RPC_URL } : {}) };
}

export interface PayerOptions {
  chain: PayChain;
  /** 0x-prefixed EVM private key (chain base). */
  evmKey?: string;
  /**
   * The most one call may cost, in USD (for example "5"). Without it the x402 client's own cap
   * applies: $1, which a per-page price passes above 100 pages (extract at $0.01 a page).
   */
  maxUsd?: string;
  /** base58 64-byte Solana secret key (chain solana). */
  svmKey?: string;
  /** Solana RPC the client reads the mint and blockhash from (the local chain in dev). */
  svmRpcUrl?: string;
  /** Base only: pay through a channel (batch-settlement), the only scheme then registered. */
  channel?: ChannelOptions;
}

/** x402's batch-settlement client scheme, depositing exactly `channel.deposit` each time the channel runs short. */
export function channelScheme(evmKey: string, channel: ChannelOptions, maxUsd = X402_DEFAULT_MAX_USD): BatchSettlementEvmScheme {
  const reader = createPublicClient({ chain: base, transport: http(channel.rpcUrl) });
  const signer = toClientEvmSigner(privateKeyToAccount(evmKey as `0x${string}`), reader);
  // x402 clamps a deposit to depositMultiplier × the per-payment cap; the deposit chosen here is the one signed.
  const cap = fromUsd(maxUsd) ?? 1n;
  const depositMultiplier = Math.max(5, Number((channel.deposit + cap - 1n) / (cap > 0n ? cap : 1n)));
  return new BatchSettlementEvmScheme(signer, {
    storage: new FileClientChannelStorage({ directory: channel.directory }),
    depositPolicy: { depositMultiplier },
    depositStrategy: (ctx) => {
      const needed = BigInt(ctx.minimumDepositAmount);
      const price = BigInt(ctx.requestAmount);
      if (channel.deposit < needed) {
        throw new Error(`this call costs ${toUsd(price)} USD and the channel needs ${toUsd(needed)} USD more: `
          + `more than one deposit (${toUsd(channel.deposit)} USD); raise the deposit. Nothing was signed.`);
      }
      channel.approveDeposit?.(channel.deposit, price);
      return channel.deposit;
    },
  });
}

export async function createPayer(options: PayerOptions): Promise<x402Client> {
  const client = new x402Client();
  if (options.maxUsd !== undefined) client.setSpendControls({ maxAmountPerPayment: `$${options.maxUsd}` });
  if (options.chain === 'base') {
    if (!options.evmKey) throw new Error('paying on Base needs an EVM private key (PAYER_KEY)');
    if (options.channel) client.register('eip155:8453', channelScheme(options.evmKey, options.channel, options.maxUsd));
    else registerExactEvmScheme(client, { signer: privateKeyToAccount(options.evmKey as `0x${string}`) });
  } else {
    if (options.channel) throw new Error('payment channels (batch-settlement) are on Base only: @x402/svm has no batch-settlement scheme');
    if (!options.svmKey || !options.svmRpcUrl) throw new Error('paying on Solana needs SVM_PAYER_KEY and SVM_RPC_URL');
    registerSvmPayer(client, await createSvmClientSigner(options.svmKey), options.svmRpcUrl);
  }
  return client;
}

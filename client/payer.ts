// The paying side, built only from the standard x402 client packages: used by the CLI and the
// MCP bridge in bin/, the dev mode's demo payer, the tests and the benchmarks. It registers
// exactly one chain, so that chain is the one paid.
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { createSvmClientSigner, registerSvmPayer } from './svm-payer.js';

export type PayChain = 'base' | 'solana';

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
}

export async function createPayer(options: PayerOptions): Promise<x402Client> {
  const client = new x402Client();
  if (options.maxUsd !== undefined) client.setSpendControls({ maxAmountPerPayment: `$${options.maxUsd}` });
  if (options.chain === 'base') {
    if (!options.evmKey) throw new Error('paying on Base needs an EVM private key (PAYER_KEY)');
    registerExactEvmScheme(client, { signer: privateKeyToAccount(options.evmKey as `0x${string}`) });
  } else {
    if (!options.svmKey || !options.svmRpcUrl) throw new Error('paying on Solana needs SVM_PAYER_KEY and SVM_RPC_URL');
    registerSvmPayer(client, await createSvmClientSigner(options.svmKey), options.svmRpcUrl);
  }
  return client;
}

// The bridge's configuration, read from its environment: the networks it signs for, its two caps,
// the folder it reads files from and the one it writes results to, and an optional payment channel.
// Every mistake throws a message naming the variable at fault, before anything starts.
import path from 'node:path';
import type { Network } from '@x402/core/types';
import { getDefaultAsset as evmDefaultAsset } from '@x402/evm';
import { getDefaultAsset as svmDefaultAsset } from '@x402/svm';
import { fromUsd, USDC_DECIMALS } from '../../core/usd.js';

export const BASE_MAINNET = 'eip155:8453';
export const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
/** x402's payment channels (on Base): one deposit, then a signed voucher per call. */
export const CHANNEL_SCHEME = 'batch-settlement';

/** A network the bridge signs for, and the one asset it pays in there: x402's canonical USDC. */
export interface Payable {
  network: string;
  family: 'evm' | 'svm';
  usdc: string;
}

export interface BridgeSettings {
  url: string;
  networks: Payable[];
  perCall: bigint;
  total: bigint;
  /** Where `{ path }` arguments are read from, as configured (its real path is found at start). */
  filesRoot: string;
  outputDir?: string;
  /** CHANNEL_DEPOSIT_USD: pay on Base through a payment channel, each deposit this much (atomic USDC). */
  channelDeposit?: bigint;
}

/**
 * The networks to sign for: PAYDOC_NETWORKS, or Base for PAYER_KEY, else Solana mainnet. Each must have
 * USDC in x402's tables and a key.
 */
export function readNetworks(env: NodeJS.ProcessEnv): Payable[] {
  const names = env.PAYDOC_NETWORKS?.trim()
    ? env.PAYDOC_NETWORKS.split(',').map((n) => n.trim()).filter(Boolean)
    // One wallet pays by default; with both keys set, Base is used.
    : [env.PAYER_KEY ? BASE_MAINNET : SOLANA_MAINNET];
  const networks = names.map((network): Payable => {
    const family = network.startsWith('eip155:') ? 'evm' : network.startsWith('solana:') ? 'svm' : undefined;
    if (!family) {
      throw new Error(`PAYDOC_NETWORKS: "${network.slice(0, 60)}" is neither an EVM (eip155:…) nor a Solana (solana:…) network`);
    }
    let usdc: { asset: string; decimals: number } | undefined;
    try {
      usdc = (family === 'evm' ? evmDefaultAsset : svmDefaultAsset)(network as Network, 'USDC');
    } catch {
      usdc = undefined;
    }
    // The caps are counted in USDC's 6 decimals: another token's units would not be dollars.
    if (!usdc || usdc.decimals !== USDC_DECIMALS) throw new Error(`PAYDOC_NETWORKS: x402 knows no USDC on ${network.slice(0, 60)}`);
    if (family === 'evm' && !env.PAYER_KEY) throw new Error(`PAYDOC_NETWORKS names ${network}: set PAYER_KEY (an EVM private key)`);
    if (family === 'svm' && (!env.SVM_PAYER_KEY || !env.SVM_RPC_URL)) {
      throw new Error(`PAYDOC_NETWORKS names ${network}: set SVM_PAYER_KEY and SVM_RPC_URL`);
    }
    return { network, family, usdc: usdc.asset };
  });
  // One key per family, and EVM_RPC_URL reads one chain.
  for (const family of ['evm', 'svm']) {
    if (networks.filter((n) => n.family === family).length > 1) {
      throw new Error(`PAYDOC_NETWORKS: name at most one ${family === 'evm' ? 'EVM' : 'Solana'} network`);
    }
  }
  return networks;
}

/** Reads the bridge's environment; throws with a message naming the variable at fault. */
export function readSettings(env: NodeJS.ProcessEnv, cwd = process.cwd()): BridgeSettings {
  const usd = (name: string, fallback: string): bigint => {
    const value = env[name] ?? fallback;
    const atomic = fromUsd(value);
    if (atomic === undefined) {
      throw new Error(`${name} must be an amount of US dollars such as 0.10 (at most 6 decimals); received "${value.slice(0, 40)}"`);
    }
    return atomic;
  };
  if (!env.PAYER_KEY && !env.SVM_PAYER_KEY) {
    throw new Error('set PAYER_KEY (an EVM private key, paying on Base) or SVM_PAYER_KEY (a base58 Solana secret key, with SVM_RPC_URL)');
  }
  const networks = readNetworks(env);
  let channelDeposit: bigint | undefined;
  if (env.CHANNEL_DEPOSIT_USD) {
    channelDeposit = usd('CHANNEL_DEPOSIT_USD', '');
    if (channelDeposit === 0n) throw new Error('CHANNEL_DEPOSIT_USD must be more than 0');
    if (!networks.some((n) => n.network === BASE_MAINNET)) {
      throw new Error(`CHANNEL_DEPOSIT_USD pays through a payment channel on Base (${BASE_MAINNET}) only `
        + '(Solana has none in @x402/svm): set PAYER_KEY and pay on Base');
    }
  }
  return {
    url: (env.PAYDOC_URL ?? 'http://localhost:8080').replace(/\/+$/, ''),
    networks,
    ...(channelDeposit !== undefined ? { channelDeposit } : {}),
    perCall: usd('MAX_USD_PER_CALL', '0.10'),
    total: usd('MAX_USD_TOTAL', '1.00'),
    filesRoot: path.resolve(cwd, env.PAYDOC_FILES_ROOT || cwd),
    ...(env.OUTPUT_DIR ? { outputDir: path.resolve(cwd, env.OUTPUT_DIR) } : {}),
  };
}

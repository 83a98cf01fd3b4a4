// Chooses the chains and facilitators the service offers. In dev mode (the embedded default of
// `npm start`) it starts a local rig per chain, each with its own facilitator, as production
// settles each chain through its own facilitator; in live mode it uses the configured URLs.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findDefaultAsset as findEvmAsset, getDefaultAsset as evmUsdc } from '@x402/evm';
import { getDefaultAsset as svmUsdc } from '@x402/svm';
import { ConfigError, type Config } from '../config.js';
import { PaymentGate, type ChainConfig } from './gate.js';
import { MemoryGuard, type PaymentGuard } from './guard.js';
import { RedisGuard } from './redis-guard.js';
import { cdpFacilitator, fixedAuth, payaiFacilitator, type FacilitatorAuth } from './facilitators.js';
import type { Metrics } from '../metrics.js';
import { PaymentChannels } from './channels/channels.js';
import { FileChannelStore } from './channels/file-store.js';

/**
 * The local chains as the service uses them in dev mode. devchains/ makes them (its EvmRig and
 * SvmRig have these members and more; test/layers.test.ts checks that they fit). Declared here,
 * not imported, so that the service compiles without devchains/, as the image builds it.
 */
export interface DevChain {
  network: `${string}:${string}`;
  rpcUrl: string;
  facilitatorUrl: string;
  asset: string;
  payTo: string;
  /** The demo payer: the page's dev mode pays with it on Base (plugins/dev.ts); bin/start.ts prints its key. */
  payerAddress: string;
}
export interface DevEvmChain extends DevChain {
  payerKey: `0x${string}`;
  /** Signs the dev service's batch-settlement claims and refunds (anvil dev account #8). */
  receiverAuthorizerKey: `0x${string}`;
  receiverAuthorizerAddress: `0x${string}`;
  balanceOf(address: string): Promise<bigint>;
}
export interface DevSvmChain extends DevChain {
  /** Base58, as SVM_PAYER_KEY takes it. */
  payerSecretKey: string;
}
export interface DevRigs { evm?: DevEvmChain; svm?: DevSvmChain }

/** What the service calls of devchains/index.ts. */
export interface DevChainsModule {
  startDevRigs(chains: { evm: boolean; svm: boolean }): Promise<DevRigs>;
  stopDevRigs(rigs: DevRigs): Promise<void>;
}

export const BASE_USDC_EXTRA = { name: 'USD Coin', version: '2' };

// The local chains are loaded only here, in dev mode: live mode never loads them, and a
// production install (no anvil, litesvm or solc) or the image (no devchains/ at all) need not
// have them. The specifier is not a literal, so that the compiler does not look for the folder.
const DEV_CHAINS_MODULE = '../../devchains/index.js';

async function loadDevChains(): Promise<DevChainsModule> {
  try {
    return await import(DEV_CHAINS_MODULE) as DevChainsModule;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    const missing = (err as Error).message.split('\n')[0];
    throw new Error(`PAYMENTS=dev needs the development dependencies and the local chains (devchains/), which this install lacks (${missing}); run it from a full checkout (npm ci without --omit=dev) or with PAYMENTS=live`);
  }
}

/** Starts the local chains named by DEV_CHAINS (tests pass rigs they own instead). */
export async function startDevRigs(config: Config): Promise<DevRigs> {
  const wanted = new Set(config.devChains.split(',').map((s) => s.trim()).filter(Boolean));
  const devChains = await loadDevChains();
  return devChains.startDevRigs({ evm: wanted.has('evm'), svm: wanted.has('svm') });
}

export async function stopDevRigs(rigs: DevRigs): Promise<void> {
  const devChains = await loadDevChains();
  await devChains.stopDevRigs(rigs);
}

/**
 * Each chain's facilitator URL and authentication in live mode. With the CDP key, the EVM chain
 * defaults to Coinbase's facilitator and every call carries a fresh JWT; with the PayAI key, Solana
 * defaults to PayAI's. A facilitator URL overrides the default and keeps the JWTs.
 */
async function liveFacilitators(
  config: Config,
): Promise<{ evm?: { url: string; auth?: FacilitatorAuth }; svm?: { url: string; auth?: FacilitatorAuth } }> {
  const found: Awaited<ReturnType<typeof liveFacilitators>> = {};
  if (config.cdpApiKeyId) found.evm = await cdpFacilitator(config.evmFacilitatorUrl, config.cdpApiKeyId, config.cdpApiKeySecret);
  else if (config.evmFacilitatorUrl) {
    found.evm = { url: config.evmFacilitatorUrl, ...(config.evmFacilitatorAuth ? { auth: fixedAuth(config.evmFacilitatorAuth, 'EVM_FACILITATOR_AUTH') } : {}) };
  }
  if (config.payaiApiKeyId) found.svm = await payaiFacilitator(config.svmFacilitatorUrl, config.payaiApiKeyId, config.payaiApiKeySecret);
  else if (config.svmFacilitatorUrl) {
    found.svm = { url: config.svmFacilitatorUrl, ...(config.svmFacilitatorAuth ? { auth: fixedAuth(config.svmFacilitatorAuth, 'SVM_FACILITATOR_AUTH') } : {}) };
  }
  return found;
}

export async function chainsFor(config: Config, rigs: DevRigs | undefined): Promise<ChainConfig[]> {
  const chains: ChainConfig[] = [];
  if (config.payments === 'dev') {
    if (rigs?.evm) {
      chains.push({
        network: rigs.evm.network, asset: rigs.evm.asset, payTo: config.evmPayTo || rigs.evm.payTo,
        facilitatorUrl: rigs.evm.facilitatorUrl, extra: BASE_USDC_EXTRA, rpcUrl: rigs.evm.rpcUrl,
      });
    }
    if (rigs?.svm) {
      const { network, asset, facilitatorUrl, rpcUrl } = rigs.svm;
      chains.push({ network, asset, payTo: config.svmPayTo || rigs.svm.payTo, facilitatorUrl, rpcUrl });
    }
    return chains;
  }
  const facilitators = await liveFacilitators(config);
  if (facilitators.evm) {
    // The token and its EIP-712 domain (Base's USDC signs as "USD Coin" v2, Base Sepolia's as "USDC"
    // v2) come from x402's own table of default assets.
    const network = config.evmNetwork as ChainConfig['network'];
    const asset = config.evmAsset || knownAsset(() => evmUsdc(network).asset, 'EVM_ASSET', network);
    const known = findEvmAsset(asset, network);
    const rpcUrl = await evmRpcUrl(config, network);
    chains.push({
      network, asset, payTo: config.evmPayTo,
      facilitatorUrl: facilitators.evm.url, ...(facilitators.evm.auth ? { facilitatorAuth: facilitators.evm.auth } : {}),
      extra: known ? { name: known.name, version: known.version } : BASE_USDC_EXTRA,
      ...(rpcUrl ? { rpcUrl } : {}),
    });
  }
  if (facilitators.svm) {
    const asset = config.svmAsset || knownAsset(() => svmUsdc(config.svmNetwork as ChainConfig['network']).asset, 'SVM_ASSET', config.svmNetwork);
    chains.push({
      network: config.svmNetwork as ChainConfig['network'], asset, payTo: config.svmPayTo,
      facilitatorUrl: facilitators.svm.url, ...(facilitators.svm.auth ? { facilitatorAuth: facilitators.svm.auth } : {}),
      ...(config.svmRpcUrl ? { rpcUrl: config.svmRpcUrl } : {}),
    });
  }
  return chains;
}

/** EVM_RPC_URL, else the chain's public RPC as viem's table of chains knows it (Base: mainnet.base.org). */
async function evmRpcUrl(config: Config, network: string): Promise<string | undefined> {
  if (config.evmRpcUrl) return config.evmRpcUrl;
  const id = Number(network.split(':')[1]);
  const chains = Object.values(await import('viem/chains')) as Array<{ id?: number; rpcUrls?: { default?: { http?: readonly string[] } } }>;
  return chains.find((chain) => chain.id === id)?.rpcUrls?.default?.http?.[0];
}

function knownAsset(lookup: () => string, variable: string, network: string): string {
  try {
    return lookup();
  } catch {
    throw new ConfigError(`invalid configuration: ${variable}: x402 knows no USDC on ${network}; set ${variable} to the token's address`);
  }
}

export async function createGuard(config: Config): Promise<PaymentGuard> {
  return config.redisUrl ? RedisGuard.connect(config.redisUrl) : new MemoryGuard();
}

/**
 * Payment channels (batch-settlement) on the EVM chain, when a receiver-authorizer key is set (in
 * dev mode, the local chain's). Their state is in Redis when the replicas share one, else in the
 * embedded store: CHANNEL_STORE_DIR, or in dev mode a fresh folder, as the local chain is new.
 */
function channelsFor(
  config: Config, chains: readonly ChainConfig[], rigs: DevRigs | undefined, guard: PaymentGuard,
): PaymentChannels | undefined {
  const key = config.batchReceiverAuthorizerKey || (config.payments === 'dev' ? rigs?.evm?.receiverAuthorizerKey : undefined);
  if (!key) return undefined;
  const chain = chains.find((c) => c.network.startsWith('eip155:'));
  if (!chain) {
    if (config.payments === 'dev') return undefined;
    throw new ConfigError('invalid configuration: BATCH_RECEIVER_AUTHORIZER_KEY is set, but no EVM chain is offered: payment channels need one');
  }
  const settings = {
    network: chain.network, asset: chain.asset as `0x${string}`, payTo: chain.payTo as `0x${string}`, receiverAuthorizerKey: key as `0x${string}`,
    withdrawDelayS: config.batchWithdrawDelayS, claimIntervalS: config.batchClaimIntervalS,
    settleIntervalS: config.batchSettleIntervalS, idleRefundS: config.batchIdleRefundS,
  };
  if (guard instanceof RedisGuard) return new PaymentChannels(settings, guard.channelStorage());
  const store = config.channelStoreDir
    ? FileChannelStore.open(config.channelStoreDir)
    : FileChannelStore.open(mkdtempSync(path.join(os.tmpdir(), 'paydoc-channels-')), { removeOnClose: true });
  return new PaymentChannels(settings, store);
}

export async function createPaymentGate(config: Config, rigs: DevRigs | undefined, metrics: Metrics): Promise<PaymentGate> {
  const guard = await createGuard(config);
  let channels: PaymentChannels | undefined;
  try {
    const chains = await chainsFor(config, rigs);
    channels = channelsFor(config, chains, rigs, guard);
    // Read when a result is held, not now: a test learns its own address only once it listens.
    return await PaymentGate.create(chains, guard, metrics, config.facilitatorTimeoutMs, () => config.replicaUrl || undefined, channels);
  } catch (err) {
    await channels?.close().catch(() => undefined);
    await guard.close().catch(() => undefined);
    throw err;
  }
}

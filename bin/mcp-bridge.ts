#!/usr/bin/env node
// A paying MCP bridge over stdio, for MCP hosts (desktop chat apps, IDE agents) that cannot pay
// and should not move megabytes of base64 through a conversation. It serves the service's tools
// with the official SDK; a file argument may be a local { path } inside one folder; every call is
// quoted first and paid from the configured wallet only in canonical USDC on the configured
// networks and within two caps; results that are files are written into OUTPUT_DIR and returned
// as their paths. The upstream is not trusted: what it names, offers and answers is checked here.
//
//   PAYDOC_URL=https://… PAYER_KEY=0x… node dist/bin/mcp-bridge.js
//   PAYDOC_URL=https://… SVM_PAYER_KEY=… SVM_RPC_URL=https://… node dist/bin/mcp-bridge.js
//   PAYDOC_URL=https://… PAYER_KEY=0x… CHANNEL_DEPOSIT_USD=1 node dist/bin/mcp-bridge.js   (through a channel on Base)
import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, CallToolResultSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { x402Client } from '@x402/core/client';
import type { Network, PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { getDefaultAsset as evmDefaultAsset } from '@x402/evm';
import { getDefaultAsset as svmDefaultAsset } from '@x402/svm';
import { createPublicClient, http, parseAbi, type PublicClient } from 'viem';
// Only the client layer and the core: the bridge ships as paydoc-mcp and loads nothing of the
// service (test/layers.test.ts walks its imports).
import { channelsDir, createPayer } from '../client/payer.js';
import { fromUsd, toUsd, USDC_DECIMALS } from '../client/usd.js';
import { MCP_MAX_DECODED_BYTES, PAYMENT_META_KEY, RECEIPT_META_KEY } from '../client/protocol.js';
import { VERSION } from '../core/version.js';
// A result the service holds after an unconfirmed settlement is fetched again with the same payment.
const HELD_CODES = new Set(['SETTLEMENT_UNCONFIRMED', 'PAYMENT_IN_PROGRESS']);
const HELD_RETRIES = 6;
const HELD_RETRY_DELAY_MS = 2_000;
// Model jobs may run four minutes; the service's progress notifications keep the call alive.
const CALL_TIMEOUT_MS = 15 * 60_000;

const BASE_MAINNET = 'eip155:8453';
/** x402's payment channels (on Base): one deposit, then a signed voucher per call. */
const CHANNEL_SCHEME = 'batch-settlement';
const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
const AUTHORIZATION_STATE_ABI = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)']);

// A Map, not an object: a media type such as "constructor" must not find Object's own members.
const EXTENSIONS = new Map(Object.entries({
  'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'image/avif': 'avif', 'image/gif': 'gif', 'image/tiff': 'tiff',
  'application/pdf': 'pdf', 'application/zip': 'zip', 'text/markdown': 'md', 'text/plain': 'txt',
}));

/** A network the bridge signs for, and the one asset it pays in there: x402's canonical USDC. */
interface Payable {
  network: string;
  family: 'evm' | 'svm';
  usdc: string;
}

interface BridgeSettings {
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

/** The networks to sign for: PAYDOC_NETWORKS, or Base for PAYER_KEY, else Solana mainnet. Each must have USDC in x402's tables and a key. */
function readNetworks(env: NodeJS.ProcessEnv): Payable[] {
  const names = env.PAYDOC_NETWORKS?.trim()
    ? env.PAYDOC_NETWORKS.split(',').map((n) => n.trim()).filter(Boolean)
    // One wallet pays by default; with both keys set, Base is used.
    : [env.PAYER_KEY ? BASE_MAINNET : SOLANA_MAINNET];
  const networks = names.map((network): Payable => {
    const family = network.startsWith('eip155:') ? 'evm' : network.startsWith('solana:') ? 'svm' : undefined;
    if (!family) throw new Error(`PAYDOC_NETWORKS: "${network.slice(0, 60)}" is neither an EVM (eip155:…) nor a Solana (solana:…) network`);
    let usdc: { asset: string; decimals: number } | undefined;
    try {
      usdc = (family === 'evm' ? evmDefaultAsset : svmDefaultAsset)(network as Network, 'USDC');
    } catch {
      usdc = undefined;
    }
    // The caps are counted in USDC's 6 decimals: another token's units would not be dollars.
    if (!usdc || usdc.decimals !== USDC_DECIMALS) throw new Error(`PAYDOC_NETWORKS: x402 knows no USDC on ${network.slice(0, 60)}`);
    if (family === 'evm' && !env.PAYER_KEY) throw new Error(`PAYDOC_NETWORKS names ${network}: set PAYER_KEY (an EVM private key)`);
    if (family === 'svm' && (!env.SVM_PAYER_KEY || !env.SVM_RPC_URL)) throw new Error(`PAYDOC_NETWORKS names ${network}: set SVM_PAYER_KEY and SVM_RPC_URL`);
    return { network, family, usdc: usdc.asset };
  });
  // One key per family, and EVM_RPC_URL reads one chain.
  for (const family of ['evm', 'svm']) {
    if (networks.filter((n) => n.family === family).length > 1) throw new Error(`PAYDOC_NETWORKS: name at most one ${family === 'evm' ? 'EVM' : 'Solana'} network`);
  }
  return networks;
}

/** Reads the bridge's environment; throws with a message naming the variable at fault. */
function readSettings(env: NodeJS.ProcessEnv): BridgeSettings {
  const usd = (name: string, fallback: string): bigint => {
    const value = env[name] ?? fallback;
    const atomic = fromUsd(value);
    if (atomic === undefined) throw new Error(`${name} must be an amount of US dollars such as 0.10 (at most 6 decimals); received "${value.slice(0, 40)}"`);
    return atomic;
  };
  if (!env.PAYER_KEY && !env.SVM_PAYER_KEY) throw new Error('set PAYER_KEY (an EVM private key, paying on Base) or SVM_PAYER_KEY (a base58 Solana secret key, with SVM_RPC_URL)');
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
    filesRoot: path.resolve(env.PAYDOC_FILES_ROOT || process.cwd()),
    ...(env.OUTPUT_DIR ? { outputDir: path.resolve(env.OUTPUT_DIR) } : {}),
  };
}

/** Whether `file` is `folder` or lies below it (both absolute). */
function isWithin(folder: string, file: string): boolean {
  const relative = path.relative(folder, file);
  return relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/** The one folder `{ path }` arguments may be read from: its name as configured, and its real path. */
class FilesRoot {
  private constructor(readonly name: string, readonly real: string) {}

  static async open(name: string): Promise<FilesRoot> {
    let real: string;
    try {
      real = await realpath(name);
    } catch {
      throw new Error(`PAYDOC_FILES_ROOT: no folder at ${name}`);
    }
    if (!(await stat(real)).isDirectory()) throw new Error(`PAYDOC_FILES_ROOT: ${name} is not a folder`);
    return new FilesRoot(name, real);
  }

  /** A name that points inside before anything is opened (under either spelling of the root). */
  namesInside(file: string): boolean {
    return isWithin(this.name, file) || isWithin(this.real, file);
  }

  /** A real path (symlinks resolved) inside. */
  holds(real: string | undefined): boolean {
    return real !== undefined && isWithin(this.real, real);
  }
}

const PATH_ARGUMENT = {
  type: 'object',
  required: ['path'],
  additionalProperties: false,
  properties: { path: { type: 'string', description: 'A local file path inside the bridge\'s files folder (its working directory, or PAYDOC_FILES_ROOT); relative paths start there.' } },
};

/** The service's tool as this bridge offers it: files may also be local paths, and the bridge pays. */
function bridgedTool(tool: Tool): Tool {
  const schema = structuredClone(tool.inputSchema) as { properties?: Record<string, Record<string, unknown>> };
  const props = schema.properties ?? {};
  const either = (original: Record<string, unknown>) => {
    const { description, ...rest } = original;
    // An upstream file argument that is already a choice ({ data } or { url }) keeps every choice, beside { path }.
    const choices = Object.keys(rest).length === 1 && Array.isArray(rest.anyOf ?? rest.oneOf) ? (rest.anyOf ?? rest.oneOf) as unknown[] : [rest];
    return { ...(description ? { description } : {}), anyOf: [PATH_ARGUMENT, ...choices] };
  };
  if (props.file) props.file = either(props.file);
  if (props.files?.items) props.files = { ...props.files, items: either(props.files.items as Record<string, unknown>) };
  const description = tool.description?.replace(/ Paid with x402 \(([^)]*)\):.*$/s, ' Price: $1.') ?? '';
  return {
    ...tool,
    inputSchema: schema as Tool['inputSchema'],
    description: `${description} Through this bridge: pass a local file as { "path": "…" } (or as the service takes files); the bridge quotes, pays from its wallet within its caps, and writes file results to its output folder, returning their paths (a result delivered as a link, or to deliver_to, comes back as the service sends it).`,
  };
}

class Refusal extends Error {}

function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** The real path of an opened file: what /proc says the descriptor is, else its name's real path if that is still the same file. */
async function openedPath(handle: FileHandle, file: string, info: Stats): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    const real = await realpath(file).catch(() => undefined);
    const now = real === undefined ? undefined : await stat(real).catch(() => undefined);
    return now && now.dev === info.dev && now.ino === info.ino ? real : undefined;
  }
}

/**
 * A `{ path }` argument as the service takes it, `{ data }`; anything else unchanged. The path must
 * lead inside the files root: it is checked by name before it is opened, then by the real path of
 * what was opened (so a symlink, or one swapped in meanwhile, is judged by where it really leads),
 * and only that open file is read.
 */
async function readLocalFile(value: unknown, where: string, root: FilesRoot): Promise<unknown> {
  if (typeof value !== 'object' || value === null || !('path' in value)) return value;
  const given = (value as { path: unknown }).path;
  if (typeof given !== 'string' || given === '') throw new Refusal(`${where}.path must be a file path`);
  const file = path.resolve(root.name, given.startsWith('~/') ? path.join(os.homedir(), given.slice(2)) : given);
  const outside = () => new Refusal(`${where}.path: ${given} is outside ${root.name}, the only folder this bridge reads files from (its working directory, or PAYDOC_FILES_ROOT). Nothing was read or sent.`);
  if (!root.namesInside(file)) throw outside();
  let handle: FileHandle;
  try {
    // Non-blocking: a FIFO put in place of a file must not hang the bridge.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new Refusal(`${where}.path: no file at ${file}`);
    throw new Refusal(`${where}.path: ${file} cannot be opened (${code ?? 'error'})`);
  }
  try {
    const info = await handle.stat();
    if (!root.holds(await openedPath(handle, file, info))) throw outside();
    if (!info.isFile()) throw new Refusal(`${where}.path: ${file} is not a regular file`);
    if (info.size > MCP_MAX_DECODED_BYTES) throw new Refusal(`${where}.path: the file is ${info.size} bytes; a call takes at most ${MCP_MAX_DECODED_BYTES} bytes`);
    return { data: (await handle.readFile()).toString('base64') };
  } finally {
    await handle.close();
  }
}

/** The arguments with every `{ path }` replaced by the file's bytes; a refused path refuses the call before anything is sent. */
async function withLocalFiles(args: Record<string, unknown> = {}, root: FilesRoot): Promise<Record<string, unknown>> {
  const out = { ...args };
  if (out.file !== undefined) out.file = await readLocalFile(out.file, 'file', root);
  if (Array.isArray(out.files)) {
    const files: unknown[] = [];
    for (const [i, f] of out.files.entries()) files.push(await readLocalFile(f, `files[${i}]`, root));
    out.files = files;
  }
  return out;
}

/** A result the service hands over elsewhere (a download link, or a push to deliver_to) is not written here. */
function deliveredElsewhere(args: Record<string, unknown>): boolean {
  return args.delivery === 'link' || args.deliver_to !== undefined;
}

function isPaymentRequired(value: unknown): value is PaymentRequired {
  return typeof value === 'object' && value !== null && Array.isArray((value as PaymentRequired).accepts) && typeof (value as PaymentRequired).x402Version === 'number';
}

function errorCodeOf(result: CallToolResult): string | undefined {
  return (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An upstream string shown in a message: bounded, on one line. */
const shown = (value: unknown) => String(value).replace(/\s+/g, ' ').slice(0, 80);

/** One offer as a person reads it: amount, asset, network, and a transfer method or scheme when not the usual. */
function describeOffer(offer: PaymentRequirements): string {
  const method = (offer.extra as { assetTransferMethod?: unknown } | undefined)?.assetTransferMethod;
  return `${shown(offer.amount)} of ${shown(offer.asset)} on ${shown(offer.network)}${method !== undefined ? ` (by ${shown(method)})` : ''}${offer.scheme !== 'exact' ? ` (scheme ${shown(offer.scheme)})` : ''}`;
}

/**
 * One signed authorization. It counts against MAX_USD_TOTAL from the moment it is signed until it is
 * known unspent: its validity has passed on the chain and the chain shows it unused.
 */
interface Authorization {
  amount: bigint;
  /** Known to have moved money: the service's receipt said so, or the chain showed it used. */
  spent: boolean;
  /** EIP-3009: the authorizer and nonce the USDC contract's authorizationState reads, and the end of its validity. */
  evm?: { from: `0x${string}`; nonce: `0x${string}`; validBefore: bigint };
}

/** Reads the EVM chain the bridge pays on, to learn whether a lapsed authorization was used. */
class EvmChain {
  private checked: Promise<void> | undefined;

  constructor(private readonly client: PublicClient, private readonly payable: Payable) {}

  /** The RPC must serve the network paid on: an answer from another chain would release nothing honestly. */
  private sameChain(): Promise<void> {
    this.checked ??= this.client.getChainId().then((id) => {
      if (`eip155:${id}` !== this.payable.network) throw new Error(`EVM_RPC_URL serves eip155:${id}, not ${this.payable.network}`);
    });
    this.checked.catch(() => { this.checked = undefined; });
    return this.checked;
  }

  /**
   * Which of these authorizations can never be spent, and which were: transferWithAuthorization
   * requires block.timestamp < validBefore, so once the latest block has reached validBefore, its
   * nonce's state at that block is final. Authorizations still valid there are left out.
   */
  async settled(authorizations: Authorization[]): Promise<{ unused: Authorization[]; used: Authorization[] }> {
    await this.sameChain();
    const block = await this.client.getBlock({ blockTag: 'latest' });
    const unused: Authorization[] = [];
    const used: Authorization[] = [];
    for (const a of authorizations) {
      if (!a.evm || a.evm.validBefore > block.timestamp) continue;
      const state = await this.client.readContract({
        address: this.payable.usdc as `0x${string}`, abi: AUTHORIZATION_STATE_ABI, functionName: 'authorizationState',
        args: [a.evm.from, a.evm.nonce], blockNumber: block.number,
      });
      (state ? used : unused).push(a);
    }
    return { unused, used };
  }
}

interface Payers { evm?: x402Client; svm?: x402Client }

class Bridge {
  /** Every authorization signed and not yet known unspent. */
  private signed: Authorization[] = [];
  /** Prices of authorizations being signed: counted already, so that parallel calls cannot pass the total together. */
  private reserved = 0n;
  private outputDir: Promise<string> | undefined;
  private written = 0;
  /**
   * The payment channel this run: what it deposited (counted against MAX_USD_TOTAL from signing on)
   * and what its calls were charged. Charges beyond this run's deposits draw on an earlier run's and
   * count too, so the channel counts max(deposited, charged).
   */
  private channel = { deposited: 0n, charged: 0n };
  /** One channel call at a time: each voucher goes on from the total the previous one left. */
  private channelQueue: Promise<unknown> = Promise.resolve();
  /** The call being signed through the channel: its price, and the room reserved for it. */
  private channelSigning: { price: bigint; reserved: bigint; refusal?: Refusal } | undefined;

  constructor(
    private readonly settings: BridgeSettings,
    private readonly root: FilesRoot,
    private readonly upstream: Client,
    private readonly payers: Payers,
    private readonly evmChain: EvmChain | undefined,
  ) {}

  private channelCounted(): bigint {
    const { deposited, charged } = this.channel;
    return deposited > charged ? deposited : charged;
  }

  private spent(): bigint {
    return this.signed.reduce((sum, a) => (a.spent ? sum + a.amount : sum), 0n) + this.channelCounted();
  }

  private left(): bigint {
    return this.settings.total - this.reserved - this.signed.reduce((sum, a) => sum + a.amount, 0n) - this.channelCounted();
  }

  private spending(): string {
    const pending = this.signed.reduce((sum, a) => (a.spent ? sum : sum + a.amount), 0n);
    const solana = this.signed.some((a) => !a.spent && !a.evm);
    const { deposited, charged } = this.channel;
    return [
      `Spent so far: ${toUsd(this.spent())} of ${toUsd(this.settings.total)} USD (MAX_USD_TOTAL).`,
      ...(deposited > 0n || charged > 0n
        ? [`Of it, the payment channel on Base: ${toUsd(deposited)} USD deposited by this bridge, ${toUsd(charged)} USD charged; `
          + 'what is not charged stays the wallet\'s (a refund returns it).']
        : []),
      ...(pending > 0n ? [`A further ${toUsd(pending)} USD is signed for calls not paid for; it counts until the chain shows its authorization expired unspent${solana ? ' (on Solana: until this bridge restarts)' : ''}.`] : []),
    ].join(' ');
  }

  private folder(): Promise<string> {
    const { outputDir } = this.settings;
    // The real path: every file written is checked to land directly in it.
    this.outputDir ??= (outputDir
      ? mkdir(outputDir, { recursive: true }).then(() => outputDir)
      : mkdtemp(path.join(process.cwd(), 'paydoc-results-'))).then((dir) => realpath(dir));
    // A folder that cannot be made is reported on every call, not remembered as a failure.
    this.outputDir.catch(() => { this.outputDir = undefined; });
    return this.outputDir;
  }

  /** Writes one result file directly in the output folder, under a new name of safe characters only. */
  private async write(tool: string, mediaType: string, bytes: Buffer): Promise<string> {
    const dir = await this.folder();
    // The tool's name comes from the upstream: only letters, digits, _ and - reach the file name.
    const base = tool.replace(/^svc_/, '').replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64) || 'result';
    const extension = EXTENSIONS.get(mediaType) ?? 'bin';
    for (;;) {
      const file = path.resolve(dir, `${base}-${++this.written}.${extension}`);
      if (path.dirname(file) !== dir) throw new Error(`refused to write ${file}, outside the output folder`);
      try {
        // 'wx': never an existing file, nor a symlink planted under the name.
        const handle = await open(file, 'wx');
        try {
          await handle.writeFile(bytes);
        } finally {
          await handle.close();
        }
        return file;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
  }

  /** The offer to sign: the exact scheme, in canonical USDC, on a configured network (the first listed that is offered). */
  private choose(pr: PaymentRequired): PaymentRequirements {
    const signable = (offer: PaymentRequirements, to: Payable) => {
      // With CHANNEL_DEPOSIT_USD, Base is paid through a payment channel only.
      const scheme = this.settings.channelDeposit !== undefined && to.network === BASE_MAINNET ? CHANNEL_SCHEME : 'exact';
      if (offer.scheme !== scheme || offer.network !== to.network || !/^\d{1,30}$/.test(String(offer.amount))) return false;
      if (scheme === CHANNEL_SCHEME) return typeof offer.asset === 'string' && offer.asset.toLowerCase() === to.usdc.toLowerCase();
      if (to.family === 'svm') return offer.asset === to.usdc;
      // EIP-3009 only (no Permit2 approvals): its authorizations are the ones the chain can be asked about.
      const method = (offer.extra as { assetTransferMethod?: unknown } | undefined)?.assetTransferMethod;
      return typeof offer.asset === 'string' && offer.asset.toLowerCase() === to.usdc.toLowerCase() && (method === undefined || method === 'eip3009');
    };
    const accepts = pr.accepts.filter((a): a is PaymentRequirements => typeof a === 'object' && a !== null);
    if (pr.x402Version === 2) {
      for (const to of this.settings.networks) {
        const offer = accepts.find((a) => signable(a, to));
        if (offer) return offer;
      }
    }
    const offered = pr.x402Version === 2 ? accepts.slice(0, 5).map(describeOffer).join('; ') || 'none' : `x402 version ${shown(pr.x402Version)}`;
    const channelled = (n: Payable) => this.settings.channelDeposit !== undefined && n.network === BASE_MAINNET;
    const through = (n: Payable) => (channelled(n) ? ' through a payment channel (CHANNEL_DEPOSIT_USD)' : '');
    const signs = this.settings.networks.map((n) => `USDC (${n.usdc}) on ${n.network}${through(n)}`).join(' or ');
    throw new Refusal(`the service offers only payments this bridge does not sign: ${offered}; this bridge signs ${signs} only (PAYDOC_NETWORKS). Nothing was signed or paid.`);
  }

  /** Authorizations past their validity that the chain shows unused are released; those it shows used stay, as spent. */
  private async releaseLapsed(): Promise<void> {
    const now = BigInt(Math.floor(Date.now() / 1000));
    const lapsed = this.signed.filter((a) => !a.spent && a.evm && a.evm.validBefore <= now);
    if (!this.evmChain || lapsed.length === 0) return;
    try {
      const { unused, used } = await this.evmChain.settled(lapsed);
      for (const a of used) a.spent = true;
      this.signed = this.signed.filter((a) => !unused.includes(a));
    } catch (err) {
      // Unread, they stay counted: the total is never passed on a guess.
      process.stderr.write(`paydoc-mcp: could not read the chain for lapsed authorizations: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
    }
  }

  /** Reserves `price` within MAX_USD_TOTAL, or refuses; to be signed for at once. */
  private async reserve(price: bigint): Promise<void> {
    if (price > this.left()) await this.releaseLapsed();
    // Checked and taken in one step, with no wait between: parallel calls cannot share the last room.
    const left = this.left();
    if (price > left) {
      throw new Refusal(`the price is ${toUsd(price)} USD, and only ${toUsd(left < 0n ? 0n : left)} USD of MAX_USD_TOTAL (${toUsd(this.settings.total)} USD) is left; nothing was signed or paid. ${this.spending()}`);
    }
    this.reserved += price;
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
        + `(${toUsd(this.settings.total)} USD) is left; nothing was signed or paid. ${this.spending()}`);
      throw signing.refusal;
    }
  }

  /**
   * A call paid through the payment channel: a voucher, with a deposit when the channel runs short.
   * A corrective 402 (the service's charged total differs from the local one) resyncs the channel
   * through x402's scheme, and the call is signed once more.
   */
  private async channelCall(
    name: string, args: Record<string, unknown>, pr: PaymentRequired, offer: PaymentRequirements, price: bigint,
    onprogress?: (p: { progress: number; total?: number; message?: string }) => void,
  ): Promise<CallToolResult> {
    const payer = this.payers.evm!;
    for (let attempt = 0; ; attempt++) {
      // What the voucher draws beyond this run's deposits counts now; a deposit is counted when asked for.
      const { deposited, charged } = this.channel;
      const beyond = charged + price > deposited ? charged + price - (deposited > charged ? deposited : charged) : 0n;
      try {
        await this.reserve(beyond);
      } catch (err) {
        if (err instanceof Refusal) return toolError(err.message);
        throw err;
      }
      this.channelSigning = { price, reserved: beyond };
      let payment: PaymentPayload;
      try {
        payment = await payer.createPaymentPayload({ ...pr, accepts: [offer] });
      } catch (err) {
        if (this.channelSigning.refusal) return toolError(this.channelSigning.refusal.message);
        throw err;
      } finally {
        this.reserved -= beyond;
      }
      this.channelSigning = undefined;
      const deposit = (payment.payload as { deposit?: { amount?: string } }).deposit?.amount;
      // Signed: the deposit counts from here on, whatever the service answers.
      if (deposit) this.channel.deposited += BigInt(deposit);
      const result = await this.paidCall(name, args, payment, onprogress);
      const receipt = result._meta?.[RECEIPT_META_KEY] as SettleResponse | undefined;
      if (!result.isError && receipt?.success) {
        const chargedNow = (receipt.extra as { chargedAmount?: unknown } | undefined)?.chargedAmount;
        this.channel.charged += typeof chargedNow === 'string' && /^\d{1,30}$/.test(chargedNow) ? BigInt(chargedNow) : price;
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
      if (deposit) process.stderr.write(`paydoc-mcp: ${shown(name)} not confirmed paid; its deposit of ${toUsd(BigInt(deposit))} USD stays counted\n`);
      return result;
    }
  }

  /** Signs the offer with the reserved price; the authorization counts from here on. */
  private async sign(pr: PaymentRequired, offer: PaymentRequirements, price: bigint): Promise<{ payment: PaymentPayload; authorization: Authorization }> {
    const payer = offer.network.startsWith('eip155:') ? this.payers.evm! : this.payers.svm!;
    let payment: PaymentPayload;
    try {
      payment = await payer.createPaymentPayload({ ...pr, accepts: [offer] });
    } finally {
      this.reserved -= price;
    }
    const eip3009 = (payment.payload as { authorization?: { from: `0x${string}`; nonce: `0x${string}`; validBefore: string } }).authorization;
    // Solana's signed transaction names no nonce the chain could be asked about: it is never released.
    const authorization: Authorization = { amount: price, spent: false, ...(eip3009 ? { evm: { from: eip3009.from, nonce: eip3009.nonce, validBefore: BigInt(eip3009.validBefore) } } : {}) };
    this.signed.push(authorization);
    return { payment, authorization };
  }

  /**
   * One call upstream. Its result is not checked against the tool's outputSchema here: a paid result
   * the schema does not describe (a link, say) must still reach the host.
   */
  private callUpstream(name: string, args: Record<string, unknown>, payment?: PaymentPayload, onprogress?: (p: { progress: number; total?: number; message?: string }) => void): Promise<CallToolResult> {
    return this.upstream.request(
      { method: 'tools/call', params: { name, arguments: args, ...(payment ? { _meta: { [PAYMENT_META_KEY]: payment } } : {}) } },
      CallToolResultSchema,
      { timeout: CALL_TIMEOUT_MS, maxTotalTimeout: CALL_TIMEOUT_MS, resetTimeoutOnProgress: true, ...(onprogress ? { onprogress } : {}) },
    ) as Promise<CallToolResult>;
  }

  /** The paid call; a held result is asked for again with the same payment (the same authorization, counted once). */
  private async paidCall(name: string, args: Record<string, unknown>, payment: PaymentPayload, onprogress?: (p: { progress: number; total?: number; message?: string }) => void): Promise<CallToolResult> {
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
      if (item.type === 'image') { bytes = Buffer.from(item.data, 'base64'); mediaType = item.mimeType; }
      else if (item.type === 'resource' && 'blob' in item.resource) { bytes = Buffer.from(item.resource.blob, 'base64'); mediaType = item.resource.mimeType ?? 'application/octet-stream'; }
      if (!bytes) { content.push(item); continue; }
      let file: string;
      try {
        file = await this.write(name, mediaType, bytes);
      } catch (err) {
        // Paid for: the result is returned inline rather than lost.
        content.push({ type: 'text', text: `Could not write the ${shown(mediaType)} result to the output folder (${(err as Error).message}); it follows inline.` }, item);
        continue;
      }
      files.push({ path: file, mediaType, bytes: bytes.length });
      content.push({ type: 'resource_link', uri: pathToFileURL(file).href, name: path.basename(file), mimeType: mediaType, size: bytes.length });
    }
    const transaction = how ?? (receipt?.transaction ? `, transaction ${receipt.transaction}` : '');
    const paid = `Paid ${toUsd(price)} USD on ${receipt?.network ?? 'the quoted network'}${transaction}.`;
    const wrote = files.map((f) => `Wrote ${f.path} (${shown(f.mediaType)}, ${f.bytes} bytes).`);
    content.unshift({ type: 'text', text: [...wrote, paid, this.spending()].join(' ') });
    const structured = result.structuredContent ?? (files.length > 0 ? { files, receipt, spentUsd: toUsd(this.spent()) } : undefined);
    return { content, ...(structured ? { structuredContent: structured } : {}), _meta: { [RECEIPT_META_KEY]: receipt } };
  }

  async call(name: string, returnsFiles: boolean, given: Record<string, unknown> | undefined, onprogress?: (p: { progress: number; total?: number; message?: string }) => void): Promise<CallToolResult> {
    let args: Record<string, unknown>;
    try {
      args = await withLocalFiles(given, this.root);
    } catch (err) {
      if (err instanceof Refusal) return toolError(err.message);
      throw err;
    }
    const quote = await this.callUpstream(name, args);
    if (!quote.isError) return quote;
    if (!isPaymentRequired(quote.structuredContent)) return quote;
    const pr = quote.structuredContent;
    let offer: PaymentRequirements;
    let price: bigint;
    try {
      offer = this.choose(pr);
      price = BigInt(offer.amount);
      if (price > this.settings.perCall) {
        throw new Refusal(`the price is ${toUsd(price)} USD, above MAX_USD_PER_CALL (${toUsd(this.settings.perCall)} USD); nothing was signed or paid. ${this.spending()}`);
      }
    } catch (err) {
      if (err instanceof Refusal) return toolError(err.message);
      throw err;
    }
    if (returnsFiles && !deliveredElsewhere(args)) {
      try {
        await this.folder();
      } catch (err) {
        return toolError(`the output folder cannot be made (${(err as Error).message}); set OUTPUT_DIR to a writable folder. Nothing was signed or paid.`);
      }
    }
    if (offer.scheme === CHANNEL_SCHEME) {
      const queued = this.channelQueue.then(() => this.channelCall(name, args, pr, offer, price, onprogress));
      this.channelQueue = queued.catch(() => undefined);
      return queued;
    }
    try {
      await this.reserve(price);
    } catch (err) {
      if (err instanceof Refusal) return toolError(err.message);
      throw err;
    }
    const { payment, authorization } = await this.sign(pr, offer, price);
    const result = await this.paidCall(name, args, payment, onprogress);
    const receipt = result._meta?.[RECEIPT_META_KEY] as SettleResponse | undefined;
    if (result.isError || !receipt?.success) {
      process.stderr.write(`paydoc-mcp: ${name} not confirmed paid; its ${toUsd(price)} USD stays counted until the chain shows it unspent\n`);
      return result;
    }
    authorization.spent = true;
    return await this.deliver(name, result, price);
  }
}

/** The chain reader for releasing lapsed EVM authorizations: EVM_RPC_URL, else viem's public RPC for the network. */
async function evmChainFor(networks: Payable[], env: NodeJS.ProcessEnv): Promise<EvmChain | undefined> {
  const payable = networks.find((n) => n.family === 'evm');
  if (!payable) return undefined;
  let rpcUrl = env.EVM_RPC_URL;
  if (!rpcUrl) {
    const id = Number(payable.network.slice('eip155:'.length));
    const chains = Object.values(await import('viem/chains')) as Array<{ id?: number; rpcUrls?: { default?: { http?: readonly string[] } } }>;
    rpcUrl = chains.find((c) => c.id === id)?.rpcUrls?.default?.http?.[0];
  }
  if (!rpcUrl) {
    process.stderr.write(`paydoc-mcp: no RPC known for ${payable.network} (set EVM_RPC_URL): unpaid authorizations stay counted against MAX_USD_TOTAL\n`);
    return undefined;
  }
  return new EvmChain(createPublicClient({ transport: http(rpcUrl) }), payable);
}

async function startBridge(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const settings = readSettings(env);
  const root = await FilesRoot.open(settings.filesRoot);
  const families = new Set(settings.networks.map((n) => n.family));
  // The standard client's own per-payment cap, which defaults to 1 USD, follows MAX_USD_PER_CALL.
  const maxUsd = toUsd(settings.perCall);
  // x402's channel scheme asks the bridge before it signs a deposit; the bridge is made below.
  let bridge: Bridge | undefined;
  const channel = settings.channelDeposit === undefined ? undefined : {
    deposit: settings.channelDeposit, directory: channelsDir(env), ...(env.EVM_RPC_URL ? { rpcUrl: env.EVM_RPC_URL } : {}),
    approveDeposit: (deposit: bigint) => bridge!.approveDeposit(deposit),
  };
  const payers: Payers = {
    ...(families.has('evm')
      ? { evm: await createPayer({ chain: 'base', evmKey: env.PAYER_KEY, maxUsd, ...(channel ? { channel } : {}) }) }
      : {}),
    ...(families.has('svm') ? { svm: await createPayer({ chain: 'solana', svmKey: env.SVM_PAYER_KEY, svmRpcUrl: env.SVM_RPC_URL, maxUsd }) } : {}),
  };
  const upstream = new Client({ name: 'paydoc-mcp', version: VERSION });
  try {
    await upstream.connect(new StreamableHTTPClientTransport(new URL(`${settings.url}/mcp`)));
  } catch (err) {
    throw new Error(`cannot reach the service at ${settings.url}/mcp: ${err instanceof Error ? err.message : String(err)}`);
  }
  const { tools } = await upstream.listTools();
  const offered = tools.map(bridgedTool);
  bridge = new Bridge(settings, root, upstream, payers, await evmChainFor(settings.networks, env));
  const networks = settings.networks.map((n) => n.network).join(', ');

  const server = new Server(
    { name: 'paydoc-mcp', version: VERSION, title: 'paydoc through a paying bridge' },
    {
      capabilities: { tools: {} },
      instructions: [
        upstream.getInstructions() ?? '',
        `This bridge pays for you from its own wallet, in USDC on ${networks}: call a tool once, with local files as { "path": "…" } inside ${root.name}. It quotes first and refuses, without signing anything, a price above ${toUsd(settings.perCall)} USD per call or beyond ${toUsd(settings.total)} USD in all. File results are written to a local folder and returned as paths.`,
        ...(settings.channelDeposit !== undefined
          ? [`On Base it pays through a payment channel: a deposit of ${toUsd(settings.channelDeposit)} USD when the channel runs short `
            + '(counted in the total), then a signed voucher per call, with no transaction.']
          : []),
      ].filter(Boolean).join('\n\n'),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: offered }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = offered.find((t) => t.name === req.params.name);
    if (!tool) return toolError(`no tool named "${req.params.name.slice(0, 40)}"`);
    const token = req.params._meta?.progressToken;
    const forward = token === undefined ? undefined : (p: { progress: number; total?: number; message?: string }) => {
      void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...p } }).catch(() => undefined);
    };
    const started = Date.now();
    try {
      const result = await bridge.call(req.params.name, tool.outputSchema === undefined, req.params.arguments, forward);
      process.stderr.write(`paydoc-mcp: ${shown(req.params.name)} ${result.isError ? 'refused or failed' : 'ok'} in ${Date.now() - started} ms\n`);
      return result;
    } catch (err) {
      return toolError(`the call failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  await server.connect(new StdioServerTransport());
  const through = channel ? ` (on Base through a channel, deposits of ${toUsd(channel.deposit)} USD, state in ${channel.directory})` : '';
  process.stderr.write(`paydoc-mcp: ${tools.length} tools from ${settings.url}, paying in USDC on ${networks}${through} `
    + `up to ${toUsd(settings.perCall)} USD per call and ${toUsd(settings.total)} USD in all; files read from ${root.name}\n`);
}

startBridge().catch((err) => {
  process.stderr.write(`paydoc-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

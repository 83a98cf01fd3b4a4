#!/usr/bin/env node
// A paying MCP bridge over stdio, for MCP hosts (desktop chat apps, IDE agents) that cannot pay
// and should not move megabytes of base64 through a conversation. It serves the service's tools
// with the official SDK; a file argument may be a local { path }; every call is quoted first and
// paid from the configured wallet only within two caps; results that are files are written into
// OUTPUT_DIR and returned as their paths.
//
//   PAYDOC_URL=https://… PAYER_KEY=0x… node dist/bin/mcp-bridge.js
//   PAYDOC_URL=https://… SVM_PAYER_KEY=… SVM_RPC_URL=https://… node dist/bin/mcp-bridge.js
import { mkdir, mkdtemp, open, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { createPayer, type PayChain } from '../server/payment/client.js';
import { fromUsd, toUsd } from '../server/payment/pricing.js';
import { MCP_MAX_DECODED_BYTES } from '../server/derive/mcp-schemas.js';
import { PAYMENT_META_KEY } from '../server/derive/catalog.js';
import { VERSION } from '../server/version.js';

const RECEIPT_META_KEY = 'x402/payment-response';
// A result the service holds after an unconfirmed settlement is fetched again with the same payment.
const HELD_CODES = new Set(['SETTLEMENT_UNCONFIRMED', 'PAYMENT_IN_PROGRESS']);
const HELD_RETRIES = 6;
const HELD_RETRY_DELAY_MS = 2_000;
// Model jobs may run four minutes; the service's progress notifications keep the call alive.
const CALL_TIMEOUT_MS = 15 * 60_000;

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'image/avif': 'avif', 'image/gif': 'gif', 'image/tiff': 'tiff',
  'application/pdf': 'pdf', 'application/zip': 'zip', 'text/markdown': 'md', 'text/plain': 'txt',
};

interface BridgeSettings {
  url: string;
  chain: PayChain;
  perCall: bigint;
  total: bigint;
  outputDir?: string;
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
  return {
    url: (env.PAYDOC_URL ?? 'http://localhost:8080').replace(/\/+$/, ''),
    // One wallet pays; with both keys set, Base is used.
    chain: env.PAYER_KEY ? 'base' : 'solana',
    perCall: usd('MAX_USD_PER_CALL', '0.10'),
    total: usd('MAX_USD_TOTAL', '1.00'),
    ...(env.OUTPUT_DIR ? { outputDir: path.resolve(env.OUTPUT_DIR) } : {}),
  };
}

const PATH_ARGUMENT = {
  type: 'object',
  required: ['path'],
  additionalProperties: false,
  properties: { path: { type: 'string', description: 'A local file path, read by the bridge (relative paths from its working directory).' } },
};

/** The service's tool as this bridge offers it: files may be local paths, and the bridge pays. */
function bridgedTool(tool: Tool): Tool {
  const schema = structuredClone(tool.inputSchema) as { properties?: Record<string, Record<string, unknown>> };
  const props = schema.properties ?? {};
  const either = (original: Record<string, unknown>) => {
    const { description, ...rest } = original;
    return { ...(description ? { description } : {}), anyOf: [PATH_ARGUMENT, rest] };
  };
  if (props.file) props.file = either(props.file);
  if (props.files?.items) props.files = { ...props.files, items: either(props.files.items as Record<string, unknown>) };
  const description = tool.description?.replace(/ Paid with x402 \(([^)]*)\):.*$/s, ' Price: $1.') ?? '';
  return {
    ...tool,
    inputSchema: schema as Tool['inputSchema'],
    description: `${description} Through this bridge: pass files as { "path": "…" }; the bridge quotes, pays from its wallet within its caps, and writes file results to its output folder, returning their paths.`,
  };
}

class Refusal extends Error {}

function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

async function readLocalFile(value: unknown, where: string): Promise<unknown> {
  if (typeof value !== 'object' || value === null || !('path' in value)) return value;
  const given = (value as { path: unknown }).path;
  if (typeof given !== 'string' || given === '') throw new Refusal(`${where}.path must be a file path`);
  const file = path.resolve(given.startsWith('~/') ? path.join(os.homedir(), given.slice(2)) : given);
  let info;
  try {
    info = await stat(file);
  } catch {
    throw new Refusal(`${where}.path: no file at ${file}`);
  }
  if (!info.isFile()) throw new Refusal(`${where}.path: ${file} is not a regular file`);
  if (info.size > MCP_MAX_DECODED_BYTES) throw new Refusal(`${where}.path: the file is ${info.size} bytes; a call takes at most ${MCP_MAX_DECODED_BYTES} bytes`);
  return { data: (await readFile(file)).toString('base64') };
}

async function withLocalFiles(args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const out = { ...args };
  if (out.file !== undefined) out.file = await readLocalFile(out.file, 'file');
  if (Array.isArray(out.files)) out.files = await Promise.all(out.files.map((f, i) => readLocalFile(f, `files[${i}]`)));
  return out;
}

function isPaymentRequired(value: unknown): value is PaymentRequired {
  return typeof value === 'object' && value !== null && Array.isArray((value as PaymentRequired).accepts) && typeof (value as PaymentRequired).x402Version === 'number';
}

function errorCodeOf(result: CallToolResult): string | undefined {
  return (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Bridge {
  private spent = 0n;
  /** Prices of calls signed but not yet answered: counted against the total so that parallel calls cannot pass it together. */
  private reserved = 0n;
  private outputDir: Promise<string> | undefined;
  private written = 0;

  constructor(private readonly settings: BridgeSettings, private readonly upstream: Client, private readonly payer: x402Client) {}

  private spending(): string {
    return `Spent so far: ${toUsd(this.spent)} of ${toUsd(this.settings.total)} USD (MAX_USD_TOTAL).`;
  }

  private folder(): Promise<string> {
    const { outputDir } = this.settings;
    this.outputDir ??= outputDir
      ? mkdir(outputDir, { recursive: true }).then(() => outputDir)
      : mkdtemp(path.join(process.cwd(), 'paydoc-results-'));
    // A folder that cannot be made is reported on every call, not remembered as a failure.
    this.outputDir.catch(() => { this.outputDir = undefined; });
    return this.outputDir;
  }

  /** Writes one result file under a name that does not overwrite anything already there. */
  private async write(tool: string, mediaType: string, bytes: Buffer): Promise<string> {
    const dir = await this.folder();
    const base = tool.replace(/^svc_/, '');
    for (;;) {
      const file = path.join(dir, `${base}-${++this.written}.${EXTENSIONS[mediaType] ?? 'bin'}`);
      try {
        const handle = await open(file, 'wx');
        await handle.writeFile(bytes);
        await handle.close();
        return file;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
  }

  /** The offers this bridge can pay, and their price, refused before anything is signed when above a cap. */
  private affordable(pr: PaymentRequired): { offers: PaymentRequirements[]; price: bigint } {
    const prefix = this.settings.chain === 'base' ? 'eip155:' : 'solana:';
    const offers = pr.accepts.filter((a) => a.network.startsWith(prefix));
    if (offers.length === 0) throw new Refusal(`the service offers no payment on ${this.settings.chain} (it offers ${pr.accepts.map((a) => a.network).join(', ')}); nothing was signed or paid`);
    const price = offers.reduce((max, a) => (BigInt(a.amount) > max ? BigInt(a.amount) : max), 0n);
    if (price > this.settings.perCall) {
      throw new Refusal(`the price is ${toUsd(price)} USD, above MAX_USD_PER_CALL (${toUsd(this.settings.perCall)} USD); nothing was signed or paid. ${this.spending()}`);
    }
    const left = this.settings.total - this.spent - this.reserved;
    if (price > left) {
      throw new Refusal(`the price is ${toUsd(price)} USD, and only ${toUsd(left < 0n ? 0n : left)} USD of MAX_USD_TOTAL (${toUsd(this.settings.total)} USD) is left; nothing was signed or paid. ${this.spending()}`);
    }
    return { offers, price };
  }

  private async paidCall(name: string, args: Record<string, unknown>, payment: PaymentPayload, onprogress?: (p: { progress: number; total?: number; message?: string }) => void): Promise<CallToolResult> {
    for (let attempt = 0; ; attempt++) {
      const result = await this.upstream.callTool({ name, arguments: args, _meta: { [PAYMENT_META_KEY]: payment } }, undefined, {
        timeout: CALL_TIMEOUT_MS, maxTotalTimeout: CALL_TIMEOUT_MS, resetTimeoutOnProgress: true, ...(onprogress ? { onprogress } : {}),
      }) as CallToolResult;
      const code = errorCodeOf(result);
      if (!result.isError || !code || !HELD_CODES.has(code) || attempt >= HELD_RETRIES) return result;
      await sleep(HELD_RETRY_DELAY_MS);
    }
  }

  /** Files in the result written to the output folder; everything else passed on as it came. */
  private async deliver(name: string, result: CallToolResult, price: bigint): Promise<CallToolResult> {
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
        content.push({ type: 'text', text: `Could not write the ${mediaType} result to the output folder (${(err as Error).message}); it follows inline.` }, item);
        continue;
      }
      files.push({ path: file, mediaType, bytes: bytes.length });
      content.push({ type: 'resource_link', uri: pathToFileURL(file).href, name: path.basename(file), mimeType: mediaType, size: bytes.length });
    }
    const paid = `Paid ${toUsd(price)} USD on ${receipt?.network ?? 'the quoted network'}${receipt?.transaction ? `, transaction ${receipt.transaction}` : ''}.`;
    const wrote = files.map((f) => `Wrote ${f.path} (${f.mediaType}, ${f.bytes} bytes).`);
    content.unshift({ type: 'text', text: [...wrote, paid, this.spending()].join(' ') });
    const structured = result.structuredContent ?? (files.length > 0 ? { files, receipt, spentUsd: toUsd(this.spent) } : undefined);
    return { content, ...(structured ? { structuredContent: structured } : {}), _meta: { [RECEIPT_META_KEY]: receipt } };
  }

  async call(name: string, returnsFiles: boolean, given: Record<string, unknown> | undefined, onprogress?: (p: { progress: number; total?: number; message?: string }) => void): Promise<CallToolResult> {
    let args: Record<string, unknown>;
    try {
      args = await withLocalFiles(given);
    } catch (err) {
      if (err instanceof Refusal) return toolError(err.message);
      throw err;
    }
    const quote = await this.upstream.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS }) as CallToolResult;
    if (!quote.isError) return quote;
    if (!isPaymentRequired(quote.structuredContent)) return quote;
    let offers: PaymentRequirements[];
    let price: bigint;
    try {
      ({ offers, price } = this.affordable(quote.structuredContent));
    } catch (err) {
      if (err instanceof Refusal) return toolError(err.message);
      throw err;
    }
    if (returnsFiles) {
      try {
        await this.folder();
      } catch (err) {
        return toolError(`the output folder cannot be made (${(err as Error).message}); set OUTPUT_DIR to a writable folder. Nothing was signed or paid.`);
      }
    }
    this.reserved += price;
    let settled = false;
    try {
      const payment = await this.payer.createPaymentPayload({ ...quote.structuredContent, accepts: offers });
      const result = await this.paidCall(name, args, payment, onprogress);
      const receipt = result._meta?.[RECEIPT_META_KEY] as SettleResponse | undefined;
      if (result.isError || !receipt?.success) {
        const code = errorCodeOf(result);
        // Held after an unconfirmed settlement: the money may have moved, so it stays counted.
        if (code && HELD_CODES.has(code)) { this.spent += BigInt(payment.accepted.amount); settled = true; }
        return result;
      }
      this.spent += BigInt(payment.accepted.amount);
      settled = true;
      return await this.deliver(name, result, BigInt(payment.accepted.amount));
    } finally {
      this.reserved -= price;
      if (!settled) process.stderr.write(`paydoc-mcp: ${name} not paid\n`);
    }
  }
}

async function startBridge(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const settings = readSettings(env);
  const payer = await createPayer(settings.chain === 'base'
    ? { chain: 'base', evmKey: env.PAYER_KEY }
    : { chain: 'solana', svmKey: env.SVM_PAYER_KEY, svmRpcUrl: env.SVM_RPC_URL });
  const upstream = new Client({ name: 'paydoc-mcp', version: VERSION });
  try {
    await upstream.connect(new StreamableHTTPClientTransport(new URL(`${settings.url}/mcp`)));
  } catch (err) {
    throw new Error(`cannot reach the service at ${settings.url}/mcp: ${err instanceof Error ? err.message : String(err)}`);
  }
  const { tools } = await upstream.listTools();
  const offered = tools.map(bridgedTool);
  const bridge = new Bridge(settings, upstream, payer);

  const server = new Server(
    { name: 'paydoc-mcp', version: VERSION, title: 'paydoc through a paying bridge' },
    {
      capabilities: { tools: {} },
      instructions: [
        upstream.getInstructions() ?? '',
        `This bridge pays for you from its own wallet on ${settings.chain}: call a tool once, with files as { "path": "…" }. It quotes first and refuses, without signing anything, a price above ${toUsd(settings.perCall)} USD per call or beyond ${toUsd(settings.total)} USD in all. File results are written to a local folder and returned as paths.`,
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
      process.stderr.write(`paydoc-mcp: ${req.params.name} ${result.isError ? 'refused or failed' : 'ok'} in ${Date.now() - started} ms\n`);
      return result;
    } catch (err) {
      return toolError(`the call failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  await server.connect(new StdioServerTransport());
  process.stderr.write(`paydoc-mcp: ${tools.length} tools from ${settings.url}, paying on ${settings.chain} up to ${toUsd(settings.perCall)} USD per call and ${toUsd(settings.total)} USD in all\n`);
}

startBridge().catch((err) => {
  process.stderr.write(`paydoc-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

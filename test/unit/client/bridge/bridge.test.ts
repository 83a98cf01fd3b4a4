// client/bridge/bridge.ts: one call through the bridge, in process, against a loopback MCP server
// from the official SDK: what is signed when calls race for the last of the total, when the output
// folder is missing before or after payment, and what passes through unpaid.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequirements } from '@x402/core/types';
import { Bridge } from '../../../../client/bridge/bridge.js';
import { FilesRoot } from '../../../../client/bridge/local-files.js';
import { BASE_MAINNET, type BridgeSettings } from '../../../../client/bridge/settings.js';
import { createPayer } from '../../../../client/payer.js';
import { RECEIPT_META_KEY } from '../../../../core/protocol.js';
import { LoopbackUpstream, type UpstreamCall } from '../../../support/mcp-upstream.js';

export const lab = Lab.script();
const { describe, it, before, after, beforeEach } = lab;
const { expect } = Code;

const PAYER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PNG = Buffer.from('89504e470d0a1a0a', 'hex');
const TOOLS: Tool[] = [
  { name: 'svc_image_resize', inputSchema: { type: 'object', properties: { file: { type: 'object' } } } },
  { name: 'svc_pdf_info', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } },
  { name: 'svc_free', inputSchema: { type: 'object' } },
];

type Text = { type: 'text'; text: string };
const textOf = (result: CallToolResult) => result.content.filter((c): c is Text => c.type === 'text').map((c) => c.text).join('\n');

describe('a call through the bridge', () => {
  let dir: string;
  let upstream: LoopbackUpstream;
  let client: Client;
  let root: FilesRoot;
  /** What the upstream does with a paid call (the test may change it). */
  let onPaid: (call: UpstreamCall) => Promise<CallToolResult> | CallToolResult;

  const quote = (name: string, amount: string): CallToolResult => {
    const offer = {
      scheme: 'exact', network: BASE_MAINNET, asset: BASE_USDC, amount, payTo: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' },
    } as PaymentRequirements;
    const required = { x402Version: 2, error: 'Payment required', resource: { url: `mcp://${name}` }, accepts: [offer] };
    return { isError: true, structuredContent: required, content: [{ type: 'text', text: 'payment required' }] };
  };
  const receipt = { success: true, network: BASE_MAINNET, transaction: '0xabc', payer: '0x1' };
  const image = (): CallToolResult => ({
    content: [{ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' }], _meta: { [RECEIPT_META_KEY]: receipt },
  });

  async function bridge(settings: Partial<BridgeSettings> = {}): Promise<Bridge> {
    const full: BridgeSettings = {
      url: upstream.url, networks: [{ network: BASE_MAINNET, family: 'evm', usdc: BASE_USDC }], perCall: 100_000n, total: 1_000_000n,
      filesRoot: dir, outputDir: path.join(dir, 'out'), ...settings,
    };
    return new Bridge(full, root, client, { evm: await createPayer({ chain: 'base', evmKey: PAYER_KEY, maxUsd: '0.1' }) }, undefined);
  }

  before(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'paydoc-bridge-unit-')));
    root = await FilesRoot.open(dir);
    upstream = new LoopbackUpstream(TOOLS, (call) => {
      if (call.name === 'svc_free') return { content: [{ type: 'text', text: 'free' }], structuredContent: { free: true } };
      if (call.name === 'svc_broken') return { isError: true, content: [{ type: 'text', text: 'BAD_INPUT' }] };
      if (!call.payment) return quote(call.name, call.name === 'svc_pdf_info' ? '20000' : '10000');
      return onPaid(call);
    });
    await upstream.start();
    client = new Client({ name: 'bridge-unit', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${upstream.url}/mcp`)));
  });

  after(async () => {
    await client?.close();
    await upstream?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    upstream.calls.length = 0;
    onPaid = image;
  });

  it('passes a free answer and a refusal that is not a quote on as they came, paying nothing', async () => {
    const b = await bridge();
    expect(await b.call('svc_free', true, {})).to.equal({ content: [{ type: 'text', text: 'free' }], structuredContent: { free: true } });
    expect(await b.call('svc_broken', true, {})).to.equal({ isError: true, content: [{ type: 'text', text: 'BAD_INPUT' }] });
    expect(upstream.paid()).to.equal([]);
  });

  it('pays the quote, writes the image, and says what it paid and wrote', async () => {
    const result = await (await bridge()).call('svc_image_resize', true, { width: 4 });
    const written = path.join(dir, 'out', 'image_resize-1.png');
    expect(textOf(result)).to.equal(`Wrote ${written} (image/png, 8 bytes). Paid 0.01 USD on ${BASE_MAINNET}, transaction 0xabc. `
      + 'Spent so far: 0.01 of 1 USD (MAX_USD_TOTAL).');
    expect(await readFile(written)).to.equal(PNG);
    const link = { type: 'resource_link' as const, uri: `file://${written}`, name: 'image_resize-1.png', mimeType: 'image/png', size: 8 };
    expect(result.content[1]).to.equal(link);
    expect(result.structuredContent).to.equal({ files: [{ path: written, mediaType: 'image/png', bytes: 8 }], receipt, spentUsd: '0.01' });
    const paid = upstream.paid().map((c) => [c.name, c.args, c.payment!.accepted.amount]);
    expect(paid).to.equal([['svc_image_resize', { width: 4 }, '10000']]);
  });

  it('gives the last of the total to one of two calls made at once: only one is signed', async () => {
    const b = await bridge({ total: 15_000n });
    const results = await Promise.all([b.call('svc_image_resize', true, {}), b.call('svc_image_resize', true, {})]);
    const texts = results.map(textOf).sort();
    expect(texts[0]).to.startWith('Wrote ');
    expect(texts[1]).to.startWith('the price is 0.01 USD, and only 0.005 USD of MAX_USD_TOTAL (0.015 USD) is left; '
      + 'nothing was signed or paid.');
    expect(upstream.paid()).to.have.length(1);
  });

  it('counts a paid call that came back without a receipt, and says so when refusing the next', async () => {
    const b = await bridge({ total: 15_000n });
    onPaid = () => ({ isError: true, content: [{ type: 'text', text: 'failed, nothing was charged' }] });
    expect(textOf(await b.call('svc_image_resize', true, {}))).to.equal('failed, nothing was charged');
    onPaid = image;
    expect(textOf(await b.call('svc_image_resize', true, {}))).to.equal('the price is 0.01 USD, and only 0.005 USD of MAX_USD_TOTAL '
      + '(0.015 USD) is left; nothing was signed or paid. Spent so far: 0 of 0.015 USD (MAX_USD_TOTAL). A further 0.01 USD is signed '
      + 'for calls not paid for; it counts until the chain shows its authorization expired unspent.');
    expect(upstream.paid()).to.have.length(1);
  });

  it('refuses a price above MAX_USD_PER_CALL before signing', async () => {
    const result = await (await bridge({ perCall: 9_999n })).call('svc_image_resize', true, {});
    expect(textOf(result)).to.equal('the price is 0.01 USD, above MAX_USD_PER_CALL (0.009999 USD); nothing was signed or paid. '
      + 'Spent so far: 0 of 1 USD (MAX_USD_TOTAL).');
    expect(upstream.paid()).to.equal([]);
  });

  it('refuses unsigned when a file result has no folder to go to; a tool with structured results, or a link, needs none', async () => {
    const blocker = path.join(dir, 'blocker');
    await writeFile(blocker, '');
    const b = await bridge({ outputDir: path.join(blocker, 'out') });
    const refused = await b.call('svc_image_resize', true, {});
    expect(textOf(refused)).to.startWith('the output folder cannot be made (ENOTDIR');
    expect(textOf(refused)).to.endWith('set OUTPUT_DIR to a writable folder. Nothing was signed or paid.');
    expect(upstream.paid()).to.equal([]);
    onPaid = () => ({ content: [{ type: 'text', text: '{}' }], structuredContent: { pages: 1 }, _meta: { [RECEIPT_META_KEY]: receipt } });
    const info = await b.call('svc_pdf_info', false, {});
    expect(info.structuredContent).to.equal({ pages: 1 });
    expect(textOf(info)).to.startWith(`Paid 0.02 USD on ${BASE_MAINNET}, transaction 0xabc.`);
    onPaid = () => ({
      content: [{ type: 'resource_link', uri: 'https://results.example/r/1', name: 'r.png' }], _meta: { [RECEIPT_META_KEY]: receipt },
    });
    const link = await b.call('svc_image_resize', true, { delivery: 'link' });
    expect(link.content[1]).to.equal({ type: 'resource_link', uri: 'https://results.example/r/1', name: 'r.png' });
    expect(upstream.paid()).to.have.length(2);
  });

  it('returns a paid file inline when it cannot be written after all', async () => {
    const out = path.join(dir, 'vanishing');
    await mkdir(out);
    const b = await bridge({ outputDir: out });
    onPaid = async () => {
      // The folder existed when the call was quoted; it is gone when the paid result arrives.
      await rm(out, { recursive: true });
      return image();
    };
    const result = await b.call('svc_image_resize', true, {});
    expect(result.content.map((c) => c.type)).to.equal(['text', 'text', 'image']);
    expect(textOf(result)).to.startWith(`Paid 0.01 USD on ${BASE_MAINNET}, transaction 0xabc.`);
    expect(textOf(result)).to.contain('Could not write the image/png result to the output folder (ENOENT');
    expect(textOf(result)).to.contain('; it follows inline.');
    expect(result.content[2]).to.equal({ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' });
  });

  it('refuses a { path } outside its folder before asking the upstream anything', async () => {
    const result = await (await bridge()).call('svc_image_resize', true, { file: { path: '/etc/hostname' } });
    expect(textOf(result)).to.startWith('file.path: /etc/hostname is outside');
    expect(upstream.calls).to.equal([]);
  });
});

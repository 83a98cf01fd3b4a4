// client/bridge/server.ts: the bridge made from an environment and connected to a loopback MCP
// server from the official SDK, driven by an SDK client in process (the system tests drive it over
// stdio): what it offers and says, and how it fails to start.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createBridgeServer, type BridgeServer } from '../../../../client/bridge/server.js';
import { VERSION } from '../../../../core/version.js';
import { freePort } from '../../../support/paying.js';
import { LoopbackUpstream } from '../../../support/mcp-upstream.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PAYER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

describe('the bridge as an MCP server', () => {
  let dir: string;
  let upstream: LoopbackUpstream;
  let rpcUrl: string;
  const opened: Array<{ bridge: BridgeServer; host: Client }> = [];

  const env = (more: Record<string, string> = {}) => ({
    PAYDOC_URL: `${upstream.url}/`, PAYER_KEY, EVM_RPC_URL: rpcUrl, PAYDOC_FILES_ROOT: dir, OUTPUT_DIR: path.join(dir, 'out'), ...more,
  });

  async function connect(more: Record<string, string> = {}): Promise<{ bridge: BridgeServer; host: Client }> {
    const bridge = await createBridgeServer(env(more));
    const [hostSide, bridgeSide] = InMemoryTransport.createLinkedPair();
    await bridge.server.connect(bridgeSide);
    const host = new Client({ name: 'test-host', version: '1.0.0' });
    await host.connect(hostSide);
    opened.push({ bridge, host });
    return { bridge, host };
  }

  before(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'paydoc-bridge-server-')));
    // Read only when an authorization lapses, which no test here lets happen.
    rpcUrl = `http://127.0.0.1:${await freePort()}`;
    upstream = new LoopbackUpstream(
      [{ name: 'svc_image_resize', description: 'Resizes. Paid with x402 (0.005 USD per call): pay.', inputSchema: { type: 'object' } }],
      () => ({ content: [{ type: 'text', text: 'free today' }] }),
      'The service\'s own instructions.',
    );
    await upstream.start();
  });

  after(async () => {
    for (const { bridge, host } of opened) {
      await host.close();
      await bridge.close();
    }
    await upstream?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('introduces itself with the service\'s instructions, then its own wallet, networks and caps', async () => {
    const { bridge, host } = await connect({ MAX_USD_PER_CALL: '0.25', MAX_USD_TOTAL: '3' });
    expect(host.getServerVersion()).to.include({ name: 'paydoc-mcp', version: VERSION });
    const [service, own, ...rest] = host.getInstructions()!.split('\n\n');
    expect(service).to.equal('The service\'s own instructions.');
    expect(own).to.equal('This bridge pays for you from its own wallet, in USDC on eip155:8453: call a tool once, with local files as '
      + `{ "path": "…" } inside ${dir}. It quotes first and refuses, without signing anything, a price above 0.25 USD per call or `
      + 'beyond 3 USD in all. File results are written to a local folder and returned as paths.');
    expect(rest).to.equal([]);
    expect(bridge.started).to.equal(`1 tools from ${upstream.url}, paying in USDC on eip155:8453 up to 0.25 USD per call `
      + `and 3 USD in all; files read from ${dir}`);
  });

  it('says how it pays through a channel, where the channel\'s state is kept', async () => {
    const channels = path.join(dir, 'channels');
    const { bridge, host } = await connect({ CHANNEL_DEPOSIT_USD: '0.5', PAYDOC_CHANNELS_DIR: channels });
    expect(host.getInstructions()!.split('\n\n')[2]).to.equal('On Base it pays through a payment channel: a deposit of 0.5 USD when the '
      + 'channel runs short (counted in the total), then a signed voucher per call, with no transaction.');
    expect(bridge.started).to.contain(`(on Base through a channel, deposits of 0.5 USD, state in ${channels})`);
  });

  it('offers the upstream\'s tools bridged, answers through them, and refuses a tool it does not offer', async () => {
    const { host } = await connect();
    const { tools } = await host.listTools();
    expect(tools.map((t) => t.name)).to.equal(['svc_image_resize']);
    expect(tools[0].description!).to.startWith('Resizes. Price: 0.005 USD per call. Through this bridge:');
    expect(await host.callTool({ name: 'svc_image_resize', arguments: {} })).to.equal({ content: [{ type: 'text', text: 'free today' }] });
    const unknown = await host.callTool({ name: `svc_${'x'.repeat(100)}`, arguments: {} }) as CallToolResult;
    expect(unknown).to.equal({ isError: true, content: [{ type: 'text', text: `no tool named "svc_${'x'.repeat(36)}"` }] });
  });

  it('does not start without its files folder, or when the service does not answer, naming which', async () => {
    await expect(createBridgeServer(env({ PAYDOC_FILES_ROOT: path.join(dir, 'none') }))).to.reject(
      `PAYDOC_FILES_ROOT: no folder at ${path.join(dir, 'none')}`);
    const closed = `http://127.0.0.1:${await freePort()}`;
    await expect(createBridgeServer(env({ PAYDOC_URL: closed }))).to.reject(new RegExp(`^cannot reach the service at ${closed}/mcp: `));
    await expect(createBridgeServer(env({ MAX_USD_TOTAL: 'all' }))).to.reject(/^MAX_USD_TOTAL must be an amount of US dollars/);
  });
});

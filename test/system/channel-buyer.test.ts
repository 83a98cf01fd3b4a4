// Buyers paying through a payment channel on the local Base chain, as processes: pay.js --deposit
// opens a channel and later runs reuse it from the local channel file (a voucher, no transaction),
// --refund returns the rest; the paying MCP bridge with CHANNEL_DEPOSIT_USD counts its deposit
// against MAX_USD_TOTAL and refuses, before signing, a deposit that would pass it.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { createPublicClient, http as viemHttp, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from '../support/service.js';
import { BATCH_SETTLEMENT_ADDRESS } from '../../devchains/index.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PAY = path.join(root, 'dist/bin/pay.js');
const BRIDGE = path.join(root, 'dist/bin/mcp-bridge.js');
const run = promisify(execFile);
const PRICE = 5000n;
const channelAbi = parseAbi(['function channels(bytes32) view returns (uint128 balance, uint128 totalClaimed)']);

type Text = { type: 'text'; text: string };
const textOf = (result: CallToolResult) => result.content.filter((c): c is Text => c.type === 'text').map((c) => c.text).join('\n');

describe('buying through a payment channel (pay.js --deposit, the bridge\'s CHANNEL_DEPOSIT_USD)', () => {
  let t: TestService;
  let dir: string;
  let photo: string;
  const clients: Client[] = [];

  before(async () => {
    t = await startTestService({ config: { batchClaimIntervalS: 1, batchSettleIntervalS: 1 } });
    dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-channel-buyer-'));
    photo = path.join(dir, 'photo.jpg');
    await writeFile(photo, await sharp({ create: { width: 120, height: 90, channels: 3, background: '#2a6f97' } }).jpeg().toBuffer());
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await t?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A new wallet holding `usdc` (atomic): each test its own channel. */
  async function wallet(usdc: bigint): Promise<{ key: `0x${string}`; address: `0x${string}` }> {
    const key = generatePrivateKey();
    const { address } = privateKeyToAccount(key);
    await t.evm.mint(address, usdc);
    return { key, address };
  }

  /** pay.js's environment: the wallet, the local chain, the channel folder. */
  const payerEnv = (key: string, channels: string) => ({
    PATH: process.env.PATH, HOME: dir, PAYER_KEY: key, EVM_RPC_URL: t.evm.rpcUrl, PAYDOC_CHANNELS_DIR: channels,
  });

  const readChannel = (channelId: `0x${string}`) => createPublicClient({ transport: viemHttp(t.evm.rpcUrl) })
    .readContract({ address: BATCH_SETTLEMENT_ADDRESS, abi: channelAbi, functionName: 'channels', args: [channelId] });

  describe('pay.js', () => {
    let payer: { key: `0x${string}`; address: `0x${string}` };
    let channels: string;
    let channelId: `0x${string}`;
    const payJs = (...args: string[]) => run(process.execPath, [PAY, ...args], { env: payerEnv(payer.key, channels) });
    const resize = (width: number, out: string) => [`${t.url}/v1/image/resize`, `file=@${photo}`, `width=${width}`, '--out', out];

    before(async () => {
      payer = await wallet(1_000_000n);
      channels = path.join(dir, 'channels');
    });

    it('--deposit 0.05: the first call deposits 0.05 USD on the chain and pays its price from the channel', async () => {
      const out = path.join(dir, 'first.jpg');
      const { stderr } = await payJs('--deposit', '0.05', ...resize(60, out));
      const m = new RegExp('^paid 5000 atomic USDC \\(0\\.005 USD\\) through channel (0x[0-9a-f]{64}) on eip155:8453; '
        + 'deposited 0\\.05 USD in transaction 0x[0-9a-f]{64}; 0\\.045 USD left in the channel; wrote \\d+ bytes to ', 'm').exec(stderr);
      expect(m, stderr).to.exist();
      channelId = m![1] as `0x${string}`;
      expect(await sharp(await readFile(out)).metadata()).to.include({ format: 'jpeg', width: 60 });
      expect(await t.evm.balanceOf(payer.address)).to.equal(1_000_000n - 50_000n);
      // The channel's state, kept for the next run, in x402's file storage.
      expect(await readdir(path.join(channels, 'client'))).to.equal([`${channelId}.json`]);
      expect((await readChannel(channelId))[0]).to.equal(50_000n);
    });

    it('a second run reuses the channel from the file: a voucher, no transaction; the chain shows both charges claimed', async () => {
      const blockBefore = await createPublicClient({ transport: viemHttp(t.evm.rpcUrl) }).getBlockNumber();
      const { stderr } = await payJs('--deposit', '0.05', ...resize(50, path.join(dir, 'second.jpg')));
      expect(stderr).to.contain(`paid 5000 atomic USDC (0.005 USD) through channel ${channelId} on eip155:8453; `
        + 'a voucher, no transaction; 0.04 USD left in the channel');
      expect(await t.evm.balanceOf(payer.address)).to.equal(1_000_000n - 50_000n);
      // The service claims the vouchers on its schedule: both calls, from the one deposit.
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && (await readChannel(channelId))[1] < PRICE * 2n) await new Promise((r) => setTimeout(r, 250));
      expect(await readChannel(channelId)).to.equal([50_000n, PRICE * 2n]);
      expect(await createPublicClient({ transport: viemHttp(t.evm.rpcUrl) }).getBlockNumber()).to.be.above(blockBefore);
    });

    it('a run without the channel file rebuilds the channel from the chain and the service: a voucher, no second deposit', async () => {
      const env = payerEnv(payer.key, path.join(dir, 'elsewhere'));
      const { stderr } = await run(process.execPath, [PAY, '--deposit', '0.05', ...resize(45, path.join(dir, 'third.jpg'))], { env });
      expect(stderr).to.contain(`paid 5000 atomic USDC (0.005 USD) through channel ${channelId} on eip155:8453; a voucher, no transaction`);
      expect(await t.evm.balanceOf(payer.address)).to.equal(1_000_000n - 50_000n);
    });

    it('--refund returns the rest: the payer gets the deposit less the charges back', async () => {
      const { stderr } = await payJs('--refund', t.url);
      const refunded = new RegExp(`^refunded 35000 atomic USDC \\(0\\.035 USD\\) from channel ${channelId} on eip155:8453; `
        + 'transaction 0x[0-9a-f]{64}', 'm');
      expect(stderr).to.match(refunded);
      expect(await t.evm.balanceOf(payer.address)).to.equal(1_000_000n - PRICE * 3n);
    });

    it('tops up by the same deposit when the channel runs short', async () => {
      const small = await wallet(100_000n);
      const env = payerEnv(small.key, path.join(dir, 'channels-small'));
      const outs: string[] = [];
      for (let i = 0; i < 3; i++) {
        const args = ['--deposit', '0.01', ...resize(40 + i, path.join(dir, `small-${i}.jpg`))];
        outs.push((await run(process.execPath, [PAY, ...args], { env })).stderr);
      }
      expect(outs[0]).to.contain('deposited 0.01 USD in transaction');
      expect(outs[1]).to.contain('a voucher, no transaction; 0 USD left in the channel');
      expect(outs[2]).to.contain('deposited 0.01 USD in transaction');
      expect(outs[2]).to.contain('0.005 USD left in the channel');
      expect(await t.evm.balanceOf(small.address)).to.equal(100_000n - 20_000n);
    });

    it('--deposit with --chain solana is a usage error: channels are offered on Base only', async () => {
      const err = await payJs('--chain', 'solana', '--deposit', '0.05', ...resize(40, path.join(dir, 'sol.jpg')))
        .catch((e: { code: number; stderr: string }) => e);
      expect((err as { code: number }).code).to.equal(2);
      expect((err as { stderr: string }).stderr)
        .to.contain('pay: --deposit: payment channels (x402 batch-settlement) are offered on Base only; @x402/svm has no batch-settlement');
    });
  });

  describe('the paying MCP bridge', () => {
    async function bridge(env: Record<string, string>): Promise<Client> {
      const client = new Client({ name: 'test-host', version: '1.0.0' });
      const base = { PATH: process.env.PATH!, HOME: dir, PAYDOC_URL: t.url };
      const transport = new StdioClientTransport({
        command: process.execPath, args: [BRIDGE], cwd: dir, env: { ...base, ...env }, stderr: 'ignore',
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    }

    it('CHANNEL_DEPOSIT_USD: a deposit counted against MAX_USD_TOTAL, then a voucher; a deposit past it is refused unsigned', async () => {
      const payer = await wallet(1_000_000n);
      const channels = path.join(dir, 'bridge-channels');
      const client = await bridge({
        PAYER_KEY: payer.key, EVM_RPC_URL: t.evm.rpcUrl, PAYDOC_CHANNELS_DIR: channels, OUTPUT_DIR: path.join(dir, 'bridge-out'),
        CHANNEL_DEPOSIT_USD: '0.01', MAX_USD_TOTAL: '0.015',
      });
      const args = { file: { path: photo }, width: 30 };
      const first = await client.callTool({ name: 'svc_image_resize', arguments: args }) as CallToolResult;
      expect(first.isError, textOf(first)).to.not.equal(true);
      expect(textOf(first)).to.match(new RegExp('Paid 0\\.005 USD on eip155:8453 through the payment channel 0x[0-9a-f]{64}, '
        + 'depositing 0\\.01 USD in transaction 0x[0-9a-f]{64}\\. Spent so far: 0\\.01 of 0\\.015 USD'));
      expect(await t.evm.balanceOf(payer.address)).to.equal(1_000_000n - 10_000n);

      const second = await client.callTool({ name: 'svc_image_resize', arguments: args }) as CallToolResult;
      expect(second.isError, textOf(second)).to.not.equal(true);
      expect(textOf(second)).to.contain('Paid 0.005 USD on eip155:8453 through the payment channel');
      expect(textOf(second)).to.contain('by voucher (no transaction). Spent so far: 0.01 of 0.015 USD (MAX_USD_TOTAL). '
        + 'Of it, the payment channel on Base: 0.01 USD deposited by this bridge, 0.01 USD charged');
      expect(await t.evm.balanceOf(payer.address)).to.equal(1_000_000n - 10_000n);

      // The channel is spent: the next call needs another 0.01 USD deposit, which would pass 0.015 USD.
      const [file] = await readdir(path.join(channels, 'client'));
      const state = await readFile(path.join(channels, 'client', file), 'utf8');
      const refused = await client.callTool({ name: 'svc_image_resize', arguments: args }) as CallToolResult;
      expect(refused.isError).to.equal(true);
      expect(textOf(refused)).to.contain('the payment channel needs a deposit of 0.01 USD (CHANNEL_DEPOSIT_USD) for this 0.005 USD call, '
        + 'and only 0.005 USD of MAX_USD_TOTAL (0.015 USD) is left; nothing was signed or paid');
      expect(await t.evm.balanceOf(payer.address)).to.equal(1_000_000n - 10_000n);
      expect(await readFile(path.join(channels, 'client', file), 'utf8')).to.equal(state);
    });
  });
});

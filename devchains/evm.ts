// The Base leg of the offline payment rig: a local anvil chain that answers as Base mainnet
// (chain id 8453), test USDC at the canonical USDC address, Multicall3 at its canonical address,
// x402's batch-settlement contracts at the addresses @x402/evm uses, and an x402 facilitator over
// HTTP (schemes `exact` and `batch-settlement`) that settles with anvil's dev account #0. Clients
// sign exactly what they would sign for Base mainnet, so the unmodified @x402 client, server and
// facilitator run against it. Used by `npm start` with PAYMENTS=dev and by the tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { x402Facilitator } from '@x402/core/facilitator';
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, toFacilitatorEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  encodeAbiParameters,
  getAddress,
  getContractAddress,
  http,
  concat,
  type Abi,
  type Hash,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ensureContractsBuilt, type ContractsFile } from './evm-contracts.js';
import { serveFacilitator, type FacilitatorServer } from './facilitator-http.js';

export const BASE_NETWORK = 'eip155:8453' as const;
export const BASE_USDC_ADDRESS = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as const;
export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11' as const;
export { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS };
/**
 * The withdrawal delay a dev service offers in `extra.withdrawDelay`: the contract's
 * MIN_WITHDRAW_DELAY (15 minutes), the shortest a channel may have.
 */
export const BATCH_WITHDRAW_DELAY_S = 900;
// The CREATE2 deployer anvil ships (Arachnid's, at the same address on every chain), and the salts of
// x402's contracts/evm/script/DeployBatchSettlement.s.sol (commit ded4130918fe0edff17364eeed78dfb6a5db7c0a),
// under which x402's creation code lands at the canonical addresses.
const CREATE2_DEPLOYER = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
const BATCH_SETTLEMENT_SALT = '0x000000000000000000000000000000000000000000000000e000000005be885c';
const ERC3009_DEPOSIT_COLLECTOR_SALT = '0x0000000000000000000000000000000000000000000000001800000007a95284';

// anvil's well-known dev accounts (mnemonic "test test ... junk"); worthless outside a local chain.
const FACILITATOR_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'; // #0
export const DEMO_PAYER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'; // #1
export const DEMO_PAY_TO = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'; // #2
// Signs the dev service's batch-settlement claims and refunds (EIP-712 only: the facilitator sends them,
// so it needs no gas, though as an anvil account it holds 10,000 ETH).
const RECEIVER_AUTHORIZER_KEY = '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97'; // #8
// Deployments, minting and the test switch are sent from #9 so they never compete with settlements for #0's nonces.
const RIG_ADMIN_KEY = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6'; // #9

// How often the rig's clients (the facilitator's among them) poll for a receipt, by default.
const LOCAL_POLLING_MS = 20;
const DEFAULT_PAYER_BALANCE = 1_000_000_000n; // 1000 USDC, 6 decimals
const RPC_READY_TIMEOUT_MS = 15_000;
// A settlement that is forced to revert is sent with a fixed gas limit: estimating gas would
// fail first and nothing would reach the chain.
const FORCED_REVERT_GAS = 300_000n;

export interface EvmRigOptions {
  /** anvil's RPC port; a free one is picked when omitted. */
  port?: number;
  /** The facilitator's HTTP port; a free one is picked when omitted. */
  facilitatorPort?: number;
  /** Test USDC minted to the demo payer, in atomic units (6 decimals). */
  payerBalance?: bigint;
  /** Where payments go; anvil dev account #2 when omitted. */
  payTo?: `0x${string}`;
  /**
   * Mine a block every this many milliseconds (anvil --block-time), as a real chain does; when
   * omitted each transaction is mined the moment it arrives.
   */
  blockTimeMs?: number;
  /** How often the facilitator polls for a transaction's receipt (20 ms when omitted). */
  receiptPollingMs?: number;
}

export interface EvmRig {
  network: typeof BASE_NETWORK;
  rpcUrl: string;
  facilitatorUrl: string;
  /** The test USDC contract, at the canonical Base USDC address. */
  asset: string;
  payTo: `0x${string}`;
  payerKey: `0x${string}`;
  payerAddress: `0x${string}`;
  /** The dev service's batch-settlement receiver authorizer (anvil dev account #8); dev only. */
  receiverAuthorizerKey: `0x${string}`;
  receiverAuthorizerAddress: `0x${string}`;
  facilitator: FacilitatorServer;
  balanceOf(address: string): Promise<bigint>;
  mint(address: string, amount: bigint): Promise<void>;
  stop(): Promise<void>;
}

interface RigControls {
  armForcedRevert(): void;
}

const controls = new WeakMap<EvmRig, RigControls>();

function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    manifest = require.resolve('@foundry-rs/anvil-linux-amd64/package.json');
  } catch {
    throw new Error('the dev payment rig needs the npm package @foundry-rs/anvil-linux-amd64 (Linux x64 only)');
  }
  return path.join(path.dirname(manifest), 'bin', 'anvil');
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function rpcAnswers(rpcUrl: string): Promise<boolean> {
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// anvil is a long-lived local daemon, not a bounded job, so it is spawned here rather than
// through tools/process/run-tool.ts (which kills what outlives its deadline).
async function startAnvil(port: number, blockTimeMs: number | undefined): Promise<{ child: ChildProcess; rpcUrl: string }> {
  // --block-time takes seconds and accepts fractions.
  const blockTime = blockTimeMs === undefined ? [] : ['--block-time', String(blockTimeMs / 1000)];
  const child = spawn(anvilBinary(), ['--chain-id', '8453', '--host', '127.0.0.1', '--port', String(port), '--quiet', ...blockTime], {
    stdio: 'ignore',
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8' },
  });
  let exitCode: number | null | undefined;
  child.once('exit', (code, signal) => { exitCode = code ?? (signal ? -1 : null); });
  child.once('error', () => { exitCode = -1; });
  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + RPC_READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`anvil exited before answering on port ${port} (code ${exitCode})`);
    if (await rpcAnswers(rpcUrl)) return { child, rpcUrl };
    await delay(50);
  }
  child.kill('SIGKILL');
  throw new Error(`anvil did not answer on ${rpcUrl} within ${RPC_READY_TIMEOUT_MS} ms`);
}

// The rig must not outlive the process that started it: 'exit' covers normal ends and
// process.exit(); the signal handlers cover Ctrl-C and `kill`, and re-raise the signal only when
// nobody else handles it, so an application's own graceful shutdown keeps working.
function killWithParent(child: ChildProcess): () => void {
  const kill = () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); };
  const onSignal = (signal: NodeJS.Signals) => {
    kill();
    detach();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  process.on('exit', kill);
  for (const signal of signals) process.on(signal, onSignal);
  function detach() {
    process.off('exit', kill);
    for (const signal of signals) process.off(signal, onSignal);
  }
  return detach;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

// One transaction at a time per sending account: nonces are read from the chain's pending
// count, so two concurrent sends would otherwise pick the same nonce.
function serialized() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const result = tail.then(task, task);
    tail = result.catch(() => undefined);
    return result;
  };
}

/**
 * The CREATE2 deployments of x402's batch-settlement contracts, as x402's deploy script makes them
 * (the collector's constructor takes the settlement contract's address). Fails unless each lands at
 * the address @x402/evm uses: a CREATE2 address is a hash of the creation code, so a match proves
 * the compiled bytes are x402's.
 */
export function batchSettlementDeployments(contracts: ContractsFile['contracts']): { name: string; address: Hex; data: Hex }[] {
  const settlement = contracts.x402BatchSettlement;
  const collector = contracts.ERC3009DepositCollector;
  if (!settlement || !collector) throw new Error('dist/vendor/contracts.json lacks x402BatchSettlement or ERC3009DepositCollector');
  const planned = [
    { name: 'x402BatchSettlement', canonical: BATCH_SETTLEMENT_ADDRESS, salt: BATCH_SETTLEMENT_SALT, initCode: settlement.bytecode },
    {
      name: 'ERC3009DepositCollector',
      canonical: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
      salt: ERC3009_DEPOSIT_COLLECTOR_SALT,
      initCode: concat([collector.bytecode, encodeAbiParameters([{ type: 'address' }], [BATCH_SETTLEMENT_ADDRESS])]),
    },
  ] as const;
  return planned.map(({ name, canonical, salt, initCode }) => {
    const address = getContractAddress({ opcode: 'CREATE2', from: CREATE2_DEPLOYER, salt, bytecode: initCode });
    if (address !== canonical) {
      throw new Error(`${name} compiled from vendor/x402-batch-settlement/ would deploy at ${address}, not at @x402/evm's ${canonical}: `
        + 'its creation code differs from x402\'s (compiler, settings, OpenZeppelin version or sources)');
    }
    return { name, address, data: concat([salt, initCode]) };
  });
}

export async function startEvmRig(options: EvmRigOptions = {}): Promise<EvmRig> {
  const { contracts } = await ensureContractsBuilt();
  const token = contracts.TestUSDC;
  const multicall = contracts.Multicall3Min;
  if (!token || !multicall) throw new Error('dist/vendor/contracts.json lacks TestUSDC or Multicall3Min');
  const tokenAbi = token.abi as Abi;
  const deployments = batchSettlementDeployments(contracts);

  let anvil: { child: ChildProcess; rpcUrl: string } | undefined;
  for (let attempt = 1; !anvil; attempt += 1) {
    // Another process can take a just-freed port before anvil binds it: retry with a new one.
    const port = options.port ?? (await freePort());
    try {
      anvil = await startAnvil(port, options.blockTimeMs);
    } catch (error) {
      if (options.port !== undefined || attempt >= 3) throw error;
    }
  }
  const { child, rpcUrl } = anvil;
  const detachFromParent = killWithParent(child);
  let facilitatorServer: FacilitatorServer | undefined;

  try {
    const chain = defineChain({
      id: 8453,
      name: 'Base (local anvil)',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
      contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
    });
    const transport = http(rpcUrl);
    // Without a block time anvil mines each transaction the moment it arrives, so there is no block
    // to wait for. viem's defaults (poll every 4 s, cache the block number as long) made a settlement
    // that just missed a block wait up to 4 s for the next one, with every later settlement queued
    // behind it: paid calls stalled for seconds under concurrency.
    const pollingInterval = options.receiptPollingMs ?? LOCAL_POLLING_MS;
    const publicClient = createPublicClient({ chain, transport, pollingInterval, cacheTime: 0 });
    const testClient = createTestClient({ chain, transport, mode: 'anvil' });

    await testClient.setCode({ address: BASE_USDC_ADDRESS, bytecode: token.deployedBytecode });
    await testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: multicall.deployedBytecode });

    const admin = createWalletClient({ chain, transport, account: privateKeyToAccount(RIG_ADMIN_KEY) });
    const adminSend = serialized();
    const adminCall = async (functionName: 'mint' | 'setFailTransfers', args: readonly unknown[]) => {
      const hash = await adminSend(() => admin.writeContract({ address: BASE_USDC_ADDRESS, abi: tokenAbi, functionName, args }));
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== 'success') throw new Error(`test USDC ${functionName} reverted (${hash})`);
    };
    const deploy = async ({ name, address, data }: (typeof deployments)[number]) => {
      const hash = await adminSend(() => admin.sendTransaction({ to: CREATE2_DEPLOYER, data }));
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      const code = await publicClient.getCode({ address });
      if (receipt.status !== 'success' || !code || code === '0x') throw new Error(`deploying ${name} at ${address} failed (${hash})`);
    };
    const payer = privateKeyToAccount(DEMO_PAYER_KEY);
    const payerBalance = options.payerBalance ?? DEFAULT_PAYER_BALANCE;
    // All sent before any is awaited: with a block time they are mined in one block.
    await Promise.all([
      ...deployments.map(deploy),
      payerBalance > 0n ? adminCall('mint', [payer.address, payerBalance]) : undefined,
    ]);

    const facilitatorAccount = privateKeyToAccount(FACILITATOR_KEY);
    const facilitatorWallet = createWalletClient({ chain, transport, account: facilitatorAccount });
    const facilitatorSend = serialized();
    let forcedRevertArmed = false;

    const signer = toFacilitatorEvmSigner(
      {
        address: facilitatorAccount.address,
        readContract: (args) => publicClient.readContract(args as Parameters<typeof publicClient.readContract>[0]),
        verifyTypedData: (args) => publicClient.verifyTypedData(args as Parameters<typeof publicClient.verifyTypedData>[0]),
        getCode: (args) => publicClient.getCode(args),
        waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt(args),
        sendTransaction: (args) => facilitatorSend(() => facilitatorWallet.sendTransaction(args)),
        writeContract: async (args) => {
          const write = (gas?: bigint) =>
            facilitatorSend(() =>
              facilitatorWallet.writeContract(
                { ...args, ...(gas ? { gas } : {}) } as Parameters<typeof facilitatorWallet.writeContract>[0],
              ),
            );
          if (!forcedRevertArmed || args.functionName !== 'transferWithAuthorization') return write(args.gas);
          forcedRevertArmed = false;
          await adminCall('setFailTransfers', [true]);
          try {
            const hash: Hash = await write(FORCED_REVERT_GAS);
            await publicClient.waitForTransactionReceipt({ hash });
            return hash;
          } finally {
            await adminCall('setFailTransfers', [false]);
          }
        },
      },
      { confirmationTimeoutMs: 30_000 },
    );

    // No authorizer signer for batch-settlement: the service holds its receiver-authorizer key and
    // signs its own claims and refunds, so the facilitator advertises none.
    const facilitator = new x402Facilitator()
      .register(BASE_NETWORK, new ExactEvmScheme(signer))
      .register(BASE_NETWORK, new BatchSettlementEvmScheme(signer));
    facilitatorServer = await serveFacilitator(facilitator, { port: options.facilitatorPort, host: '127.0.0.1' });

    let stopped: Promise<void> | undefined;
    const server = facilitatorServer;
    const rig: EvmRig = {
      network: BASE_NETWORK,
      rpcUrl,
      facilitatorUrl: server.url,
      asset: BASE_USDC_ADDRESS,
      payTo: getAddress(options.payTo ?? DEMO_PAY_TO),
      payerKey: DEMO_PAYER_KEY,
      payerAddress: payer.address,
      receiverAuthorizerKey: RECEIVER_AUTHORIZER_KEY,
      receiverAuthorizerAddress: privateKeyToAccount(RECEIVER_AUTHORIZER_KEY).address,
      facilitator: server,
      balanceOf: async (address) =>
        (await publicClient.readContract({
          address: BASE_USDC_ADDRESS,
          abi: tokenAbi,
          functionName: 'balanceOf',
          args: [getAddress(address)],
        })) as bigint,
      mint: (address, amount) => adminCall('mint', [getAddress(address), amount]),
      stop: () => {
        stopped ??= (async () => {
          await server.stop();
          detachFromParent();
          await stopChild(child);
        })();
        return stopped;
      },
    };
    controls.set(rig, {
      armForcedRevert: () => { forcedRevertArmed = true; },
    });
    return rig;
  } catch (error) {
    await facilitatorServer?.stop();
    detachFromParent();
    await stopChild(child);
    throw error;
  }
}

function controlsOf(rig: EvmRig): RigControls {
  const found = controls.get(rig);
  if (!found) throw new Error('not a rig returned by startEvmRig');
  return found;
}

/**
 * Test-only: the facilitator's next settlement transaction is mined and reverts on chain
 * (the token's transfer switch is on for exactly that transaction), so settle answers
 * `success: false` with the reverted transaction's hash and no balance moves. Verification,
 * which only simulates, is not affected.
 */
export function revertNextSettlement(rig: EvmRig): void {
  controlsOf(rig).armForcedRevert();
}

/**
 * Test-only: while enabled every test USDC transfer reverts, so verification (which simulates
 * the transfer) fails too.
 */

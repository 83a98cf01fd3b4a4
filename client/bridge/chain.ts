// The EVM chain the bridge pays on, read to learn whether a lapsed EIP-3009 authorization was used:
// the budget releases what the chain shows can never be spent.
import { createPublicClient, http, parseAbi, type PublicClient } from 'viem';
import type { Authorization, LapsedReader } from './budget.js';
import type { Payable } from './settings.js';

const AUTHORIZATION_STATE_ABI = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)']);

/** Reads the EVM chain the bridge pays on, to learn whether a lapsed authorization was used. */
export class EvmChain implements LapsedReader {
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

/** The chain reader for releasing lapsed EVM authorizations: EVM_RPC_URL, else viem's public RPC for the network. */
export async function evmChainFor(networks: Payable[], env: NodeJS.ProcessEnv): Promise<EvmChain | undefined> {
  const payable = networks.find((n) => n.family === 'evm');
  if (!payable) return undefined;
  let rpcUrl = env.EVM_RPC_URL;
  if (!rpcUrl) {
    const id = Number(payable.network.slice('eip155:'.length));
    type Chain = { id?: number; rpcUrls?: { default?: { http?: readonly string[] } } };
    const chains = Object.values(await import('viem/chains')) as Chain[];
    rpcUrl = chains.find((c) => c.id === id)?.rpcUrls?.default?.http?.[0];
  }
  if (!rpcUrl) {
    process.stderr.write(`paydoc-mcp: no RPC known for ${payable.network} (set EVM_RPC_URL): `
      + 'unpaid authorizations stay counted against MAX_USD_TOTAL\n');
    return undefined;
  }
  return new EvmChain(createPublicClient({ transport: http(rpcUrl) }), payable);
}

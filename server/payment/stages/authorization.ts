// Stage 6, on the retry of a Base result held after an unknown settlement that now fails to
// settle: the facilitator's refusal (an expired validBefore, a balance the first transfer
// drained) does not say whether the first settlement landed, so the chain decides. EIP-3009
// tokens (USDC) record every authorization they executed (authorizationState), and refuse one
// in a block whose timestamp is not below its validBefore: an authorization unused at a block
// past its validBefore was not charged and never can be.
import { createPublicClient, http, type PublicClient } from 'viem';
import type { Payment } from './payload.js';

export type AuthorizationState =
  /** Executed on the chain: the buyer was charged. */
  | 'used'
  /** Not executed, and a block past its validBefore exists: nothing was or can be charged. */
  | 'expired-unused'
  /** Not executed yet, and still valid: it could still be charged. */
  | 'unused';

/** Reads what became of a payment on its chain; throws when the chain cannot be read. */
export interface AuthorizationReader {
  /** Undefined when the reader cannot tell (a payment on a chain it does not read, or not found where it may still land). */
  stateOf(payment: Payment): Promise<AuthorizationState | undefined>;
}

/** Each payment read by the reader of its chain. */
export class ChainReaders implements AuthorizationReader {
  constructor(private readonly readers: readonly AuthorizationReader[]) {}

  async stateOf(payment: Payment): Promise<AuthorizationState | undefined> {
    for (const reader of this.readers) {
      const state = await reader.stateOf(payment);
      if (state !== undefined) return state;
    }
    return undefined;
  }
}

const AUTHORIZATION_STATE_ABI = [{
  type: 'function', name: 'authorizationState', stateMutability: 'view',
  inputs: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }],
  outputs: [{ type: 'bool' }],
}] as const;

// A retry waits on this read: an RPC slower than this leaves the outcome unknown (the result stays held).
const RPC_TIMEOUT_MS = 10_000;

interface Authorization { from: `0x${string}`; nonce: `0x${string}`; validBefore: bigint }

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_NONCE = /^0x[0-9a-fA-F]{64}$/;

/** The EIP-3009 authorization a payment carries, if it carries a well-formed one. */
export function authorizationOf(payment: Payment): Authorization | undefined {
  if (!payment.matched.network.startsWith('eip155:')) return undefined;
  const auth = (payment.payload.payload as { authorization?: Record<string, unknown> } | undefined)?.authorization;
  const { from, nonce, validBefore } = auth ?? {};
  if (typeof from !== 'string' || !HEX_ADDRESS.test(from) || typeof nonce !== 'string' || !HEX_NONCE.test(nonce)) return undefined;
  if (typeof validBefore !== 'string' || !/^\d{1,20}$/.test(validBefore)) return undefined;
  return { from: from as `0x${string}`, nonce: nonce as `0x${string}`, validBefore: BigInt(validBefore) };
}

/** What an authorization's record and the chain's latest block say together. */
export function classify(used: boolean, latestBlockTimestamp: bigint, validBefore: bigint): AuthorizationState {
  if (used) return 'used';
  return latestBlockTimestamp >= validBefore ? 'expired-unused' : 'unused';
}

/** Reads authorizations over each EVM chain's RPC (network → RPC URL), at the payment's token. */
export class ChainAuthorizationReader implements AuthorizationReader {
  private readonly clients = new Map<string, PublicClient>();

  constructor(rpcUrls: ReadonlyMap<string, string>) {
    for (const [network, url] of rpcUrls) {
      this.clients.set(network, createPublicClient({ transport: http(url, { timeout: RPC_TIMEOUT_MS, retryCount: 1 }) }));
    }
  }

  async stateOf(payment: Payment): Promise<AuthorizationState | undefined> {
    const client = this.clients.get(payment.matched.network);
    const auth = authorizationOf(payment);
    if (!client || !auth) return undefined;
    // Both read at one block: unused there, at a timestamp not below validBefore, it never can be.
    const latest = await client.getBlock({ blockTag: 'latest' });
    const used = await client.readContract({
      address: payment.matched.asset as `0x${string}`, abi: AUTHORIZATION_STATE_ABI, functionName: 'authorizationState', args: [auth.from, auth.nonce],
      blockNumber: latest.number,
    });
    return classify(used, latest.timestamp, auth.validBefore);
  }
}

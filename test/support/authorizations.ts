// Real EIP-3009 authorizations on the local Base chain, for the bridge's budget and chain reader:
// signed by x402's client as the bridge signs them, settled by the rig's facilitator when a test
// needs one used, and lapsed by moving the chain's clock.
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { EvmRig } from '../../devchains/index.js';
import { createPayer } from '../../client/payer.js';
import type { Authorization } from '../../client/bridge/budget.js';

export interface SignedAuthorization { payment: PaymentPayload; authorization: Authorization }

/** Signs `amount` atomic USDC to the rig's payee, valid for `seconds`, as the bridge's Authorization. */
export async function signAuthorization(rig: EvmRig, amount: bigint, seconds = 30): Promise<SignedAuthorization> {
  const payer = await createPayer({ chain: 'base', evmKey: rig.payerKey });
  const offer: PaymentRequirements = {
    scheme: 'exact', network: rig.network, asset: rig.asset, amount: String(amount), payTo: rig.payTo,
    maxTimeoutSeconds: seconds, extra: { name: 'USD Coin', version: '2' },
  };
  const resource = { url: 'mcp://test', description: 'test', mimeType: 'image/png' };
  const payment = await payer.createPaymentPayload({ x402Version: 2, resource, accepts: [offer] });
  const signed = (payment.payload as { authorization: { from: `0x${string}`; nonce: `0x${string}`; validBefore: string } }).authorization;
  const authorization = { amount, spent: false, evm: { from: signed.from, nonce: signed.nonce, validBefore: BigInt(signed.validBefore) } };
  return { payment, authorization };
}

/** Settles the authorization on the chain through the rig's facilitator. */
export async function settle(rig: EvmRig, signed: SignedAuthorization): Promise<void> {
  const receipt = await new HTTPFacilitatorClient({ url: rig.facilitatorUrl }).settle(signed.payment, signed.payment.accepted);
  if (!receipt.success) throw new Error(`not settled: ${receipt.errorReason}`);
}

async function rpc(rig: EvmRig, method: string, params: unknown[]): Promise<void> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const res = await fetch(rig.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const answer = await res.json() as { error?: { message: string } };
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
}

/** Moves the chain's clock on by `seconds` and mines a block there. */
export async function advanceChain(rig: EvmRig, seconds: number): Promise<void> {
  await rpc(rig, 'evm_increaseTime', [seconds]);
  await rpc(rig, 'evm_mine', []);
}

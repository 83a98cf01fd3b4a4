// The local chains for development and tests: a Base chain (anvil, test USDC and x402's
// batch-settlement contracts compiled from vendor/) and a Solana chain (LiteSVM behind a JSON-RPC
// server), each settled by its own x402 facilitator built from x402's own facilitator classes. A
// layer of its own: it imports nothing from the service, and the service loads it only in dev mode
// (PAYMENTS=dev), so live mode and a production install (no anvil, litesvm or solc) never touch it.
import { startEvmRig, type EvmRig } from './evm.js';
import { startSvmRig, type SvmRig } from './svm.js';

export {
  startEvmRig, revertNextSettlement, BASE_NETWORK, BASE_USDC_ADDRESS, MULTICALL3_ADDRESS,
  BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, BATCH_WITHDRAW_DELAY_S,
} from './evm.js';
export type { EvmRig, EvmRigOptions } from './evm.js';
export { startSvmRig, createSvmFacilitator, SOLANA_NETWORK, SOLANA_USDC_MINT } from './svm.js';
export type { SvmRig, SvmRigOptions } from './svm.js';
export { serveFacilitator } from './facilitator-http.js';
export type { FacilitatorServer } from './facilitator-http.js';

export interface DevRigs { evm?: EvmRig; svm?: SvmRig }

/** Starts the chosen local chains; when one fails, those already started are stopped. */
export async function startDevRigs(chains: { evm: boolean; svm: boolean }): Promise<DevRigs> {
  const rigs: DevRigs = {};
  try {
    if (chains.evm) rigs.evm = await startEvmRig();
    if (chains.svm) rigs.svm = await startSvmRig();
  } catch (err) {
    await stopDevRigs(rigs);
    throw err;
  }
  return rigs;
}

export async function stopDevRigs(rigs: DevRigs): Promise<void> {
  await Promise.allSettled([rigs.evm?.stop(), rigs.svm?.stop()]);
}

// Which pay buttons are shown and which can be pressed. A chain's button is shown only when the
// service offers that chain; it can be pressed with a quote payable there, no payment under way,
// and a wallet (or, in dev mode, the demo payer) to sign.
import { byId } from './dom.js';
import { isEvm, isSolana } from './networks.js';
import { solanaWalletFor } from './solana-wallet.js';
import { state } from './state.js';

/** Whether the service offers a chain, as its catalog says (before the catalog loads: Base only, as always). */
function offered(matches: (network: string) => boolean): boolean | undefined {
  if (state.operations.length === 0) return undefined;
  return state.operations.some((op) => op.item.accepts.some((a) => matches(a.network)));
}

export function updatePayButtons(): void {
  const accepts = state.quote?.paymentRequired.accepts ?? [];
  const ready = state.quote !== undefined && !state.busy;
  const evm = accepts.find((a) => isEvm(a.network));
  const solana = accepts.find((a) => isSolana(a.network));

  const wallet = byId<HTMLButtonElement>('pay-wallet');
  wallet.hidden = offered(isEvm) === false;
  wallet.disabled = !ready || !evm || !window.ethereum;

  const solanaButton = byId<HTMLButtonElement>('pay-solana');
  solanaButton.hidden = !(offered(isSolana) && state.solanaRelay);
  solanaButton.disabled = solanaButton.hidden || !ready || !solana || !solanaWalletFor(solana.network);

  const demo = byId<HTMLButtonElement>('pay-demo');
  demo.hidden = state.devPayer === undefined;
  demo.disabled = !ready || !evm || state.devPayer === undefined;
}

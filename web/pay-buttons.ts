// Which pay buttons are shown and which are ready. A chain's button is shown only when the
// service offers that chain; it is ready with a quote payable there, no payment under way, and a
// wallet (or, in dev mode, the demo payer) to sign. A button that is not ready looks so and says
// so to a screen reader (aria-disabled), but is never `disabled`: a browser drops a click on a
// disabled button without a word, and every click must end in a payment or in words saying why
// not (pay.ts).
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
  setReady(wallet, ready && evm !== undefined && window.ethereum !== undefined);

  const solanaButton = byId<HTMLButtonElement>('pay-solana');
  solanaButton.hidden = !(offered(isSolana) && state.solanaRelay);
  setReady(solanaButton, !solanaButton.hidden && ready && solana !== undefined && solanaWalletFor(solana.network) !== undefined);

  const demo = byId<HTMLButtonElement>('pay-demo');
  demo.hidden = state.devPayer === undefined;
  setReady(demo, ready && evm !== undefined && state.devPayer !== undefined);
}

function setReady(button: HTMLButtonElement, ready: boolean): void {
  button.setAttribute('aria-disabled', String(!ready));
}

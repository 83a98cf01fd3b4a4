// Whether each pay button can be pressed: only with a quote payable on an EVM chain, no payment
// under way, and a wallet or (in dev mode) the demo payer to sign.
import { byId } from './dom.js';
import { isEvm } from './networks.js';
import { state } from './state.js';

export function updatePayButtons(): void {
  const canPay = state.quote !== undefined && !state.busy && state.quote.paymentRequired.accepts.some((a) => isEvm(a.network));
  const wallet = byId<HTMLButtonElement>('pay-wallet');
  const demo = byId<HTMLButtonElement>('pay-demo');
  wallet.disabled = !canPay || !window.ethereum;
  demo.hidden = state.devPayer === undefined;
  demo.disabled = !canPay || state.devPayer === undefined;
}

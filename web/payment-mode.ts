// Which ways of paying the page offers: an injected browser wallet, and in dev mode the service's
// demo payer as well.
import { byId } from './dom.js';
import { formatUsdc, shortAddress } from './format.js';
import { updatePayButtons } from './pay-buttons.js';
import type { DevPayer } from './service-types.js';
import { state } from './state.js';

export async function loadPaymentMode(): Promise<void> {
  const note = byId('wallet-note');
  note.textContent = window.ethereum
    ? 'A browser wallet was found. Paying asks it to sign a USDC authorisation; the service settles it only if the job succeeds.'
    : 'No browser wallet was found. To pay on Base, use a browser with a wallet extension.';
  try {
    const health = await fetch('/v1/health').then((r) => r.json()) as { payments?: { mode?: string } };
    if (health.payments?.mode !== 'dev') return;
    const response = await fetch('/dev/payer');
    if (!response.ok) return;
    state.devPayer = await response.json() as DevPayer;
    const mode = byId('mode');
    mode.hidden = false;
    mode.textContent = `Dev mode: payments go to a local test chain, no real money moves. The demo payer ${shortAddress(state.devPayer.address)} holds ${formatUsdc(state.devPayer.balance)} test USDC and can pay without a wallet.`;
    if (!window.ethereum) note.textContent += ' In dev mode the demo payer can pay instead.';
  } catch {
    // Without the mode the page still pays with a wallet.
  } finally {
    updatePayButtons();
  }
}

// Which ways of paying the page offers: a browser wallet on each chain the service offers (an
// EIP-1193 wallet on Base, a Wallet Standard wallet on Solana), and in dev mode the service's demo
// payer as well.
import { byId } from './dom.js';
import { formatUsdc, shortAddress } from './format.js';
import { isEvm, isSolana } from './networks.js';
import { updatePayButtons } from './pay-buttons.js';
import type { DevPayer } from './service-types.js';
import { discard } from './responses.js';
import { SOLANA_RELAY } from './signing.js';
import { solanaWalletFor, watchSolanaWallets } from './solana-wallet.js';
import { state } from './state.js';
import { SERVICE_READ_TIMEOUT_MS, timedFetch } from './timeouts.js';

/** The note under the pay buttons: which wallets were found, for the chains the service offers. */
export function describeWallets(): void {
  const networks = new Set(state.operations.flatMap((op) => op.item.accepts.map((a) => a.network)));
  // Before the catalog has loaded, Base is assumed, as the page always did.
  const base = networks.size === 0 || [...networks].some(isEvm);
  const solana = [...networks].some(isSolana) && state.solanaRelay;
  const parts: string[] = [];
  if (base) {
    parts.push(window.ethereum
      ? 'A Base wallet was found: paying asks it to sign a USDC authorisation.'
      : 'No Base wallet was found (a browser wallet extension for Ethereum and Base).');
  }
  if (solana) {
    const wallet = solanaWalletFor();
    parts.push(wallet
      ? `A Solana wallet was found (${wallet.name}): paying asks it to sign a USDC transfer.`
      : 'No Solana wallet was found (a browser wallet extension for Solana).');
  }
  if (parts.length === 0) parts.push('This page cannot pay on the chains this service offers; pay with an x402 client for them.');
  else parts.push('The service settles a payment only if the job succeeds.');
  if (state.devPayer && !window.ethereum) parts.push('In dev mode the demo payer can pay instead.');
  byId('wallet-note').textContent = parts.join(' ');
}

export async function loadPaymentMode(): Promise<void> {
  // Wallet extensions may register after the page has loaded; the buttons and note follow them.
  watchSolanaWallets(() => { updatePayButtons(); describeWallets(); });
  describeWallets();
  try {
    const relay = await timedFetch(SOLANA_RELAY, {}, SERVICE_READ_TIMEOUT_MS).catch(() => undefined);
    // Only whether it is there matters.
    state.solanaRelay = relay?.ok === true;
    discard(relay);
    const health = await timedFetch('/v1/health', {}, SERVICE_READ_TIMEOUT_MS).then((r) => r.json()) as { payments?: { mode?: string } };
    if (health.payments?.mode !== 'dev') return;
    const response = await timedFetch('/dev/payer', {}, SERVICE_READ_TIMEOUT_MS);
    if (!response.ok) return discard(response);
    state.devPayer = await response.json() as DevPayer;
    const mode = byId('mode');
    mode.hidden = false;
    mode.textContent = `Dev mode: payments go to local test chains, no real money moves. The demo payer ${shortAddress(state.devPayer.address)} holds ${formatUsdc(state.devPayer.balance)} test USDC on Base and can pay without a wallet.`;
  } catch {
    // Without the mode the page still pays with a wallet.
  } finally {
    updatePayButtons();
    describeWallets();
  }
}

// The page behind GET /: lists the operations with their live prices, builds the chosen
// operation's form from the API description, asks the service for the quote (the 402) as soon
// as a file is chosen, and pays with the standard x402 client, signing with an injected
// EIP-1193 wallet on Base, a Wallet Standard wallet on Solana, or (in dev mode only) the service's
// demo payer on the local Base chain.
// Every request goes to this page's own origin, by relative path; nothing is stored.
//
// This entry only wires the page together; each part lives in its own module beside it.
import { loadOperations } from './catalog.js';
import { byId } from './dom.js';
import { releaseHeld } from './field-errors.js';
import { pay } from './pay.js';
import { loadPaymentMode } from './payment-mode.js';

byId('pay-wallet').addEventListener('click', () => void pay('wallet'));
byId('pay-solana').addEventListener('click', () => void pay('solana'));
byId('pay-demo').addEventListener('click', () => void pay('demo'));
const job = byId<HTMLFormElement>('job');
job.addEventListener('submit', (event) => event.preventDefault());
// Leaving the form's fields shows a message held back about a field not yet filled in. A window
// losing focus (another application, the file chooser) is not leaving. Shown once the focus has
// landed, so the message can tell where the person went.
job.addEventListener('focusout', (event) => {
  if (document.hasFocus() && !job.contains(event.relatedTarget as Node | null)) window.setTimeout(releaseHeld, 0);
});
void loadOperations();
void loadPaymentMode();

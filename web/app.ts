// The page behind GET /: lists the operations with their live prices, builds the chosen
// operation's form from the API description, asks the service for the quote (the 402) as soon
// as a file is chosen, and pays with the standard x402 client, signing with an injected
// EIP-1193 wallet (or, in dev mode only, the service's demo payer on the local chain).
// Every request goes to this page's own origin, by relative path; nothing is stored.
//
// This entry only wires the page together; each part lives in its own module beside it.
import { loadOperations } from './catalog.js';
import { byId } from './dom.js';
import { pay } from './pay.js';
import { loadPaymentMode } from './payment-mode.js';

byId('pay-wallet').addEventListener('click', () => void pay('wallet'));
byId('pay-demo').addEventListener('click', () => void pay('demo'));
byId<HTMLFormElement>('job').addEventListener('submit', (event) => event.preventDefault());
void loadOperations();
void loadPaymentMode();

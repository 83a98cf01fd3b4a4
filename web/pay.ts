// Paying for the quoted job: sign, send the file again with the payment, and show the result or
// say in plain words why nothing was charged.
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { byId, element } from './dom.js';
import { releaseHeld } from './field-errors.js';
import { hasFile } from './form-values.js';
import { formatUsdc, sentence } from './format.js';
import { NOT_CHARGED, clearProblem, describeErrorResponse, setStatus, showProblem } from './messages.js';
import { isEvm, isSolana, networkName } from './networks.js';
import { updatePayButtons } from './pay-buttons.js';
import { paymentHeaders } from './payment-headers.js';
import { requestQuote } from './quote.js';
import { discard } from './responses.js';
import { revealResult, showResult } from './result.js';
import type { Quote } from './service-types.js';
import { signWithDemoPayer, signWithSolanaWallet, signWithWallet, walletErrorWords } from './signing.js';
import { solanaWalletFor } from './solana-wallet.js';
import { state } from './state.js';
import { PAID_TIMEOUT_MS, SERVICE_READ_TIMEOUT_MS, WALLET_TIMEOUT_MS, isTimeout, timedFetch, within } from './timeouts.js';

/** The reasons a facilitator or the service gives for refusing a payment, in plain words. */
function refusalWords(reason: string): string {
  if (!reason) return '';
  const known: Array<[RegExp, string]> = [
    [/insufficient_(balance|funds)/i, 'The paying account does not hold enough USDC for this price.'],
    [/expired|valid_?before|valid_?after|too early/i, 'The signed payment was not valid at this time (it may have expired). Sign again.'],
    [/signature/i, 'The signature on the payment could not be verified.'],
    [/already (been )?used|nonce/i, 'This payment was already used.'],
    [/no matching payment requirements|amount|pay_?to|recipient/i, 'The payment does not match this price, chain or recipient. Ask for a new price and pay again.'],
    [/settlement failed/i, 'The payment could not be settled on the chain.'],
  ];
  const words = known.find(([pattern]) => pattern.test(reason))?.[1];
  const detail = reason.replace(/_/g, ' ');
  return words ? `${words} (The service said: ${detail}.)` : `The service said: ${sentence(detail)}`;
}

// Answers meaning the result is held for this very payment: the identical request gets it.
const HELD = new Set(['SETTLEMENT_UNCONFIRMED', 'PAYMENT_IN_PROGRESS']);
const HELD_RETRIES = 4;

/** Sends the paid request; while the service holds its result, sends the identical request again (no second charge). */
async function sendPaid(path: string, body: FormData, headers: Record<string, string>): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await timedFetch(path, { method: 'POST', body, headers }, PAID_TIMEOUT_MS);
    if (attempt === HELD_RETRIES || (response.status !== 503 && response.status !== 409)) return response;
    const code = await response.clone().json().then((b: { error?: { code?: string } }) => b.error?.code, () => undefined);
    if (code === undefined || !HELD.has(code)) return response;
    discard(response);
    setStatus('The payment is being confirmed; asking the service again for the result…');
    await new Promise((resolve) => setTimeout(resolve, Math.min(Number(response.headers.get('retry-after') ?? 5), 30) * 1000));
  }
}

/** wallet: an EIP-1193 wallet on Base; solana: a Wallet Standard wallet on Solana; demo: the dev-mode demo payer on Base. */
export type PayMethod = 'wallet' | 'solana' | 'demo';

const SIGNERS = { wallet: signWithWallet, solana: signWithSolanaWallet, demo: signWithDemoPayer };

const CHAIN_OF: Record<PayMethod, string> = { wallet: 'Base', solana: 'Solana', demo: 'Base' };

/** Why this click cannot pay now, in words (headline and details), or undefined when it can. */
function whyNotNow(method: PayMethod): string[] | undefined {
  if (state.busy) return ['A payment is already under way.', 'Its outcome appears here; this click paid nothing more.'];
  if (!state.current) return ['Choose an operation first.', 'Its price is asked for once a file is chosen.'];
  if (!hasFile()) {
    return ['Choose a file first.', 'The exact price is asked for as soon as it is chosen; nothing is signed before you see it.'];
  }
  const quote = state.quote;
  if (!quote && state.quoting) {
    return ['The price is still being asked for.', 'Pay once it is shown under Price; nothing was signed or paid.'];
  }
  if (!quote && document.getElementById('quote-paid')) {
    return ['This price is already paid.', 'To run the job again, press "Get a new price to run it again" under Price and pay that price.'];
  }
  if (!quote) {
    const why = state.quoteRefusal ? `The service did not give one: ${state.quoteRefusal}` : 'Choose the file again to ask for it.';
    return ['There is no price to pay yet.', why, NOT_CHARGED];
  }
  const accept = quote.paymentRequired.accepts.find((a) => (method === 'solana' ? isSolana(a.network) : isEvm(a.network)));
  if (!accept) {
    const other = 'Use another pay button or an x402 client for the chains listed under Price.';
    return [`This price cannot be paid on ${CHAIN_OF[method]}.`, other];
  }
  if (method === 'wallet' && !window.ethereum) {
    const instead = state.devPayer ? ', or pay with the demo payer' : '';
    const install = `Install or unlock a wallet extension for Ethereum and Base${instead}.`;
    return ['No Base wallet was found in this browser.', `${install} ${NOT_CHARGED}`];
  }
  if (method === 'solana' && !solanaWalletFor(accept.network)) {
    const headline = `No Solana wallet for ${networkName(accept.network)} was found in this browser.`;
    return [headline, `Install or unlock a Solana wallet extension. ${NOT_CHARGED}`];
  }
  if (method === 'demo' && !state.devPayer) {
    const why = 'The service did not offer it (it exists in dev mode only), or it has not loaded yet; reload the page.';
    return ['The demo payer is not available.', `${why} ${NOT_CHARGED}`];
  }
  return undefined;
}

/** Every click ends in a payment and its result, or in words saying why not. */
export async function pay(method: PayMethod): Promise<void> {
  const why = whyNotNow(method);
  if (why) {
    // A problem held back about an option not yet filled in is what stands between this click and a price.
    if (!state.quote && !state.quoting) releaseHeld();
    if (!state.busy) setStatus('');
    const [headline, ...details] = why;
    showProblem(headline, ...details);
    return;
  }
  const quote = state.quote!;
  const accept = quote.paymentRequired.accepts.find((a) => (method === 'solana' ? isSolana(a.network) : isEvm(a.network)))!;
  state.busy = true;
  let sent = false;
  try {
    updatePayButtons();
    clearProblem();
    await payQuote(method, quote, accept, () => { sent = true; });
  } catch (error) {
    // Anything unforeseen still ends in words, never in a page that silently waits.
    setStatus('');
    const reason = error instanceof Error && error.message ? ` (${sentence(error.message)})` : '';
    showProblem(`The page could not finish this payment${reason}`, sent
      ? 'The service charges only after the job succeeds and the answer is sent; your wallet shows any payment.'
      : NOT_CHARGED);
  } finally {
    state.busy = false;
    updatePayButtons();
  }
}

async function payQuote(method: PayMethod, quote: Quote, accept: PaymentRequirements, onSent: () => void): Promise<void> {
  const price = `${formatUsdc(accept.amount)} USDC`;
  setStatus(method === 'demo'
    ? `The demo payer is signing ${price} on the local chain…`
    : `Waiting for your wallet to sign a payment of ${price} on ${networkName(accept.network)}…`);
  let payload: PaymentPayload;
  try {
    const limit = method === 'demo' ? SERVICE_READ_TIMEOUT_MS : WALLET_TIMEOUT_MS;
    payload = await within(SIGNERS[method](quote.paymentRequired, accept), limit, method === 'demo' ? 'the demo payer' : 'the wallet');
  } catch (error) {
    setStatus('');
    if (isTimeout(error)) {
      showProblem(method === 'demo'
        ? `The demo payer did not sign within ${SERVICE_READ_TIMEOUT_MS / 1000} s.`
        : `The wallet did not sign within ${WALLET_TIMEOUT_MS / 60_000} minutes.`,
      `Press the pay button again to retry. ${NOT_CHARGED}`);
      return;
    }
    const words = method === 'demo'
      ? sentence(error instanceof Error ? error.message : 'The demo payer did not sign')
      : walletErrorWords(error);
    showProblem(words, NOT_CHARGED);
    return;
  }

  setStatus('Payment signed. Sending the file and processing it…');
  const headers = paymentHeaders.encodePaymentSignatureHeader(payload);
  let response: Response;
  try {
    onSent();
    response = await sendPaid(quote.operation.path, quote.body, headers);
  } catch (error) {
    setStatus('');
    showProblem(isTimeout(error)
      ? `The service did not answer the paid request within ${PAID_TIMEOUT_MS / 60_000} minutes.`
      : 'The connection to the service broke while the paid request was on its way.',
    'The service charges only after the job succeeds and the answer is sent, so a charge is unlikely; your wallet shows any payment. '
    + 'The signed authorisation expires within 5 minutes.');
    return;
  }

  if (response.ok) {
    await showResult(quote, response);
    // The quote is spent: paying again needs a new quote, so one click can never pay twice.
    state.quote = undefined;
    const again = element('button', { type: 'button', id: 'quote-again' }, 'Get a new price to run it again');
    again.addEventListener('click', () => void requestQuote());
    // The quote box now says it was paid, no longer that nothing was.
    document.getElementById('quote-unpaid')?.remove();
    byId('quote').append(element('p', { class: 'hint', id: 'quote-paid' }, 'This price is paid. ', again));
    setStatus(`Paid ${price}. The result is below.`);
    revealResult();
    return;
  }
  setStatus('');
  if (response.status === 402) {
    let reason = '';
    try {
      const body: unknown = await response.json().catch(() => undefined);
      reason = paymentHeaders.getPaymentRequiredResponse((name) => response.headers.get(name), body).error ?? '';
    } catch {
      reason = '';
    }
    showProblem('The payment was refused.', refusalWords(reason), `${NOT_CHARGED} No work was done.`);
    return;
  }
  const { headline, detail, code } = await describeErrorResponse(response);
  if (code !== undefined && HELD.has(code)) {
    // The transfer may have happened: never say it did not. The same payment still gets the result.
    showProblem(headline, detail,
      'Pay again only with a new price if your wallet shows no payment after a few minutes; '
      + 'the service holds the result for this payment meanwhile.');
    return;
  }
  // Failed or timed-out work is never settled, and every check before payment refuses for free.
  showProblem(headline, detail, `${NOT_CHARGED} The payment was not settled; the signed authorisation was not used.`);
}

// Paying for the quoted job: sign, send the file again with the payment, and show the result or
// say in plain words why nothing was charged.
import type { PaymentPayload } from '@x402/core/types';
import { byId, element } from './dom.js';
import { formatUsdc, sentence } from './format.js';
import { NOT_CHARGED, clearProblem, describeErrorResponse, setStatus, showProblem } from './messages.js';
import { isEvm, isSolana, networkName } from './networks.js';
import { updatePayButtons } from './pay-buttons.js';
import { paymentHeaders } from './payment-headers.js';
import { requestQuote } from './quote.js';
import { discard } from './responses.js';
import { revealResult, showResult } from './result.js';
import { signWithDemoPayer, signWithSolanaWallet, signWithWallet, walletErrorWords } from './signing.js';
import { state } from './state.js';

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
    const response = await fetch(path, { method: 'POST', body, headers });
    if (attempt === HELD_RETRIES || (response.status !== 503 && response.status !== 409)) return response;
    const code = await response.clone().json().then((b: { error?: { code?: string } }) => b.error?.code, () => undefined);
    if (code === undefined || !HELD.has(code)) return response;
    discard(response);
    setStatus('The payment is being confirmed; asking the service again for the result…');
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 5) * 1000));
  }
}

/** wallet: an EIP-1193 wallet on Base; solana: a Wallet Standard wallet on Solana; demo: the dev-mode demo payer on Base. */
export type PayMethod = 'wallet' | 'solana' | 'demo';

const SIGNERS = { wallet: signWithWallet, solana: signWithSolanaWallet, demo: signWithDemoPayer };

export async function pay(method: PayMethod): Promise<void> {
  const quote = state.quote;
  if (!quote || state.busy) return;
  const accept = quote.paymentRequired.accepts.find((a) => (method === 'solana' ? isSolana(a.network) : isEvm(a.network)));
  if (!accept) return;
  state.busy = true;
  updatePayButtons();
  clearProblem();
  const price = `${formatUsdc(accept.amount)} USDC`;
  try {
    setStatus(method === 'demo' ? `The demo payer is signing ${price} on the local chain…` : `Waiting for your wallet to sign a payment of ${price} on ${networkName(accept.network)}…`);
    let payload: PaymentPayload;
    try {
      payload = await SIGNERS[method](quote.paymentRequired, accept);
    } catch (error) {
      setStatus('');
      showProblem(method === 'demo' ? sentence(error instanceof Error ? error.message : 'The demo payer did not sign') : walletErrorWords(error), NOT_CHARGED);
      return;
    }

    setStatus('Payment signed. Sending the file and processing it…');
    const headers = paymentHeaders.encodePaymentSignatureHeader(payload);
    let response: Response;
    try {
      response = await sendPaid(quote.operation.path, quote.body, headers);
    } catch {
      setStatus('');
      showProblem('The connection to the service broke while the paid request was on its way.',
        'The service charges only after the job succeeds and the answer is sent, so a charge is unlikely; your wallet shows any payment. The signed authorisation expires within 5 minutes.');
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
        reason = paymentHeaders.getPaymentRequiredResponse((name) => response.headers.get(name), await response.json().catch(() => undefined)).error ?? '';
      } catch {
        reason = '';
      }
      showProblem('The payment was refused.', refusalWords(reason), `${NOT_CHARGED} No work was done.`);
      return;
    }
    const { headline, detail, code } = await describeErrorResponse(response);
    if (code !== undefined && HELD.has(code)) {
      // The transfer may have happened: never say it did not. The same payment still gets the result.
      showProblem(headline, detail, 'Pay again only with a new price if your wallet shows no payment after a few minutes; the service holds the result for this payment meanwhile.');
      return;
    }
    // Failed or timed-out work is never settled, and every check before payment refuses for free.
    showProblem(headline, detail, `${NOT_CHARGED} The payment was not settled; the signed authorisation was not used.`);
  } finally {
    state.busy = false;
    updatePayButtons();
  }
}

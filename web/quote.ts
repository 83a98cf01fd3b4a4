// The price of the job as the form stands: the service's 402 answer to the unpaid request, shown
// before anything is signed.
import type { PaymentRequired } from '@x402/core/types';
import { byId, element } from './dom.js';
import { clearFieldMarks, dropHeld, hold, markField, mayHold, releaseHeld } from './field-errors.js';
import { currentBody, hasFile } from './form-values.js';
import { formatUsdc, shortAddress } from './format.js';
import { NOT_CHARGED, clearProblem, describeErrorResponse, setStatus, showProblem } from './messages.js';
import { isEvm, isSolana, networkName } from './networks.js';
import { updatePayButtons } from './pay-buttons.js';
import { paymentHeaders } from './payment-headers.js';
import { discard } from './responses.js';
import type { Operation, Quote } from './service-types.js';
import { state } from './state.js';
import { QUOTE_TIMEOUT_MS, isTimeout, timedFetch } from './timeouts.js';

export async function requestQuote(): Promise<void> {
  const op = state.current;
  if (!op || !hasFile()) return;
  const sequence = ++state.quoteSequence;
  state.quote = undefined;
  state.quoting = true;
  state.quoteRefusal = undefined;
  updatePayButtons();
  try {
    await askPrice(op, sequence);
  } finally {
    if (sequence === state.quoteSequence) state.quoting = false;
  }
}

async function askPrice(op: Operation, sequence: number): Promise<void> {
  clearProblem();
  clearFieldMarks();
  dropHeld();
  byId('result-section').hidden = true;
  const quoteBox = byId('quote');
  quoteBox.setAttribute('aria-busy', 'true');
  quoteBox.replaceChildren(element('p', {}, 'Asking the service for the exact price…'));
  setStatus('');
  const body = currentBody(op);
  const noPrice = (headline: string, ...details: string[]) => {
    quoteBox.removeAttribute('aria-busy');
    quoteBox.replaceChildren(element('p', {}, 'No price yet.'));
    state.quoteRefusal = headline;
    showProblem(headline, ...details);
  };
  let response: Response;
  try {
    response = await timedFetch(op.path, { method: 'POST', body }, QUOTE_TIMEOUT_MS);
  } catch (error) {
    if (sequence !== state.quoteSequence) return;
    if (isTimeout(error)) {
      const headline = `The service gave no price within ${QUOTE_TIMEOUT_MS / 1000} s; it may be busy.`;
      noPrice(headline, `Choose the file again to ask once more. ${NOT_CHARGED}`);
    } else {
      noPrice('The service could not be reached.', `Check the connection and choose the file again. ${NOT_CHARGED}`);
    }
    return;
  }
  // Overtaken by a newer quote: this answer is not read.
  if (sequence !== state.quoteSequence) return discard(response);
  quoteBox.removeAttribute('aria-busy');
  if (response.status !== 402) {
    quoteBox.replaceChildren(element('p', {}, 'No price: the service did not accept this request.'));
    if (response.ok) {
      discard(response);
      state.quoteRefusal = 'The service answered without asking for a payment, which this page does not expect.';
      showProblem(state.quoteRefusal, NOT_CHARGED);
      return;
    }
    const { headline, detail, code, field } = await describeErrorResponse(response);
    if (sequence !== state.quoteSequence) return;
    state.quoteRefusal = [headline, detail].filter(Boolean).join(' ');
    const show = () => {
      // The "Show what is missing" button goes away with the text it sits in: a person on it is
      // taken to the field to fix instead of being left nowhere.
      const focusWasHere = quoteBox.contains(document.activeElement);
      quoteBox.replaceChildren(element('p', {}, 'No price: the service did not accept this request.'));
      showProblem(headline, detail, `${NOT_CHARGED} No payment was asked for; fix the file or the options and the price is asked again.`);
      if (code === 'FIELD_INVALID' && field) {
        markField(field, detail || headline);
        if (focusWasHere) document.getElementById(`field-${field}`)?.focus();
      }
    };
    if (code === 'FIELD_INVALID' && mayHold(field)) {
      // An option the person has not reached yet: say so quietly and wait (see field-errors.ts).
      const why = element('button', { type: 'button', id: 'quote-why' }, 'Show what is missing');
      why.addEventListener('click', releaseHeld);
      quoteBox.replaceChildren(element('p', { id: 'quote-pending' }, 'No price yet: fill in the options above; the price is asked again as you do. ', why));
      hold(show);
      return;
    }
    show();
    return;
  }
  let paymentRequired: PaymentRequired;
  try {
    const json: unknown = await response.json().catch(() => undefined);
    paymentRequired = paymentHeaders.getPaymentRequiredResponse((name) => response.headers.get(name), json);
  } catch {
    if (sequence !== state.quoteSequence) return;
    noPrice('The price sent by the service could not be read.', `Choose the file again to ask once more. ${NOT_CHARGED}`);
    return;
  }
  // A newer quote was asked for while this one was read: that one wins.
  if (sequence !== state.quoteSequence) return;
  state.quote = { operation: op, body, paymentRequired };
  showQuote(state.quote);
  updatePayButtons();
}

function showQuote(quote: Quote): void {
  const accepts = quote.paymentRequired.accepts;
  const amount = accepts[0]?.amount ?? '0';
  const sameEverywhere = accepts.every((a) => a.amount === amount);
  const perPage = quote.operation.item.metadata.pricingModel === 'per-page';
  const rate = quote.operation.item.accepts[0]?.amount;
  const pages = perPage && rate && BigInt(rate) > 0n ? BigInt(amount) / BigInt(rate) : undefined;
  const chains = accepts.map((a) => element('li', { 'data-network': a.network },
    // The CAIP-2 id is one long word (Solana's is 40 characters): as code it may wrap anywhere.
    `${networkName(a.network)} (`, element('code', {}, a.network), `): ${formatUsdc(a.amount)} USDC to `, element('code', { title: a.payTo }, shortAddress(a.payTo)),
    isEvm(a.network) || (isSolana(a.network) && state.solanaRelay) ? ' — this page pays here' : ' — pay with an x402 client for this chain'));
  byId('quote').replaceChildren(element('div', { class: 'quote' },
    element('p', { class: 'amount', id: 'quote-amount' }, `${formatUsdc(amount)} USD`),
    element('p', { id: 'quote-usdc' },
      `Exactly ${formatUsdc(amount)} USDC (${amount} in USDC's smallest unit)`,
      pages !== undefined ? `, for ${pages} ${pages === 1n ? 'page' : 'pages'} at ${formatUsdc(rate!)} USD per page` : '',
      sameEverywhere ? '.' : '; the amount differs by chain, see below.'),
    element('p', {}, 'Chains offered:'),
    element('ul', { id: 'quote-chains' }, ...chains),
    element('p', { class: 'hint', id: 'quote-unpaid' }, 'Nothing has been signed or paid. You are charged only if the job succeeds.')));
}

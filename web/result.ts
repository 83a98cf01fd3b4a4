// The paid job's answer: a download link, the image or text itself, and the payment receipt.
import type { SettleResponse } from '@x402/core/types';
import { byId, element, present } from './dom.js';
import { formatUsdc } from './format.js';
import { isEvm, networkName } from './networks.js';
import { paymentHeaders } from './payment-headers.js';
import type { Quote } from './service-types.js';
import { state } from './state.js';

/** The downloaded file's extension for each media type the service answers with. */
const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'image/avif': 'avif', 'application/pdf': 'pdf',
  'application/zip': 'zip', 'application/json': 'json', 'text/markdown': 'md',
};

export async function showResult(quote: Quote, response: Response): Promise<void> {
  let receipt: SettleResponse | undefined;
  try {
    receipt = paymentHeaders.getPaymentSettleResponse((name) => response.headers.get(name));
  } catch {
    receipt = undefined;
  }
  const mediaType = (response.headers.get('content-type') ?? 'application/octet-stream').split(';')[0].trim();
  const blob = await response.blob();
  if (state.resultUrl) URL.revokeObjectURL(state.resultUrl);
  state.resultUrl = URL.createObjectURL(blob);
  const fileName = `${quote.operation.name.replace(/\//g, '-')}-result.${EXTENSIONS[mediaType] ?? 'bin'}`;
  const kb = blob.size < 1024 ? `${blob.size} bytes` : `${(blob.size / 1024).toFixed(1)} KB`;

  const view: Array<HTMLElement | undefined> = [];
  if (mediaType.startsWith('image/')) {
    view.push(element('img', { src: state.resultUrl, alt: `The result image (${mediaType})`, class: 'result-image', id: 'result-image' }));
  } else if (mediaType === 'application/json' || mediaType === 'text/markdown' || mediaType.startsWith('text/')) {
    let text = await blob.text();
    if (mediaType === 'application/json') {
      try { text = JSON.stringify(JSON.parse(text), null, 2); } catch { /* shown as sent */ }
    }
    view.push(element('pre', { id: 'result-text', tabindex: '0', 'aria-label': `The result (${mediaType})` }, text));
  }

  // What the operation reports beside its file (the redactions made, what was removed), as sent.
  const reported = quote.operation.item.metadata.report;
  const reportText = reported ? response.headers.get(reported.header) : null;
  if (reported && reportText) {
    view.unshift(element('p', { id: 'result-report' }, `${reported.header}: `, element('code', {}, reportText)));
  }

  const { accepts } = quote.paymentRequired;
  const paid = accepts.find((a) => a.network === receipt?.network) ?? accepts.find((a) => isEvm(a.network));
  // The receipt comes before the preview: a tall image must not push it out of sight.
  byId('result').replaceChildren(
    element('p', {}, element('a', { href: state.resultUrl, download: fileName, id: 'result-download' }, `Download ${fileName}`), ` (${mediaType}, ${kb})`),
    receipt ? element('p', { class: 'receipt', id: 'receipt' },
      `Paid ${paid ? `${formatUsdc(paid.amount)} USDC ` : ''}on ${networkName(receipt.network)}. Transaction: `,
      element('code', { id: 'receipt-transaction' }, receipt.transaction),
      ...(receipt.payer ? [' from ', element('code', {}, receipt.payer)] : []), '.') : element('p', { id: 'receipt' }, 'The service sent no receipt.'),
    ...present(...view),
  );
  byId('result-section').hidden = false;
}

/**
 * Brings the result to the top of the window and moves the focus to its heading, so a screen
 * reader announces it. Called once everything above it has its final size (the price box grows
 * when it says it was paid), or the result would be pushed below the fold again on a phone.
 */
export function revealResult(): void {
  const heading = byId('result-heading');
  heading.focus({ preventScroll: true });
  heading.scrollIntoView({ block: 'start' });
}

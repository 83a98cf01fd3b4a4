// The x402 headers of an HTTP route: the payment a request carries, and a 402 with its header.
import type { Request, ResponseToolkit } from '@hapi/hapi';
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ServiceError } from '../../core/errors.js';

// A quote is shared and frozen (see the gate), so its header is encoded once.
const encodedQuotes = new WeakMap<PaymentRequired, string>();

function paymentRequiredHeader(paymentRequired: PaymentRequired): string {
  let header = encodedQuotes.get(paymentRequired);
  if (header === undefined) {
    header = encodePaymentRequiredHeader(paymentRequired);
    if (Object.isFrozen(paymentRequired)) encodedQuotes.set(paymentRequired, header);
  }
  return header;
}

export function readPayment(request: Request): PaymentPayload | undefined {
  const header = request.headers['payment-signature'] ?? request.headers['x-payment'];
  if (header === undefined) return undefined;
  try {
    return decodePaymentSignatureHeader(String(Array.isArray(header) ? header[0] : header));
  } catch {
    throw new ServiceError('PAYMENT_INVALID', 'the PAYMENT-SIGNATURE header is not base64-encoded x402 PaymentPayload JSON');
  }
}

export function quoteResponse(h: ResponseToolkit, paymentRequired: PaymentRequired) {
  return h.response(paymentRequired)
    .code(402)
    .header('payment-required', paymentRequiredHeader(paymentRequired))
    .header('cache-control', 'no-store');
}

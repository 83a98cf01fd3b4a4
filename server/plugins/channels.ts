// GET /v1/channels/refund: where a buyer takes back what is left in its payment channel, as x402's
// batch-settlement client does it (`refund(url)`): a GET without payment is answered 402 with the
// channel's terms, the GET with a refund payload returns the rest of the deposit on the chain.
import type { Plugin } from '@hapi/hapi';
import { encodePaymentResponseHeader } from '@x402/core/http';
import { operations } from '../../operations/index.js';
import { priceRange } from '../payment/pricing.js';
import { CHANNEL_REFUND_PATH } from '../../core/protocol.js';
import type { App } from '../app.js';
import { quoteResponse, readPayment } from './x402-http.js';

export const channelsPlugin: Plugin<{ app: App }> = {
  name: 'channels',
  register(server, { app }) {
    // A refund is priced at nothing; its terms are quoted at the cheapest call, which its payload echoes.
    const amount = operations.map((op) => priceRange(op).min).reduce((a, b) => (b < a ? b : a));
    const resource = {
      key: 'http channel-refund', url: `${app.config.baseUrl}${CHANNEL_REFUND_PATH}`, mimeType: 'application/json',
      description: 'Returns what is left in your payment channel (x402 batch-settlement) to your wallet; nothing is charged.',
    };
    server.route({
      method: 'GET',
      path: CHANNEL_REFUND_PATH,
      options: { description: 'Refund the rest of a payment channel (x402 batch-settlement)' },
      handler: async (request, h) => {
        request.plugins.paydoc = { operation: 'channel-refund' };
        const outcome = await app.gate.refund(amount, resource, readPayment(request));
        if (outcome.kind === 'payment-required') return quoteResponse(h, outcome.paymentRequired);
        const { receipt } = outcome;
        return h.response({ refund: { network: receipt.network, transaction: receipt.transaction, amount: receipt.amount ?? '', channelState: (receipt.extra as Record<string, unknown> | undefined)?.channelState } })
          .header('payment-response', encodePaymentResponseHeader(receipt))
          .header('cache-control', 'no-store');
      },
    });
  },
};

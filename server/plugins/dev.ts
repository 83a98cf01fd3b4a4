// Dev mode only (PAYMENTS=dev): the routes under /dev/, for the web page's demo payer on the
// local Base chain, signed here so that its key never reaches the browser. server/index.ts
// imports this plugin only in dev mode, so a live service has neither the routes nor this code
// loaded (a live service answers 404 for /dev/*: test/system/production-install.test.ts, test/system/web.test.ts).
import type { Plugin, Server } from '@hapi/hapi';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { fail } from '../../core/errors.js';
import { createPayer } from '../../client/payer.js';
import type { DevEvmChain } from '../payment/setup.js';
import type { App } from '../app.js';

export interface DevSignRequest { paymentRequired: PaymentRequired }

export const devPlugin: Plugin<{ app: App }> = {
  name: 'dev',
  register(server, { app }) {
    if (app.config.payments !== 'dev') throw new Error('the /dev/ routes exist only in dev mode (PAYMENTS=dev)');
    if (app.rigs.evm) registerDevPayer(server, app, app.rigs.evm);
  },
};

/**
 * Dev mode only: the demo payer of the local Base chain, for a newcomer without a wallet. Same
 * origin only (no CORS), and it signs nothing but this service's own Base requirements.
 */
function registerDevPayer(server: Server, app: App, rig: DevEvmChain): void {
  server.route({
    method: 'GET',
    path: '/dev/payer',
    options: { cors: false, description: 'Dev mode: the demo payer on the local Base chain' },
    handler: async (_request, h) => h.response({
      network: rig.network,
      address: rig.payerAddress,
      balance: (await rig.balanceOf(rig.payerAddress)).toString(),
    }).header('cache-control', 'no-store'),
  });

  server.route({
    method: 'POST',
    path: '/dev/sign',
    options: {
      cors: false,
      description: 'Dev mode: the demo payer signs a quote of this service on the local Base chain',
      payload: { parse: true, allow: ['application/json'], maxBytes: 64 * 1024 },
    },
    handler: async (request, h) => {
      const paymentRequired = (request.payload as Partial<DevSignRequest> | null)?.paymentRequired;
      if (!paymentRequired || paymentRequired.x402Version !== 2 || !Array.isArray(paymentRequired.accepts)) {
        fail('FIELD_INVALID', 'send { "paymentRequired": <the x402 v2 PaymentRequired of a 402 from this service> }', { field: 'paymentRequired' });
      }
      const chain = app.gate.chains.find((c) => c.network === rig.network);
      const same = (a: string | undefined, b: string | undefined) =>
        a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
      const accept = paymentRequired.accepts.find((a: PaymentRequirements) =>
        chain !== undefined && a.scheme === 'exact' && a.network === chain.network && same(a.payTo, chain.payTo) && same(a.asset, chain.asset));
      if (!accept) {
        fail('FIELD_INVALID', `the demo payer signs only this service's own requirements on ${rig.network}`, { field: 'paymentRequired' });
      }
      const payer = await createPayer({ chain: 'base', evmKey: rig.payerKey });
      const payload = await payer.createPaymentPayload({ ...paymentRequired, accepts: [accept] });
      return h.response(payload).header('cache-control', 'no-store');
    },
  });
}

// The payer moved to the client layer (client/payer.ts). Still imported from here by files being
// edited elsewhere (test/scale.test.ts, bench/chaos.ts); remove once they import client/payer.js.
export { createPayer, type PayChain, type PayerOptions } from '../../client/payer.js';

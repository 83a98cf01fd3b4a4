// The Solana payer moved to the client layer (client/svm-payer.ts). Still imported from here by
// test/scale.test.ts (being edited elsewhere); remove once it imports client/svm-payer.js.
export { createSvmClientSigner, registerSvmPayer } from '../../client/svm-payer.js';

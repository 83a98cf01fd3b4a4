// The Solana leg of the offline payment rig, driven by the unmodified x402 client and the
// facilitator's HTTP API, as the service and its users will drive it.
import { createHash } from 'node:crypto';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { generateKeyPairSigner } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { decodeTransactionFromPayload, transactionMessageHash } from '@x402/svm';
import {
  SOLANA_NETWORK,
  SOLANA_USDC_MINT,
  createSvmFacilitator,
  serveFacilitator,
  startSvmRig,
  type FacilitatorServer,
  type SvmRig,
} from '../../devchains/index.js';
import { createSvmClientSigner, registerSvmPayer } from '../../client/svm-payer.js';
import { solanaPaymentId } from '../../server/payment/svm-payment-id.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PRICE = 5000n;

async function rpcCall(url: string, method: string, params: unknown[]): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: any; error?: { code: number; message: string } };
}

const transactionBytes = (payload: PaymentPayload) => Buffer.from((payload.payload as { transaction: string }).transaction, 'base64');

describe('Solana payment rig (LiteSVM JSON-RPC + mainnet USDC mint + local facilitator)', () => {
  let rig: SvmRig;
  let facilitator: HTTPFacilitatorClient;
  let requirements: PaymentRequirements;

  const pay = async (signer: Parameters<typeof registerSvmPayer>[1]): Promise<PaymentPayload> => {
    const client = registerSvmPayer(new x402Client(), signer, rig.rpcUrl);
    return client.createPaymentPayload({
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/v1/image/compress', description: 'test', mimeType: 'image/png' },
      accepts: [requirements],
    });
  };
  const payAsDevPayer = async () => pay(await createSvmClientSigner(rig.payerSecretKey));

  before(async () => {
    rig = await startSvmRig();
    facilitator = new HTTPFacilitatorClient({ url: rig.facilitatorUrl });
    const supported = await facilitator.getSupported();
    const kind = supported.kinds.find((k) => k.network === SOLANA_NETWORK && k.scheme === 'exact');
    requirements = {
      scheme: 'exact',
      network: SOLANA_NETWORK,
      amount: PRICE.toString(),
      asset: rig.asset,
      payTo: rig.payTo,
      maxTimeoutSeconds: 300,
      extra: { feePayer: kind?.extra?.feePayer as string },
    };
  });

  after(async () => {
    await rig?.stop();
  });

  it('answers as Solana mainnet: the USDC mint at its mainnet address, 6 decimals, the payer funded', async () => {
    expect(rig.network).to.equal('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp');
    expect(rig.asset).to.equal('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
    expect(requirements.extra.feePayer).to.equal(rig.feePayerAddress);

    const mint = await rpcCall(rig.rpcUrl, 'getAccountInfo', [SOLANA_USDC_MINT, { encoding: 'jsonParsed' }]);
    expect(mint.result.value.owner).to.equal('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
    expect(mint.result.value.data.parsed.type).to.equal('mint');
    expect(mint.result.value.data.parsed.info.decimals).to.equal(6);

    expect(await rig.balanceOf(rig.payerAddress)).to.equal(1_000_000_000n);
    expect(await rig.balanceOf(rig.payTo)).to.equal(0n);
    expect((await createSvmClientSigner(rig.payerSecretKey)).address).to.equal(rig.payerAddress);
    const lamports = await rpcCall(rig.rpcUrl, 'getBalance', [rig.feePayerAddress]);
    expect(Number(lamports.result.value)).to.be.above(1_000_000_000);
  });

  it('settles a payment from the standard client through the facilitator: balances move by exactly the price', async () => {
    const payerBefore = await rig.balanceOf(rig.payerAddress);
    const payToBefore = await rig.balanceOf(rig.payTo);
    const blockhashCalls = rig.rpcCalls.getLatestBlockhash ?? 0;

    const payload = await payAsDevPayer();
    // The client asked the local chain for its blockhash, not the public mainnet RPC.
    expect(rig.rpcCalls.getLatestBlockhash).to.equal(blockhashCalls + 1);

    const verified = await facilitator.verify(payload, requirements);
    expect(verified).to.include({ isValid: true, payer: rig.payerAddress });
    const settled = await facilitator.settle(payload, requirements);
    expect(settled).to.include({ success: true, network: SOLANA_NETWORK, payer: rig.payerAddress });
    expect(settled.transaction).to.match(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);

    expect(await rig.balanceOf(rig.payerAddress)).to.equal(payerBefore - PRICE);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToBefore + PRICE);

    const status = await rpcCall(rig.rpcUrl, 'getSignatureStatuses', [[settled.transaction]]);
    expect(status.result.value[0]).to.include({ err: null, confirmationStatus: 'finalized' });
    // The landed transaction, as an explorer would read it: the payTo's token account received the price.
    const landed = await rpcCall(rig.rpcUrl, 'getTransaction', [settled.transaction, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }]);
    const credited = landed.result.meta.postTokenBalances.find((entry: { owner: string }) => entry.owner === rig.payTo);
    expect(credited).to.include({ mint: SOLANA_USDC_MINT });
    const payToTokenAccount = landed.result.transaction.message.accountKeys[credited.accountIndex].pubkey;
    const tokenBalance = await rpcCall(rig.rpcUrl, 'getTokenAccountBalance', [payToTokenAccount]);
    expect(tokenBalance.result.value).to.include({ amount: (payToBefore + PRICE).toString(), decimals: 6 });
    // The payer's transactions, newest first, as a real node lists them; none for an address it never touched.
    const bySigner = await rpcCall(rig.rpcUrl, 'getSignaturesForAddress', [rig.payerAddress, { limit: 1 }]);
    expect(bySigner.result).to.equal([{ signature: settled.transaction, slot: landed.result.slot, err: null, memo: null, blockTime: null, confirmationStatus: 'finalized' }]);
    expect((await rpcCall(rig.rpcUrl, 'getSignaturesForAddress', [rig.payerAddress, { before: settled.transaction, limit: 1000 }])).result.map((entry: { signature: string }) => entry.signature)).to.not.include(settled.transaction);
    expect((await rpcCall(rig.rpcUrl, 'getSignaturesForAddress', ['11111111111111111111111111111112'])).result).to.equal([]);
    expect((await rpcCall(rig.rpcUrl, 'getSignaturesForAddress', [rig.payerAddress, { limit: 1001 }])).error).to.include({ code: -32602 });
  });

  it('does not settle a replayed payload twice, in the same facilitator, in a fresh one, or after the blockhash expired', async () => {
    const payload = await payAsDevPayer();
    const first = await facilitator.settle(payload, requirements);
    expect(first.success).to.be.true();
    const payerAfterFirst = await rig.balanceOf(rig.payerAddress);
    const payToAfterFirst = await rig.balanceOf(rig.payTo);
    const sends = rig.rpcCalls.sendTransaction;

    // Same facilitator process: verify simulates, and the chain's status cache answers that the
    // message already ran; settle is stopped earlier by the facilitator's 120 s settlement cache.
    const reverified = await facilitator.verify(payload, requirements);
    expect(reverified).to.include({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed' });
    expect(reverified.invalidMessage).to.contain('AlreadyProcessed');
    const resettled = await facilitator.settle(payload, requirements);
    expect(resettled).to.include({ success: false, errorReason: 'duplicate_settlement', transaction: '' });

    // A fresh facilitator process (a restart, another replica) has no settlement cache: only
    // the chain refuses, at simulation, before anything is sent.
    const fresh = await createSvmFacilitator(rig.rpcUrl);
    const freshServer: FacilitatorServer = await serveFacilitator(fresh.facilitator);
    try {
      const freshClient = new HTTPFacilitatorClient({ url: freshServer.url });
      const freshSettle = await freshClient.settle(payload, requirements);
      expect(freshSettle).to.include({ success: false, errorReason: 'invalid_exact_svm_transaction_simulation_failed', transaction: '' });

      // After the blockhash expired the transaction can never land again, whoever sends it.
      rig.expireBlockhash();
      const expiredVerify = await facilitator.verify(payload, requirements);
      expect(expiredVerify).to.include({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed' });
      expect(expiredVerify.invalidMessage).to.contain('BlockhashNotFound');
      expect(await facilitator.settle(payload, requirements)).to.include({ success: false, errorReason: 'duplicate_settlement' });
      expect(await freshClient.settle(payload, requirements)).to.include({ success: false, errorReason: 'invalid_exact_svm_transaction_simulation_failed' });
    } finally {
      await freshServer.stop();
    }

    expect(rig.rpcCalls.sendTransaction).to.equal(sends);
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(payerAfterFirst);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToAfterFirst);

    // A new payment, built on the new blockhash, still settles.
    const next = await payAsDevPayer();
    expect((await facilitator.settle(next, requirements)).success).to.be.true();
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToAfterFirst + PRICE);
  });

  it('keeps the first status when the same signed transaction is sent again, as a real cluster does', async () => {
    const payload = await payAsDevPayer();
    const settled = await facilitator.settle(payload, requirements);
    expect(settled.success).to.be.true();
    const payToAfter = await rig.balanceOf(rig.payTo);

    const landed = await rpcCall(rig.rpcUrl, 'getTransaction', [settled.transaction, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]);
    const [signedWire] = landed.result.transaction as [string, string];
    const statusBefore = (await rpcCall(rig.rpcUrl, 'getSignatureStatuses', [[settled.transaction]])).result.value[0];

    const skipped = await rpcCall(rig.rpcUrl, 'sendTransaction', [signedWire, { encoding: 'base64', skipPreflight: true }]);
    expect(skipped.result).to.equal(settled.transaction);
    const preflighted = await rpcCall(rig.rpcUrl, 'sendTransaction', [signedWire, { encoding: 'base64' }]);
    expect(preflighted.error).to.include({ code: -32002, message: 'Transaction simulation failed: This transaction has already been processed' });

    const statusAfter = (await rpcCall(rig.rpcUrl, 'getSignatureStatuses', [[settled.transaction]])).result.value[0];
    expect(statusAfter).to.equal(statusBefore);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToAfter);
  });

  it('refuses a payer without USDC, and one short of the price, without moving anything', async () => {
    const payToBefore = await rig.balanceOf(rig.payTo);
    const sends = rig.rpcCalls.sendTransaction;

    const stranger = await generateKeyPairSigner(); // no token account at all
    const strangerPayload = await pay(stranger);
    const strangerVerify = await facilitator.verify(strangerPayload, requirements);
    expect(strangerVerify).to.include({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed', payer: stranger.address });
    expect(await facilitator.settle(strangerPayload, requirements)).to.include({ success: false, errorReason: 'invalid_exact_svm_transaction_simulation_failed' });

    const short = await generateKeyPairSigner();
    await rig.setBalance(short.address, PRICE - 1n);
    const shortPayload = await pay(short);
    const shortVerify = await facilitator.verify(shortPayload, requirements);
    expect(shortVerify).to.include({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed' });
    // SPL Token's error 1 is "insufficient funds".
    expect(shortVerify.invalidMessage).to.contain('"Custom":"1"');
    expect(await facilitator.settle(shortPayload, requirements)).to.include({ success: false });

    expect(rig.rpcCalls.sendTransaction).to.equal(sends);
    expect(await rig.balanceOf(short.address)).to.equal(PRICE - 1n);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToBefore);
  });

  it('starts with an unfunded dev payer when asked, and that payer is refused', async () => {
    const poorRig = await startSvmRig({ payerBalance: 0n });
    try {
      expect(await poorRig.balanceOf(poorRig.payerAddress)).to.equal(0n);
      const client = registerSvmPayer(new x402Client(), await createSvmClientSigner(poorRig.payerSecretKey), poorRig.rpcUrl);
      const poorRequirements = { ...requirements, extra: { feePayer: poorRig.feePayerAddress } };
      const payload = await client.createPaymentPayload({
        x402Version: 2,
        resource: { url: 'http://127.0.0.1/v1/image/compress', description: 'test', mimeType: 'image/png' },
        accepts: [poorRequirements],
      });
      const poorFacilitator = new HTTPFacilitatorClient({ url: poorRig.facilitatorUrl });
      expect(await poorFacilitator.settle(payload, poorRequirements)).to.include({ success: false, errorReason: 'invalid_exact_svm_transaction_simulation_failed' });
      expect(await poorRig.balanceOf(poorRig.payTo)).to.equal(0n);
    } finally {
      await poorRig.stop();
    }
  });

  it('solanaPaymentId names the payment by its message: stable through co-signing, distinct per payment', async () => {
    const payload = await payAsDevPayer();
    const id = solanaPaymentId(payload);
    expect(id).to.exist();
    // The same key @x402/svm's facilitator uses for its settlement cache.
    expect(id).to.equal(transactionMessageHash(decodeTransactionFromPayload(payload.payload as { transaction: string })));

    // The first signature slot belongs to the fee payer and is still empty in the client's payload.
    const wire = transactionBytes(payload);
    expect(wire[0]).to.equal(2);
    expect(wire.subarray(1, 65).every((byte) => byte === 0)).to.be.true();

    // Tampering with signatures does not make a new payment.
    const tampered = Buffer.from(wire);
    tampered.fill(7, 1, 129);
    expect(solanaPaymentId({ payload: { transaction: tampered.toString('base64') } })).to.equal(id);

    // After settlement, the fully signed transaction on chain still has the same id.
    const settled = await facilitator.settle(payload, requirements);
    expect(settled.success).to.be.true();
    const landed = await rpcCall(rig.rpcUrl, 'getTransaction', [settled.transaction, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]);
    expect(solanaPaymentId({ payload: { transaction: landed.result.transaction[0] } })).to.equal(id);

    // Two payments for the same requirements differ (the client adds a random memo nonce).
    expect(solanaPaymentId(await payAsDevPayer())).to.not.equal(id);
  });
});

describe('solanaPaymentId on malformed payloads', () => {
  it('returns undefined when there is no decodable transaction', () => {
    expect(solanaPaymentId({ payload: {} })).to.be.undefined();
    expect(solanaPaymentId({ payload: { transaction: 42 } as never })).to.be.undefined();
    expect(solanaPaymentId({ payload: { transaction: '' } })).to.be.undefined();
    expect(solanaPaymentId({ payload: { transaction: 'not base64!' } })).to.be.undefined();
    // Zero signatures.
    expect(solanaPaymentId({ payload: { transaction: Buffer.alloc(200).toString('base64') } })).to.be.undefined();
    // One signature and too short a message.
    expect(solanaPaymentId({ payload: { transaction: Buffer.concat([Buffer.from([1]), Buffer.alloc(64), Buffer.alloc(10)]).toString('base64') } })).to.be.undefined();
  });

  it('hashes exactly the bytes after the signatures', () => {
    const message = Buffer.alloc(100, 3);
    const wire = Buffer.concat([Buffer.from([1]), Buffer.alloc(64, 9), message]);
    expect(solanaPaymentId({ payload: { transaction: wire.toString('base64') } })).to.equal(createHash('sha256').update(message).digest('base64'));
  });
});

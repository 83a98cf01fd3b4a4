// The offline payment rig (devchains/): Base on anvil with the test USDC, Solana on LiteSVM with
// the mainnet USDC mint, each with its local facilitator, driven by the unmodified x402 clients
// and the facilitator's HTTP API, as the service and its users will drive it. What both chains
// promise runs once per chain; what only one has (EIP-3009's authorizations, Multicall3, forced
// reverts; Solana's status cache, blockhash expiry and payment ids) runs on that chain.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { generateKeyPairSigner } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { decodeTransactionFromPayload, transactionMessageHash } from '@x402/svm';
import { createPublicClient, erc20Abi, http, parseAbi, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  BASE_USDC_ADDRESS,
  MULTICALL3_ADDRESS,
  SOLANA_NETWORK,
  SOLANA_USDC_MINT,
  createSvmFacilitator,
  revertNextSettlement,
  serveFacilitator,
  startEvmRig,
  startSvmRig,
  type EvmRig,
  type FacilitatorServer,
  type SvmRig,
} from '../../devchains/index.js';
import { createSvmClientSigner, registerSvmPayer } from '../../client/svm-payer.js';
import { solanaPaymentId } from '../../server/payment/svm-payment-id.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PRICE = 5000n;

/** What the shared cases use of a started rig; EvmRig and SvmRig have it and more. */
interface Rig {
  network: `${string}:${string}`;
  rpcUrl: string;
  facilitatorUrl: string;
  payTo: string;
  payerAddress: string;
  balanceOf(address: string): Promise<bigint>;
  stop(): Promise<void>;
}

/** One chain's rig as the shared cases drive it. */
interface RigUnderTest<R extends Rig> {
  name: string;
  start(options: { payerBalance?: bigint }): Promise<R>;
  requirementsOf(rig: R, facilitator: HTTPFacilitatorClient): Promise<PaymentRequirements>;
  /** The address of the key the rig gives its demo payer. */
  payerKeyAddress(rig: R): Promise<string>;
  /** A payment signed by the rig's funded demo payer, with the standard client. */
  pay(rig: R, requirements: PaymentRequirements): Promise<PaymentPayload>;
  /** A payment signed by a new key that holds no USDC. */
  payUnfunded(rig: R, requirements: PaymentRequirements): Promise<{ payload: PaymentPayload; payer: string }>;
  /** How a settled transaction is written in the facilitator's answer. */
  transaction: RegExp;
  /** Whether the chain shows the transaction executed without error. */
  executed(rig: R, transaction: string): Promise<boolean>;
  /** The facilitator's refusals: a payment verified or settled again, and a payer without USDC. */
  refusals: { replayVerify: string; replaySettle: string; unfunded: string };
}

const tokenInfoAbi = parseAbi([
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);

async function rpcCall(
  url: string, method: string, params: unknown[],
): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: any; error?: { code: number; message: string } };
}

const transactionBytes = (payload: PaymentPayload) => Buffer.from((payload.payload as { transaction: string }).transaction, 'base64');

const payEvm = (key: `0x${string}`, requirements: PaymentRequirements): Promise<PaymentPayload> => {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
  return client.createPaymentPayload({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/v1/test', description: 'rig test', mimeType: 'application/octet-stream' },
    accepts: [requirements],
  });
};

type SvmSigner = Parameters<typeof registerSvmPayer>[1];
const paySvm = (rig: SvmRig, signer: SvmSigner, requirements: PaymentRequirements): Promise<PaymentPayload> => {
  const client = registerSvmPayer(new x402Client(), signer, rig.rpcUrl);
  return client.createPaymentPayload({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/v1/image/compress', description: 'test', mimeType: 'image/png' },
    accepts: [requirements],
  });
};

const BASE: RigUnderTest<EvmRig> = {
  name: 'Base payment rig (anvil + test USDC + local facilitator)',
  start: (options) => startEvmRig(options),
  requirementsOf: async (rig) => ({
    scheme: 'exact', network: 'eip155:8453', amount: PRICE.toString(), asset: BASE_USDC_ADDRESS, payTo: rig.payTo,
    maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' },
  }),
  payerKeyAddress: async (rig) => privateKeyToAccount(rig.payerKey).address,
  pay: (rig, requirements) => payEvm(rig.payerKey, requirements),
  payUnfunded: async (_rig, requirements) => {
    const key = generatePrivateKey();
    return { payload: await payEvm(key, requirements), payer: privateKeyToAccount(key).address };
  },
  transaction: /^0x[0-9a-f]{64}$/,
  executed: async (rig, transaction) => {
    const receipt = await createPublicClient({ transport: http(rig.rpcUrl) }).getTransactionReceipt({ hash: transaction as `0x${string}` });
    return receipt.status === 'success';
  },
  // EIP-3009: the authorization's nonce is spent on chain; the balance is read through Multicall3.
  refusals: { replayVerify: 'invalid_exact_evm_nonce_already_used', replaySettle: 'invalid_exact_evm_nonce_already_used', unfunded: 'invalid_exact_evm_insufficient_balance' },
};

const SOLANA: RigUnderTest<SvmRig> = {
  name: 'Solana payment rig (LiteSVM JSON-RPC + mainnet USDC mint + local facilitator)',
  start: (options) => startSvmRig(options),
  requirementsOf: async (rig, facilitator) => {
    const kind = (await facilitator.getSupported()).kinds.find((k) => k.network === SOLANA_NETWORK && k.scheme === 'exact');
    return {
      scheme: 'exact', network: SOLANA_NETWORK, amount: PRICE.toString(), asset: rig.asset, payTo: rig.payTo,
      maxTimeoutSeconds: 300, extra: { feePayer: kind?.extra?.feePayer as string },
    };
  },
  payerKeyAddress: async (rig) => (await createSvmClientSigner(rig.payerSecretKey)).address,
  pay: async (rig, requirements) => paySvm(rig, await createSvmClientSigner(rig.payerSecretKey), requirements),
  payUnfunded: async (rig, requirements) => {
    const stranger = await generateKeyPairSigner(); // no token account at all
    return { payload: await paySvm(rig, stranger, requirements), payer: stranger.address };
  },
  // A transaction signature in base58.
  transaction: /^[1-9A-HJ-NP-Za-km-z]{64,88}$/,
  executed: async (rig, transaction) => {
    const status = (await rpcCall(rig.rpcUrl, 'getSignatureStatuses', [[transaction]])).result.value[0];
    return status?.err === null && status?.confirmationStatus === 'finalized';
  },
  // Verify simulates (the chain's status cache answers AlreadyProcessed); settle is stopped by the
  // facilitator's own settlement cache; a payer without a token account fails simulation.
  refusals: { replayVerify: 'invalid_exact_svm_transaction_simulation_failed', replaySettle: 'duplicate_settlement', unfunded: 'invalid_exact_svm_transaction_simulation_failed' },
};

/** The cases both rigs share, on the rig `at` gives once started. */
function sharedCases<R extends Rig>(
  under: RigUnderTest<R>, at: () => { rig: R; facilitator: HTTPFacilitatorClient; requirements: PaymentRequirements },
): void {
  it('funds the demo payer with 1000 test USDC and leaves payTo empty', async () => {
    const { rig } = at();
    expect(await under.payerKeyAddress(rig)).to.equal(rig.payerAddress);
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(1_000_000_000n);
    expect(await rig.balanceOf(rig.payTo)).to.equal(0n);
  });

  it('verifies and settles a real payment over HTTP, moving exactly the price; the same payment again is refused', async () => {
    const { rig, facilitator, requirements } = at();
    const payerBefore = await rig.balanceOf(rig.payerAddress);
    const payToBefore = await rig.balanceOf(rig.payTo);
    const payload = await under.pay(rig, requirements);

    const verified = await facilitator.verify(payload, requirements);
    expect(verified).to.include({ isValid: true, payer: rig.payerAddress });
    const settled = await facilitator.settle(payload, requirements);
    expect(settled).to.include({ success: true, network: rig.network, payer: rig.payerAddress });
    expect(settled.transaction).to.match(under.transaction);
    expect(await under.executed(rig, settled.transaction)).to.be.true();
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(payerBefore - PRICE);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToBefore + PRICE);

    expect(await facilitator.verify(payload, requirements)).to.include({ isValid: false, invalidReason: under.refusals.replayVerify });
    expect(await facilitator.settle(payload, requirements)).to.include({ success: false, errorReason: under.refusals.replaySettle });
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(payerBefore - PRICE);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToBefore + PRICE);
  });

  it('refuses a payer without USDC at verify and at settle, moving nothing', async () => {
    const { rig, facilitator, requirements } = at();
    const payToBefore = await rig.balanceOf(rig.payTo);
    const { payload, payer } = await under.payUnfunded(rig, requirements);
    expect(await facilitator.verify(payload, requirements)).to.include({ isValid: false, invalidReason: under.refusals.unfunded, payer });
    expect(await facilitator.settle(payload, requirements)).to.include({ success: false, errorReason: under.refusals.unfunded });
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToBefore);
  });
}

for (const under of [BASE, SOLANA] as RigUnderTest<Rig>[]) {
  describe(`${under.name.split(' (')[0]} lifecycle`, () => {
    it('starts with the payer balance asked for, and stops the chain and the facilitator (a second stop is harmless)', async () => {
      const rig = await under.start({ payerBalance: 42n });
      expect(await rig.balanceOf(rig.payerAddress)).to.equal(42n);
      await rig.stop();
      await rig.stop();
      const rpcDown = await fetch(rig.rpcUrl, { method: 'POST', body: '{}' }).then(() => false, () => true);
      const facilitatorDown = await fetch(`${rig.facilitatorUrl}/supported`).then(() => false, () => true);
      expect(rpcDown).to.be.true();
      expect(facilitatorDown).to.be.true();
    });
  });
}

describe(BASE.name, () => {
  let rig: EvmRig;
  let chain: PublicClient;
  let facilitator: HTTPFacilitatorClient;
  let requirements: PaymentRequirements;
  const pay = (key: `0x${string}`) => payEvm(key, requirements);
  const authorizationOf = (payload: PaymentPayload) =>
    (payload.payload as { authorization: { from: `0x${string}`; nonce: `0x${string}` } }).authorization;

  before(async () => {
    rig = await startEvmRig();
    chain = createPublicClient({ transport: http(rig.rpcUrl) });
    facilitator = new HTTPFacilitatorClient({ url: rig.facilitatorUrl });
    requirements = await BASE.requirementsOf(rig, facilitator);
  });

  after(async () => {
    await rig?.stop();
  });

  sharedCases(BASE, () => ({ rig, facilitator, requirements }));

  it('answers as Base mainnet with USDC at its canonical address and Multicall3 in place', async () => {
    expect(await chain.getChainId()).to.equal(8453);
    expect(rig.asset).to.equal(BASE_USDC_ADDRESS);
    const read = <T>(functionName: string) =>
      chain.readContract({ address: BASE_USDC_ADDRESS, abi: [...erc20Abi, ...tokenInfoAbi], functionName } as never) as Promise<T>;
    expect(await read<string>('name')).to.equal('USD Coin');
    expect(await read<string>('version')).to.equal('2');
    expect(await read<number>('decimals')).to.equal(6);
    expect(await read<string>('symbol')).to.equal('USDC');
    const ethBalance = await chain.readContract({
      address: MULTICALL3_ADDRESS,
      abi: parseAbi(['function getEthBalance(address account) view returns (uint256)']),
      functionName: 'getEthBalance',
      args: [rig.payTo],
    });
    expect(ethBalance).to.equal(await chain.getBalance({ address: rig.payTo }));
    expect(ethBalance > 0n).to.be.true();
  });

  it('lists exact on eip155:8453 in /supported, signed by anvil dev account #0', async () => {
    const supported = await facilitator.getSupported();
    expect(supported.kinds.some((kind) => kind.x402Version === 2 && kind.scheme === 'exact' && kind.network === 'eip155:8453')).to.be.true();
    expect(Object.values(supported.signers).flat()).to.include('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  });

  it('a settled payment spends its EIP-3009 authorization on chain', async () => {
    const payload = await pay(rig.payerKey);
    expect((await facilitator.settle(payload, requirements)).success).to.be.true();
    const { from, nonce } = authorizationOf(payload);
    expect(await chain.readContract({ address: BASE_USDC_ADDRESS, abi: tokenInfoAbi, functionName: 'authorizationState', args: [from, nonce] })).to.be.true();
  });

  it('mints to any address', async () => {
    const holder = privateKeyToAccount(generatePrivateKey()).address;
    await rig.mint(holder, 1234n);
    expect(await rig.balanceOf(holder)).to.equal(1234n);
  });

  it('revertNextSettlement makes exactly one settlement revert on chain with no balance change', async () => {
    const payerBefore = await rig.balanceOf(rig.payerAddress);
    const payToBefore = await rig.balanceOf(rig.payTo);
    const payload = await pay(rig.payerKey);
    expect((await facilitator.verify(payload, requirements)).isValid).to.be.true();

    revertNextSettlement(rig);
    const failed = await facilitator.settle(payload, requirements);
    expect(failed.success).to.be.false();
    expect(failed.errorReason).to.equal('invalid_exact_evm_transaction_failed');
    const receipt = await chain.getTransactionReceipt({ hash: failed.transaction as `0x${string}` });
    expect(receipt.status).to.equal('reverted');
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(payerBefore);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToBefore);

    // The reverted transaction did not use the authorization, and the switch is off again.
    const retried = await facilitator.settle(payload, requirements);
    expect(retried.success).to.be.true();
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(payerBefore - PRICE);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToBefore + PRICE);
  });

  it('honours the payTo it is started with', async () => {
    const payTo = privateKeyToAccount(generatePrivateKey()).address;
    const own = await startEvmRig({ payTo });
    try {
      expect(own.payTo).to.equal(payTo);
      expect(await own.balanceOf(payTo)).to.equal(0n);
    } finally {
      await own.stop();
    }
  });
});

describe(SOLANA.name, () => {
  let rig: SvmRig;
  let facilitator: HTTPFacilitatorClient;
  let requirements: PaymentRequirements;
  const pay = (signer: Parameters<typeof registerSvmPayer>[1]) => paySvm(rig, signer, requirements);
  const payAsDevPayer = () => SOLANA.pay(rig, requirements);

  before(async () => {
    rig = await startSvmRig();
    facilitator = new HTTPFacilitatorClient({ url: rig.facilitatorUrl });
    requirements = await SOLANA.requirementsOf(rig, facilitator);
  });

  after(async () => {
    await rig?.stop();
  });

  sharedCases(SOLANA, () => ({ rig, facilitator, requirements }));

  it('answers as Solana mainnet: the USDC mint at its mainnet address, 6 decimals, the fee payer funded with SOL', async () => {
    expect(rig.network).to.equal('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp');
    expect(rig.asset).to.equal('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
    expect(requirements.extra.feePayer).to.equal(rig.feePayerAddress);

    const mint = await rpcCall(rig.rpcUrl, 'getAccountInfo', [SOLANA_USDC_MINT, { encoding: 'jsonParsed' }]);
    expect(mint.result.value.owner).to.equal('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
    expect(mint.result.value.data.parsed.type).to.equal('mint');
    expect(mint.result.value.data.parsed.info.decimals).to.equal(6);

    const lamports = await rpcCall(rig.rpcUrl, 'getBalance', [rig.feePayerAddress]);
    expect(Number(lamports.result.value)).to.be.above(1_000_000_000);
  });

  it('the client asks the local chain for its blockhash, and the settled transaction reads as a real node shows it', async () => {
    const payToBefore = await rig.balanceOf(rig.payTo);
    const blockhashCalls = rig.rpcCalls.getLatestBlockhash ?? 0;
    const payload = await payAsDevPayer();
    // The client asked the local chain for its blockhash, not the public mainnet RPC.
    expect(rig.rpcCalls.getLatestBlockhash).to.equal(blockhashCalls + 1);
    const settled = await facilitator.settle(payload, requirements);
    expect(settled.success).to.be.true();

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

  it('refuses a payer one short of the price without sending anything', async () => {
    const payToBefore = await rig.balanceOf(rig.payTo);
    const sends = rig.rpcCalls.sendTransaction;

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

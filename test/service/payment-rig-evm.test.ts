// The Base leg of the offline payment rig, driven by the unmodified x402 client and the
// facilitator's HTTP API, as the service and its users will drive it.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { createPublicClient, erc20Abi, http, parseAbi, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  BASE_USDC_ADDRESS,
  MULTICALL3_ADDRESS,
  revertNextSettlement,
  startEvmRig,
  type EvmRig,
} from '../../devchains/index.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PRICE = 5000n;

const tokenInfoAbi = parseAbi([
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);

describe('Base payment rig (anvil + test USDC + local facilitator)', () => {
  let rig: EvmRig;
  let chain: PublicClient;
  let facilitator: HTTPFacilitatorClient;
  let requirements: PaymentRequirements;

  const pay = async (key: `0x${string}`): Promise<PaymentPayload> => {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
    return client.createPaymentPayload({
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/v1/test', description: 'rig test', mimeType: 'application/octet-stream' },
      accepts: [requirements],
    });
  };

  const authorizationOf = (payload: PaymentPayload) =>
    (payload.payload as { authorization: { from: `0x${string}`; nonce: `0x${string}` } }).authorization;

  before(async () => {
    rig = await startEvmRig();
    chain = createPublicClient({ transport: http(rig.rpcUrl) });
    facilitator = new HTTPFacilitatorClient({ url: rig.facilitatorUrl });
    requirements = {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: PRICE.toString(),
      asset: BASE_USDC_ADDRESS,
      payTo: rig.payTo,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    };
  });

  after(async () => {
    await rig?.stop();
  });

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

  it('funds the demo payer with 1000 test USDC and leaves payTo empty', async () => {
    expect(rig.payerAddress).to.equal(privateKeyToAccount(rig.payerKey).address);
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(1_000_000_000n);
    expect(await rig.balanceOf(rig.payTo)).to.equal(0n);
  });

  it('lists exact on eip155:8453 in /supported, signed by anvil dev account #0', async () => {
    const supported = await facilitator.getSupported();
    expect(supported.kinds.some((kind) => kind.x402Version === 2 && kind.scheme === 'exact' && kind.network === 'eip155:8453')).to.be.true();
    expect(Object.values(supported.signers).flat()).to.include('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  });

  it('verifies and settles a real payment over HTTP, moving exactly the price; a replay is refused', async () => {
    const payerBefore = await rig.balanceOf(rig.payerAddress);
    const payToBefore = await rig.balanceOf(rig.payTo);
    const payload = await pay(rig.payerKey);

    const verified = await facilitator.verify(payload, requirements);
    expect(verified.isValid).to.be.true();
    expect(verified.payer).to.equal(rig.payerAddress);

    const settled = await facilitator.settle(payload, requirements);
    expect(settled.success).to.be.true();
    expect(settled.network).to.equal('eip155:8453');
    const receipt = await chain.getTransactionReceipt({ hash: settled.transaction as `0x${string}` });
    expect(receipt.status).to.equal('success');
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(payerBefore - PRICE);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToBefore + PRICE);
    const { from, nonce } = authorizationOf(payload);
    expect(await chain.readContract({ address: BASE_USDC_ADDRESS, abi: tokenInfoAbi, functionName: 'authorizationState', args: [from, nonce] })).to.be.true();

    const replayVerified = await facilitator.verify(payload, requirements);
    expect(replayVerified.isValid).to.be.false();
    expect(replayVerified.invalidReason).to.equal('invalid_exact_evm_nonce_already_used');
    const replaySettled = await facilitator.settle(payload, requirements);
    expect(replaySettled.success).to.be.false();
    expect(replaySettled.errorReason).to.equal('invalid_exact_evm_nonce_already_used');
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(payerBefore - PRICE);
    expect(await rig.balanceOf(rig.payTo)).to.equal(payToBefore + PRICE);
  });

  it('refuses a payer without funds as insufficient_balance (diagnosed through Multicall3)', async () => {
    const payload = await pay(generatePrivateKey());
    const verified = await facilitator.verify(payload, requirements);
    expect(verified.isValid).to.be.false();
    expect(verified.invalidReason).to.equal('invalid_exact_evm_insufficient_balance');
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
});

describe('Base payment rig lifecycle', () => {
  it('stops anvil and the facilitator, and honours options', async () => {
    const payTo = privateKeyToAccount(generatePrivateKey()).address;
    const rig = await startEvmRig({ payerBalance: 42n, payTo });
    expect(rig.payTo).to.equal(payTo);
    expect(await rig.balanceOf(rig.payerAddress)).to.equal(42n);
    await rig.stop();
    await rig.stop();
    const rpcDown = await fetch(rig.rpcUrl, { method: 'POST', body: '{}' }).then(() => false, () => true);
    const facilitatorDown = await fetch(`${rig.facilitatorUrl}/supported`).then(() => false, () => true);
    expect(rpcDown).to.be.true();
    expect(facilitatorDown).to.be.true();
  });
});

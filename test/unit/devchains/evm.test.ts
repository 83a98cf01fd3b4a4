// The local Base rig's batch-settlement part: x402's contracts at the addresses @x402/evm uses,
// x402's batch-settlement facilitator scheme beside `exact`, and a channel opened end to end with
// x402's own client scheme and facilitator, read back from the chain. Also the block-time option.
// (The rig's `exact` payments are covered by test/service/payment-rig.test.ts.)
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme, computeChannelId } from '@x402/evm/batch-settlement/client';
import { createPublicClient, http, parseAbi, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  BASE_NETWORK,
  BASE_USDC_ADDRESS,
  BATCH_SETTLEMENT_ADDRESS,
  BATCH_WITHDRAW_DELAY_S,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  startEvmRig,
  type EvmRig,
} from '../../../devchains/index.js';
import { batchSettlementDeployments } from '../../../devchains/evm.js';
import { ensureContractsBuilt } from '../../../devchains/evm-contracts.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PRICE = '5000';

const settlementAbi = parseAbi([
  'function MIN_WITHDRAW_DELAY() view returns (uint40)',
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
]);
const collectorAbi = parseAbi(['function x402BatchSettlement() view returns (address)']);

interface DepositPayload {
  type: 'deposit';
  deposit: { amount: string };
  voucher: { channelId: `0x${string}`; maxClaimableAmount: string };
}

describe('devchains/evm: batch-settlement on the local Base chain', () => {
  let rig: EvmRig;
  let chain: PublicClient;
  let facilitator: HTTPFacilitatorClient;

  before(async () => {
    rig = await startEvmRig();
    chain = createPublicClient({ transport: http(rig.rpcUrl) });
    facilitator = new HTTPFacilitatorClient({ url: rig.facilitatorUrl });
  });

  after(async () => {
    await rig?.stop();
  });

  it('carries x402\'s settlement contract and ERC-3009 deposit collector at @x402/evm\'s addresses', async () => {
    expect(BATCH_SETTLEMENT_ADDRESS).to.equal('0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003');
    expect(ERC3009_DEPOSIT_COLLECTOR_ADDRESS).to.equal('0x4020806089470a89826cB9fB1f4059150b550004');
    for (const address of [BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS]) {
      expect((await chain.getCode({ address }))?.length ?? 0, address).to.be.above(1000);
    }
    const [, name, version, chainId, verifyingContract] = await chain.readContract({
      address: BATCH_SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: 'eip712Domain',
    });
    expect({ name, version, chainId, verifyingContract }).to.equal({
      name: 'x402 Batch Settlement', version: '1', chainId: 8453n, verifyingContract: BATCH_SETTLEMENT_ADDRESS,
    });
    const collectorTarget = await chain.readContract({
      address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, abi: collectorAbi, functionName: 'x402BatchSettlement',
    });
    expect(collectorTarget).to.equal(BATCH_SETTLEMENT_ADDRESS);
  });

  it('the dev withdraw delay is the contract\'s MIN_WITHDRAW_DELAY', async () => {
    const minimum = await chain.readContract({ address: BATCH_SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: 'MIN_WITHDRAW_DELAY' });
    expect(minimum).to.equal(BATCH_WITHDRAW_DELAY_S);
  });

  it('refuses creation code that would not land at the canonical address', async () => {
    const { contracts } = await ensureContractsBuilt();
    const deployed = batchSettlementDeployments(contracts).map((d) => d.address);
    expect(deployed).to.equal([BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS]);
    const settlement = contracts.x402BatchSettlement;
    // One bit of the creation code changed, as a different compiler or setting would change it.
    const lastByte = (parseInt(settlement.bytecode.slice(-2), 16) ^ 1).toString(16).padStart(2, '0');
    const altered = { ...contracts, x402BatchSettlement: { ...settlement, bytecode: `0x${settlement.bytecode.slice(2, -2)}${lastByte}` as const } };
    expect(() => batchSettlementDeployments(altered)).to.throw(/x402BatchSettlement .* would deploy at 0x[0-9a-fA-F]{40}, not at @x402\/evm's 0x4020074e/);
  });

  it('lists batch-settlement on eip155:8453 beside exact in /supported, with no receiver authorizer of its own', async () => {
    const { kinds } = await facilitator.getSupported();
    const base = kinds.filter((kind) => kind.network === BASE_NETWORK && kind.x402Version === 2);
    expect(base.map((kind) => kind.scheme).sort()).to.equal(['batch-settlement', 'exact']);
    expect(base.find((kind) => kind.scheme === 'batch-settlement')?.extra?.receiverAuthorizer).to.not.exist();
  });

  it('gives a receiver-authorizer key that is not the facilitator\'s, the payer\'s or the payee\'s', () => {
    expect(rig.receiverAuthorizerAddress).to.equal(privateKeyToAccount(rig.receiverAuthorizerKey).address);
    expect([rig.payerAddress, rig.payTo, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266']).to.not.include(rig.receiverAuthorizerAddress);
  });

  it('opens a channel: x402\'s client deposit is verified and settled, the USDC moves into the channel on chain', async () => {
    const requirements: PaymentRequirements = {
      scheme: 'batch-settlement',
      network: BASE_NETWORK,
      amount: PRICE,
      asset: BASE_USDC_ADDRESS,
      payTo: rig.payTo,
      maxTimeoutSeconds: 300,
      extra: { receiverAuthorizer: rig.receiverAuthorizerAddress, withdrawDelay: BATCH_WITHDRAW_DELAY_S, name: 'USD Coin', version: '2' },
    };
    const payer = privateKeyToAccount(rig.payerKey);
    const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(payer, chain));
    const client = new x402Client().register(BASE_NETWORK, scheme);
    const payload: PaymentPayload = await client.createPaymentPayload({
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/v1/test', description: 'rig test', mimeType: 'application/octet-stream' },
      accepts: [requirements],
    });
    const deposit = payload.payload as unknown as DepositPayload;
    expect(deposit.type).to.equal('deposit');
    const depositAmount = BigInt(deposit.deposit.amount);
    expect(depositAmount >= BigInt(PRICE)).to.be.true();
    expect(deposit.voucher.maxClaimableAmount).to.equal(PRICE);
    const channelId = computeChannelId(scheme.buildChannelConfig(requirements), BASE_NETWORK);
    expect(deposit.voucher.channelId.toLowerCase()).to.equal(channelId.toLowerCase());

    const payerBefore = await rig.balanceOf(rig.payerAddress);
    const verified = await facilitator.verify(payload, requirements);
    expect(verified.isValid, verified.invalidReason).to.be.true();
    const settled = await facilitator.settle(payload, requirements);
    expect(settled.success, settled.errorReason).to.be.true();
    expect(settled.transaction).to.match(/^0x[0-9a-f]{64}$/);

    expect(await rig.balanceOf(rig.payerAddress)).to.equal(payerBefore - depositAmount);
    expect(await rig.balanceOf(BATCH_SETTLEMENT_ADDRESS)).to.equal(depositAmount);
    const [balance, totalClaimed] = await chain.readContract({
      address: BATCH_SETTLEMENT_ADDRESS, abi: settlementAbi, functionName: 'channels', args: [channelId],
    });
    expect({ balance, totalClaimed }).to.equal({ balance: depositAmount, totalClaimed: 0n });
  });
});

describe('devchains/evm: block time', () => {
  it('with blockTimeMs the chain mines blocks on its own interval and still carries the contracts', async () => {
    const rig = await startEvmRig({ blockTimeMs: 250, receiptPollingMs: 100, payerBalance: 1n });
    try {
      const chain = createPublicClient({ transport: http(rig.rpcUrl) });
      expect(await rig.balanceOf(rig.payerAddress)).to.equal(1n);
      expect((await chain.getCode({ address: BATCH_SETTLEMENT_ADDRESS }))?.length ?? 0).to.be.above(1000);
      const first = await chain.getBlockNumber({ cacheTime: 0 });
      await new Promise((resolve) => setTimeout(resolve, 800));
      const later = await chain.getBlockNumber({ cacheTime: 0 });
      // No transaction was sent meanwhile: only interval mining makes blocks (about 3 in 800 ms).
      expect(Number(later - first)).to.be.within(2, 5);
    } finally {
      await rig.stop();
    }
  });
});

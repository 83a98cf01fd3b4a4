// client/bridge/chain.ts: what the local Base chain says of lapsed EIP-3009 authorizations (final
// only once its latest block has passed their validity), and which RPC the bridge reads it from.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { createPublicClient, http } from 'viem';
import { startEvmRig, type EvmRig } from '../../../../devchains/index.js';
import { EvmChain, evmChainFor } from '../../../../client/bridge/chain.js';
import { BASE_MAINNET, SOLANA_MAINNET, type Payable } from '../../../../client/bridge/settings.js';
import { advanceChain, settle, signAuthorization } from '../../../support/authorizations.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('the EVM chain reader for lapsed authorizations', () => {
  let rig: EvmRig;
  let base: Payable;

  before(async () => {
    rig = await startEvmRig();
    base = { network: rig.network, family: 'evm', usdc: rig.asset };
  });

  after(async () => {
    await rig?.stop();
  });

  it('answers nothing of an authorization still valid at the latest block, then whether it was used', async () => {
    const chain = new EvmChain(createPublicClient({ transport: http(rig.rpcUrl) }), base);
    const unused = await signAuthorization(rig, 1_000n, 20);
    const used = await signAuthorization(rig, 2_000n, 20);
    await settle(rig, used);
    const both = [unused.authorization, used.authorization];
    expect(await chain.settled(both)).to.equal({ unused: [], used: [] });
    await advanceChain(rig, 30);
    const settled = await chain.settled(both);
    expect(settled.unused).to.have.length(1);
    expect(settled.unused[0]).to.shallow.equal(unused.authorization);
    expect(settled.used).to.have.length(1);
    expect(settled.used[0]).to.shallow.equal(used.authorization);
    // A Solana authorization names nothing the chain could be asked about.
    expect(await chain.settled([{ amount: 1n, spent: false }])).to.equal({ unused: [], used: [] });
  });

  it('refuses an RPC that serves another chain than the one paid on, every time it is asked', async () => {
    const chain = new EvmChain(createPublicClient({ transport: http(rig.rpcUrl) }), { ...base, network: 'eip155:1' });
    const lapsed = (await signAuthorization(rig, 1_000n, 20)).authorization;
    await expect(chain.settled([lapsed])).to.reject('EVM_RPC_URL serves eip155:8453, not eip155:1');
    await expect(chain.settled([lapsed])).to.reject('EVM_RPC_URL serves eip155:8453, not eip155:1');
  });

  it('reads EVM_RPC_URL, else viem\'s public RPC for the network, and nothing without an EVM network or a known RPC', async () => {
    const solana: Payable = { network: SOLANA_MAINNET, family: 'svm', usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' };
    expect(await evmChainFor([solana], { EVM_RPC_URL: rig.rpcUrl })).to.be.undefined();
    const local = await evmChainFor([solana, base], { EVM_RPC_URL: rig.rpcUrl });
    expect(await local!.settled([])).to.equal({ unused: [], used: [] });
    // Made without a request: Base's public RPC is only read when an authorization lapses.
    expect(await evmChainFor([{ ...base, network: BASE_MAINNET }], {})).to.be.an.instanceof(EvmChain);
    expect(await evmChainFor([{ ...base, network: 'eip155:987654321' }], {})).to.be.undefined();
  });
});

// client/bridge/settings.ts: the bridge's environment read into its settings, each mistake refused
// with a message naming the variable at fault (the system tests start the bridge on good settings).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import path from 'node:path';
import { BASE_MAINNET, readNetworks, readSettings, SOLANA_MAINNET } from '../../../../client/bridge/settings.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const EVM = { PAYER_KEY: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' };
const SVM = { SVM_PAYER_KEY: 'key', SVM_RPC_URL: 'http://127.0.0.1:1' };
const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

describe('the bridge\'s settings from its environment', () => {
  it('has defaults: the local service, 0.10 USD a call, 1 USD in all, files from the working directory, no output folder', () => {
    const settings = readSettings(EVM, '/srv/work');
    expect(settings).to.equal({
      url: 'http://localhost:8080',
      networks: [{ network: BASE_MAINNET, family: 'evm', usdc: BASE_USDC }],
      perCall: 100_000n,
      total: 1_000_000n,
      filesRoot: '/srv/work',
    });
  });

  it('strips the URL\'s trailing slashes and resolves the folders from the working directory', () => {
    const env = { ...EVM, PAYDOC_URL: 'http://127.0.0.1:9/', PAYDOC_FILES_ROOT: 'in', OUTPUT_DIR: '../out' };
    const settings = readSettings(env, '/srv/work');
    expect(settings.url).to.equal('http://127.0.0.1:9');
    expect(settings.filesRoot).to.equal(path.resolve('/srv/work/in'));
    expect(settings.outputDir).to.equal('/srv/out');
  });

  it('reads the caps as exact dollars, to the last atomic unit, and names the cap it cannot read', () => {
    const settings = readSettings({ ...EVM, MAX_USD_PER_CALL: '0.000001', MAX_USD_TOTAL: '12345.678901' });
    expect([settings.perCall, settings.total]).to.equal([1n, 12_345_678_901n]);
    expect(() => readSettings({ ...EVM, MAX_USD_PER_CALL: '0.0000001' })).to.throw(
      'MAX_USD_PER_CALL must be an amount of US dollars such as 0.10 (at most 6 decimals); received "0.0000001"');
    expect(() => readSettings({ ...EVM, MAX_USD_TOTAL: `$${'9'.repeat(60)}` })).to.throw(
      `MAX_USD_TOTAL must be an amount of US dollars such as 0.10 (at most 6 decimals); received "$${'9'.repeat(39)}"`);
    // A cap of nothing is a cap: every price is refused.
    expect(readSettings({ ...EVM, MAX_USD_TOTAL: '0' }).total).to.equal(0n);
  });

  it('needs a wallet, and a channel deposit above nothing, on Base', () => {
    expect(() => readSettings({})).to.throw(/^set PAYER_KEY \(an EVM private key, paying on Base\) or SVM_PAYER_KEY/);
    expect(readSettings({ ...EVM, CHANNEL_DEPOSIT_USD: '0.05' }).channelDeposit).to.equal(50_000n);
    expect(() => readSettings({ ...EVM, CHANNEL_DEPOSIT_USD: '0' })).to.throw('CHANNEL_DEPOSIT_USD must be more than 0');
    expect(() => readSettings({ ...EVM, CHANNEL_DEPOSIT_USD: 'a lot' })).to.throw(/^CHANNEL_DEPOSIT_USD must be an amount/);
    expect(() => readSettings({ ...SVM, CHANNEL_DEPOSIT_USD: '1' })).to.throw(
      /^CHANNEL_DEPOSIT_USD pays through a payment channel on Base \(eip155:8453\) only/);
  });

  it('signs on Base with PAYER_KEY (both keys set: Base), else on Solana mainnet', () => {
    expect(readNetworks({ ...EVM, ...SVM }).map((n) => n.network)).to.equal([BASE_MAINNET]);
    expect(readNetworks(SVM).map((n) => n.network)).to.equal([SOLANA_MAINNET]);
    const both = readNetworks({ ...EVM, ...SVM, PAYDOC_NETWORKS: ` ${SOLANA_MAINNET} ,, ${BASE_MAINNET}` });
    expect(both.map((n) => [n.network, n.family])).to.equal([[SOLANA_MAINNET, 'svm'], [BASE_MAINNET, 'evm']]);
  });

  it('refuses in PAYDOC_NETWORKS a network of no known family or USDC, one without its key, and two of one family', () => {
    expect(() => readNetworks({ ...EVM, PAYDOC_NETWORKS: 'bitcoin:000000000019d6689c085ae165831e93' })).to.throw(
      'PAYDOC_NETWORKS: "bitcoin:000000000019d6689c085ae165831e93" is neither an EVM (eip155:…) nor a Solana (solana:…) network');
    expect(() => readNetworks({ ...EVM, PAYDOC_NETWORKS: 'eip155:999999' })).to.throw(
      'PAYDOC_NETWORKS: x402 knows no USDC on eip155:999999');
    expect(() => readNetworks({ ...SVM, PAYDOC_NETWORKS: BASE_MAINNET })).to.throw(
      'PAYDOC_NETWORKS names eip155:8453: set PAYER_KEY (an EVM private key)');
    expect(() => readNetworks({ ...EVM, SVM_PAYER_KEY: 'key', PAYDOC_NETWORKS: SOLANA_MAINNET })).to.throw(
      `PAYDOC_NETWORKS names ${SOLANA_MAINNET}: set SVM_PAYER_KEY and SVM_RPC_URL`);
    expect(() => readNetworks({ ...EVM, PAYDOC_NETWORKS: `${BASE_MAINNET},eip155:1` })).to.throw(
      'PAYDOC_NETWORKS: name at most one EVM network');
    // A name from the environment is shown bounded.
    const long = `eip155:${'9'.repeat(200)}`;
    expect(() => readNetworks({ ...EVM, PAYDOC_NETWORKS: long })).to.throw(`PAYDOC_NETWORKS: x402 knows no USDC on ${long.slice(0, 60)}`);
  });
});

// Live mode against hosted facilitators, as an operator configures it: the network presets take
// USDC and its EIP-712 domain from x402's own tables. The facilitator is a stand-in that answers
// /supported for the two testnets (a quote never calls verify or settle).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createServer } from '../../server/index.js';
import { ConfigError } from '../../server/config.js';
import { form } from '../support/service.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_SEPOLIA = 'eip155:84532';
const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const FEE_PAYER = 'EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd';

describe('going live: network presets', () => {
  let facilitator: http.Server;
  let facilitatorUrl: string;
  let tmpDir: string;

  before(async () => {
    facilitator = http.createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/supported') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({
          kinds: [
            { x402Version: 2, scheme: 'exact', network: BASE_SEPOLIA },
            { x402Version: 2, scheme: 'exact', network: SOLANA_DEVNET, extra: { feePayer: FEE_PAYER } },
          ],
          extensions: [], signers: {},
        }));
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => facilitator.listen(0, '127.0.0.1', resolve));
    facilitatorUrl = `http://127.0.0.1:${(facilitator.address() as AddressInfo).port}`;
    tmpDir = await mkdtemp(path.join('/dev/shm', 'paydoc-live-'));
  });
  after(async () => {
    await new Promise((resolve) => facilitator.close(resolve));
    await rm(tmpDir, { recursive: true, force: true });
  });

  it('EVM_NETWORK=eip155:84532 and SVM_NETWORK=devnet quote Base Sepolia USDC ("USDC" v2) and the devnet mint without EVM_ASSET or SVM_ASSET', async () => {
    const service = await createServer({
      config: {
        port: 0, host: '127.0.0.1', workers: 1, tmpDir, logLevel: 'silent', payments: 'live',
        evmNetwork: BASE_SEPOLIA, evmFacilitatorUrl: facilitatorUrl, evmPayTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        svmNetwork: SOLANA_DEVNET, svmFacilitatorUrl: facilitatorUrl, svmPayTo: FEE_PAYER,
      },
      env: {},
    });
    await service.server.start();
    try {
      const res = await fetch(`${service.server.info.uri.replace('localhost', '127.0.0.1')}/v1/pdf/extract`, { method: 'POST', body: form([makePdf(textPages(2))]) });
      expect(res.status).to.equal(402);
      const { accepts } = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
      const evm = accepts.find((a) => a.network === BASE_SEPOLIA)!;
      expect(evm).to.include({ asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', amount: '20000' });
      expect(evm.extra).to.include({ name: 'USDC', version: '2' });
      const svm = accepts.find((a) => a.network === SOLANA_DEVNET)!;
      expect(svm).to.include({ asset: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', amount: '20000' });
      expect(svm.extra).to.include({ feePayer: FEE_PAYER });
      // The check before the first real payment: each chain's facilitator, listed by its /supported.
      const health = await (await fetch(`${service.server.info.uri.replace('localhost', '127.0.0.1')}/v1/health`)).json() as { payments: { facilitators: unknown[] } };
      expect(health.payments.facilitators).to.equal([
        { network: BASE_SEPOLIA, url: facilitatorUrl, supported: true },
        { network: SOLANA_DEVNET, url: facilitatorUrl, supported: true },
      ]);
    } finally {
      await service.stop();
    }
  });

  it('a network x402 knows no USDC for needs EVM_ASSET, and says so at boot', async () => {
    const boot = createServer({
      config: { port: 0, host: '127.0.0.1', workers: 1, tmpDir, logLevel: 'silent', payments: 'live', evmNetwork: 'eip155:999999', evmFacilitatorUrl: facilitatorUrl, evmPayTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' },
      env: {},
    });
    const err = await boot.then(async (s) => { await s.stop(); return undefined; }, (e: unknown) => e);
    expect(err).to.be.an.instanceof(ConfigError);
    expect((err as Error).message).to.equal('invalid configuration: EVM_ASSET: x402 knows no USDC on eip155:999999; set EVM_ASSET to the token\'s address');
  });
});

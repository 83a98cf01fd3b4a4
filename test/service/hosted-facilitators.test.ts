// Live mode through the hosted facilitators' authentication: Coinbase's CDP facilitator (Base) and
// PayAI's (Solana), each played by a stand-in that checks every JWT with a key pair this test
// generated and forwards accepted calls to the local chains' real facilitators. The service signs
// with the vendors' own packages (@coinbase/x402 with cdp-sdk, @payai/facilitator).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { createAuthHeader } from '@coinbase/x402';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { createServer } from '../../server/index.js';
import { ConfigError, loadConfig, type Config } from '../../server/config.js';
import { chainsFor } from '../../server/payment/setup.js';
import { startEvmRig, startSvmRig, type EvmRig, type SvmRig } from '../../devchains/index.js';
import { createSvmClientSigner, registerSvmPayer } from '../../client/svm-payer.js';
import { startTestService, form, signOnBase } from '../support/service.js';
import { balancesOf, paidAt, quoteAt } from '../support/paying.js';
import { cdpKey, checkToken, payaiKey, startJwtStandIn, type JwtStandIn } from '../support/jwt-facilitator.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const CDP_PATH = '/platform/v2/x402';
const SOLANA = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
const pdf2 = makePdf(textPages(2));
const PRICE = 20000n; // extract, 2 pages

interface ErrorBody { error: { code: string; status: number; message: string } }

let evm: EvmRig;
let svm: SvmRig;
let tmpDir: string;
let keyCounter = 0;
// PayAI's package caches one JWT per key id for the whole process: each service gets its own id.
const newKeyId = (prefix: string) => `${prefix}-${process.pid}-${++keyCounter}`;

before(async () => {
  evm = await startEvmRig();
  svm = await startSvmRig();
  tmpDir = await mkdtemp(path.join('/dev/shm', 'paydoc-hosted-'));
});
after(async () => {
  await evm?.stop();
  await svm?.stop();
  await rm(tmpDir, { recursive: true, force: true });
});

const cdpService = (standIn: JwtStandIn, keyId: string, secret: string, more: Partial<Config> = {}) => startTestService({
  rigs: { evm, svm },
  config: { payments: 'live', workers: 1, evmFacilitatorUrl: standIn.url, evmPayTo: evm.payTo, cdpApiKeyId: keyId, cdpApiKeySecret: secret, ...more },
});

const payaiService = (standIn: JwtStandIn, keyId: string, secret: string) => startTestService({
  rigs: { evm, svm },
  config: { payments: 'live', workers: 1, svmFacilitatorUrl: standIn.url, svmPayTo: svm.payTo, payaiApiKeyId: keyId, payaiApiKeySecret: secret },
});
/** A service that started is stopped again: its start is no error (undefined). */
const stopAndPass = async (t: { stop(): Promise<void> }) => {
  await t.stop();
  return undefined;
};

async function signOnSolana(pr: PaymentRequired): Promise<PaymentPayload> {
  const client = registerSvmPayer(new x402Client(), await createSvmClientSigner(svm.payerSecretKey), svm.rpcUrl);
  return client.createPaymentPayload({ ...pr, accepts: pr.accepts.filter((a) => a.network === SOLANA) });
}

/** The service's clear 5xx for a refused key: no 402, no request to pay, no secret. */
async function expectRefused(res: Response, operation: string, secret: string): Promise<ErrorBody> {
  expect(res.status).to.equal(502);
  expect(res.headers.get('payment-required')).to.be.null();
  const text = await res.text();
  expect(text).to.not.contain(secret.slice(0, 24));
  expect(text).to.not.contain('Bearer');
  const body = JSON.parse(text) as ErrorBody;
  expect(body.error.code).to.equal('FACILITATOR_REFUSED');
  expect(body.error.status).to.equal(502);
  expect(body.error.message).to.contain('refused this service\'s credentials');
  expect(body.error.message).to.contain(`${operation} answered 401`);
  expect(body.error.message).to.contain('the payment is not at fault');
  expect(body.error.message).to.contain('nothing was charged');
  return body;
}

describe('Coinbase CDP facilitator (Base): a fresh JWT per call', () => {
  for (const kind of ['ed25519', 'es256'] as const) {
    it(`${kind} key, EVM_FACILITATOR_URL set to the stand-in: a paid call settles on the chain, and every call carried a fresh, distinct JWT bound to its method, host and path`, async () => {
      const key = cdpKey(kind);
      const keyId = newKeyId(`cdp-${kind}`);
      const standIn = await startJwtStandIn({ scheme: 'cdp', keyId, publicKey: key.publicKey, forwardTo: evm.facilitatorUrl, basePath: CDP_PATH });
      const t = await cdpService(standIn, keyId, key.secret);
      try {
        const before = await balancesOf(evm);
        const settledBefore = evm.facilitator.calls.settle;
        const res = await (await t.payFetch('base'))(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form([pdf2]) });
        expect(res.status).to.equal(200);
        expect(((await res.json()) as { pageCount: number }).pageCount).to.equal(2);
        const after = await balancesOf(evm);
        expect(before.payer - after.payer).to.equal(PRICE);
        expect(after.payTo - before.payTo).to.equal(PRICE);
        expect(evm.facilitator.calls.settle - settledBefore).to.equal(1);

        expect(standIn.calls.every((c) => c.accepted), JSON.stringify(standIn.calls.map((c) => c.reason))).to.be.true();
        expect(standIn.calls.map((c) => c.operation)).to.equal(['supported', 'verify', 'settle']);
        const tokens = standIn.calls.map((c) => c.token);
        expect(new Set(tokens).size).to.equal(tokens.length);
        expect(new Set(standIn.calls.map((c) => c.header!.nonce)).size).to.equal(tokens.length);
        for (const call of standIn.calls) {
          const method = call.operation === 'supported' ? 'GET' : 'POST';
          expect(call.header).to.include({ alg: kind === 'ed25519' ? 'EdDSA' : 'ES256', kid: keyId, typ: 'JWT' });
          expect(call.claims).to.include({ iss: 'cdp', sub: keyId });
          expect(call.claims!.uris).to.equal([`${method} ${standIn.host}${CDP_PATH}/${call.operation}`]);
          expect((call.claims!.exp as number) - (call.claims!.iat as number)).to.equal(120);
          expect(call.claims!.nbf).to.equal(call.claims!.iat);
        }
      } finally {
        await t.stop();
        await standIn.stop();
      }
    });
  }

  it('the stand-in refuses what CDP refuses: stale, reused, other path, other host, other key, no token', async () => {
    const key = cdpKey('ed25519');
    const other = cdpKey('ed25519');
    const keyId = newKeyId('cdp-strict');
    const standIn = await startJwtStandIn({ scheme: 'cdp', keyId, publicKey: key.publicKey, forwardTo: evm.facilitatorUrl, basePath: CDP_PATH });
    const supported = (authorization?: string, p = 'supported') => fetch(`${standIn.url}/${p}`, { method: p === 'supported' ? 'GET' : 'POST', headers: authorization ? { authorization } : {}, ...(p === 'supported' ? {} : { body: '{}' }) });
    const sign = (host: string, p: string, secret = key.secret, method = 'GET') => createAuthHeader(keyId, secret, method, host, `${CDP_PATH}/${p}`);
    try {
      const good = await sign(standIn.host, 'supported');
      expect((await supported(good)).status).to.equal(200);
      expect((await supported(good)).status).to.equal(401); // the same token again
      expect((await supported(await sign(standIn.host, 'verify', key.secret, 'POST'), 'settle')).status).to.equal(401);
      expect((await supported(await sign('api.cdp.coinbase.com', 'supported'))).status).to.equal(401);
      expect((await supported(await sign(standIn.host, 'supported', other.secret))).status).to.equal(401);
      expect((await supported()).status).to.equal(401);
      const stale = await sign(standIn.host, 'supported');
      standIn.clockOffsetSeconds = 121;
      expect((await supported(stale)).status).to.equal(401);
      expect(standIn.calls.map((c) => c.reason)).to.equal([undefined, 'token reused', `not bound to POST ${standIn.host}${CDP_PATH}/settle`, `not bound to GET ${standIn.host}${CDP_PATH}/supported`, 'bad signature', 'no bearer token', 'expired']);
    } finally {
      await standIn.stop();
    }
  });

  it('a key the facilitator refuses at verify: 502 FACILITATOR_REFUSED naming the refusal, nothing charged, no work, no 402', async () => {
    const key = cdpKey('ed25519');
    const keyId = newKeyId('cdp-revoked');
    const standIn = await startJwtStandIn({ scheme: 'cdp', keyId, publicKey: key.publicKey, forwardTo: evm.facilitatorUrl, basePath: CDP_PATH });
    const t = await cdpService(standIn, keyId, key.secret);
    try {
      standIn.trusted.verify = cdpKey('ed25519').publicKey; // the key was revoked after the boot
      const before = await balancesOf(evm);
      const calls = { ...evm.facilitator.calls };
      const jobs = await t.metric('paydoc_jobs_total', { outcome: 'started' });
      const res = await (await t.payFetch('base'))(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form([pdf2]) });
      const body = await expectRefused(res, 'POST /verify', key.secret);
      expect(body.error.message).to.contain(`at ${standIn.host}`);
      expect(body.error.message).to.contain('bad signature');
      expect(body.error.message).to.contain('no work was done');
      expect(await balancesOf(evm)).to.equal(before);
      expect(evm.facilitator.calls).to.equal(calls);
      expect(await t.metric('paydoc_jobs_total', { outcome: 'started' })).to.equal(jobs);
      expect(await t.metric('paydoc_payments_total', { stage: 'facilitator_refused' })).to.equal(1);
      expect(t.logs.some((line) => line.includes('FACILITATOR_REFUSED') && line.includes('refused this service'))).to.be.true();
      expect(t.logs.join('\n')).to.not.contain(key.secret.slice(0, 24));
    } finally {
      await t.stop();
      await standIn.stop();
    }
  });

  it('a refusal at settle in x402\'s own answer shape is still the service\'s fault: 502, nothing charged, and the same payment pays once the key works', async () => {
    const key = cdpKey('es256');
    const keyId = newKeyId('cdp-settle');
    const standIn = await startJwtStandIn({ scheme: 'cdp', keyId, publicKey: key.publicKey, forwardTo: evm.facilitatorUrl, basePath: CDP_PATH });
    const t = await cdpService(standIn, keyId, key.secret);
    try {
      standIn.refusalShape = 'x402';
      standIn.trusted.settle = cdpKey('es256').publicKey;
      const url = `${t.url}/v1/pdf/extract`;
      const payload = await signOnBase(await quoteAt(url, form([pdf2])), evm.payerKey);
      const before = await balancesOf(evm);
      const settled = evm.facilitator.calls.settle;
      await expectRefused(await paidAt(url, form([pdf2]), payload), 'POST /settle', key.secret);
      expect(await balancesOf(evm)).to.equal(before);
      expect(evm.facilitator.calls.settle).to.equal(settled);

      standIn.trusted.settle = key.publicKey;
      const res = await paidAt(url, form([pdf2]), payload);
      expect(res.status).to.equal(200);
      const after = await balancesOf(evm);
      expect(before.payer - after.payer).to.equal(PRICE);
      expect(after.payTo - before.payTo).to.equal(PRICE);
    } finally {
      await t.stop();
      await standIn.stop();
    }
  });

  it('a settlement whose outcome is unknown stays held when the facilitator then refuses the key: 503, never "nothing charged"; the identical retry gets it, charged once', async () => {
    const key = cdpKey('ed25519');
    const keyId = newKeyId('cdp-held');
    const standIn = await startJwtStandIn({ scheme: 'cdp', keyId, publicKey: key.publicKey, forwardTo: evm.facilitatorUrl, basePath: CDP_PATH });
    const t = await cdpService(standIn, keyId, key.secret);
    const revoked = cdpKey('ed25519').publicKey;
    try {
      const url = `${t.url}/v1/pdf/extract`;
      const before = await balancesOf(evm);
      // settlement_pending, and x402's immediate second settle refused: the first may be under way.
      const pendingPayload = await signOnBase(await quoteAt(url, form([pdf2])), evm.payerKey);
      evm.facilitator.faults.settle = 'pending';
      standIn.onForwarded = (op) => { if (op === 'settle') standIn.trusted.settle = revoked; };
      let res = await paidAt(url, form([pdf2]), pendingPayload);
      expect(res.status).to.equal(503);
      expect(((await res.json()) as ErrorBody).error.code).to.equal('SETTLEMENT_UNCONFIRMED');
      standIn.onForwarded = undefined;
      delete evm.facilitator.faults.settle;
      standIn.trusted.settle = key.publicKey;
      res = await paidAt(url, form([pdf2]), pendingPayload);
      expect(res.status).to.equal(200);

      // Settled on chain but the answer lost; the retry's settle refused: still held, 503.
      const lostPayload = await signOnBase(await quoteAt(url, form([pdf2])), evm.payerKey);
      evm.facilitator.faults.settle = 'lost';
      res = await paidAt(url, form([pdf2]), lostPayload);
      expect(res.status).to.equal(503);
      delete evm.facilitator.faults.settle;
      standIn.trusted.settle = revoked;
      res = await paidAt(url, form([pdf2]), lostPayload);
      expect(res.status).to.equal(503);
      const held = (await res.json()) as ErrorBody;
      expect(held.error.code).to.equal('SETTLEMENT_UNCONFIRMED');
      expect(held.error.message).to.contain('refused this service\'s credentials');
      standIn.trusted.settle = key.publicKey;
      res = await paidAt(url, form([pdf2]), lostPayload);
      expect(res.status).to.equal(200);

      const after = await balancesOf(evm);
      expect(before.payer - after.payer).to.equal(2n * PRICE);
      expect(after.payTo - before.payTo).to.equal(2n * PRICE);
    } finally {
      delete evm.facilitator.faults.settle;
      await t.stop();
      await standIn.stop();
    }
  });

  it('a key refused at boot stops the boot with the refusal and the variables named, never the secret', async () => {
    const key = cdpKey('ed25519');
    const keyId = newKeyId('cdp-boot');
    const standIn = await startJwtStandIn({ scheme: 'cdp', keyId, publicKey: cdpKey('ed25519').publicKey, forwardTo: evm.facilitatorUrl, basePath: CDP_PATH });
    try {
      const err = await cdpService(standIn, keyId, key.secret).then(stopAndPass, (e: unknown) => e as Error);
      expect(err).to.be.an.instanceof(Error);
      expect(err!.message).to.equal(`the eip155:8453 facilitator at ${standIn.host} refused this service's credentials at start (GET /supported answered 401: Unauthorized: bad signature); check CDP_API_KEY_ID and CDP_API_KEY_SECRET`);
    } finally {
      await standIn.stop();
    }
  });

  it('without EVM_FACILITATOR_URL the chain goes to CDP\'s own URL, its JWTs bound to CDP\'s host and paths (a SEC1 PEM with literal \\n works)', async () => {
    const { secret, publicKey } = cdpKey('es256', 'sec1');
    const keyId = newKeyId('cdp-default');
    const config = loadConfig({ payments: 'live', evmPayTo: evm.payTo, cdpApiKeyId: keyId, cdpApiKeySecret: secret.replace(/\n/g, '\\n') }, {});
    const [chain] = await chainsFor(config, undefined);
    expect(chain.network).to.equal('eip155:8453');
    expect(chain.facilitatorUrl).to.equal('https://api.cdp.coinbase.com/platform/v2/x402');
    expect(chain.facilitatorAuth!.credentials).to.equal('CDP_API_KEY_ID and CDP_API_KEY_SECRET');
    const headers = await chain.facilitatorAuth!.createAuthHeaders() as Record<'verify' | 'settle' | 'supported', Record<string, string>>;
    const now = Math.floor(Date.now() / 1000);
    for (const [op, method] of [['verify', 'POST'], ['settle', 'POST'], ['supported', 'GET']] as const) {
      const token = headers[op].Authorization.replace(/^Bearer /, '');
      const checked = checkToken(token, { scheme: 'cdp', keyId, key: publicKey, method, host: 'api.cdp.coinbase.com', path: `${CDP_PATH}/${op}`, now });
      expect(checked, op).to.not.include('reason');
      expect(headers[op]['Correlation-Context']).to.contain('source=x402');
    }
  });

  it('configuration: the two CDP variables go together, exclude EVM_FACILITATOR_AUTH, need EVM_PAY_TO and a key that signs; dev mode ignores them', async () => {
    const live = { payments: 'live' as const, evmPayTo: evm.payTo };
    const fails = (overrides: Partial<Config>) => {
      try {
        loadConfig(overrides, {});
        return undefined;
      } catch (err) {
        return err as Error;
      }
    };
    expect(fails({ ...live, cdpApiKeyId: 'id' })?.message).to.equal('invalid configuration: CDP_API_KEY_SECRET is missing: CDP_API_KEY_ID and CDP_API_KEY_SECRET are set together or not at all');
    expect(fails({ ...live, cdpApiKeySecret: 's' })?.message).to.equal('invalid configuration: CDP_API_KEY_ID is missing: CDP_API_KEY_ID and CDP_API_KEY_SECRET are set together or not at all');
    expect(fails({ ...live, cdpApiKeyId: 'id', cdpApiKeySecret: 's', evmFacilitatorAuth: 'Bearer x' })?.message).to.contain('EVM_FACILITATOR_AUTH cannot be combined with CDP_API_KEY_ID and CDP_API_KEY_SECRET');
    expect(fails({ payments: 'live', cdpApiKeyId: 'id', cdpApiKeySecret: 's' })?.message).to.equal('invalid configuration: EVM_PAY_TO (evmPayTo): required when the CDP key is set');
    expect(fails({ payments: 'dev', cdpApiKeyId: 'id' })).to.be.undefined();
    // The standard variables are read from the environment.
    expect(loadConfig({}, { PAYMENTS: 'live', EVM_PAY_TO: evm.payTo, CDP_API_KEY_ID: 'id', CDP_API_KEY_SECRET: 's' })).to.include({ cdpApiKeyId: 'id', cdpApiKeySecret: 's' });

    const boot = createServer({ config: { port: 0, host: '127.0.0.1', workers: 1, tmpDir, logLevel: 'silent', ...live, cdpApiKeyId: 'id', cdpApiKeySecret: 'not-a-key-secret' }, env: {} });
    const err = await boot.then(async (s) => { await s.stop(); return undefined; }, (e: unknown) => e as Error);
    expect(err).to.be.an.instanceof(ConfigError);
    expect(err!.message).to.equal('invalid configuration: CDP_API_KEY_SECRET: cannot sign with this key; it must be an Ed25519 key (base64, as CDP shows it) or an ES256 key (PEM)');
  });
});

describe('PayAI facilitator (Solana): its JWT on every call', () => {
  it('a paid call through the stand-in settles on Solana, every call carrying a JWT signed with the PayAI key', async () => {
    const key = payaiKey();
    const keyId = newKeyId('payai');
    const standIn = await startJwtStandIn({ scheme: 'payai', keyId, publicKey: key.publicKey, forwardTo: svm.facilitatorUrl });
    const t = await payaiService(standIn, keyId, key.secret);
    try {
      const before = await balancesOf(svm);
      const res = await (await t.payFetch('solana'))(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form([pdf2]) });
      expect(res.status).to.equal(200);
      const after = await balancesOf(svm);
      expect(before.payer - after.payer).to.equal(PRICE);
      expect(after.payTo - before.payTo).to.equal(PRICE);
      expect(standIn.calls.every((c) => c.accepted), JSON.stringify(standIn.calls.map((c) => c.reason))).to.be.true();
      expect(standIn.calls.map((c) => c.operation)).to.equal(['supported', 'verify', 'settle']);
      for (const call of standIn.calls) {
        expect(call.header).to.include({ alg: 'EdDSA', kid: keyId, typ: 'JWT' });
        expect(call.claims).to.include({ iss: 'payai-merchant', sub: keyId });
        expect((call.claims!.exp as number) - (call.claims!.iat as number)).to.equal(120);
      }
    } finally {
      await t.stop();
      await standIn.stop();
    }
  });

  it('the stand-in refuses what PayAI refuses: stale, other key, other key id, no token', async () => {
    const key = payaiKey();
    const keyId = newKeyId('payai-strict');
    const standIn = await startJwtStandIn({ scheme: 'payai', keyId, publicKey: key.publicKey, forwardTo: svm.facilitatorUrl });
    const { createFacilitatorConfig } = await import('@payai/facilitator');
    const tokenOf = async (id: string, secret: string) => {
      const headers = await createFacilitatorConfig(id, secret).createAuthHeaders!();
      return (headers.supported as Record<string, string>).Authorization;
    };
    const supported = (authorization?: string) => fetch(`${standIn.url}/supported`, { headers: authorization ? { authorization } : {} });
    try {
      const good = await tokenOf(keyId, key.secret);
      expect((await supported(good)).status).to.equal(200);
      expect((await supported(await tokenOf(newKeyId('payai-other'), payaiKey().secret))).status).to.equal(401);
      standIn.trusted.supported = payaiKey().publicKey;
      expect((await supported(good)).status).to.equal(401);
      standIn.trusted.supported = key.publicKey;
      expect((await supported()).status).to.equal(401);
      standIn.clockOffsetSeconds = 121;
      expect((await supported(good)).status).to.equal(401);
      expect(standIn.calls.map((c) => c.reason)).to.equal([undefined, 'unknown key id', 'bad signature', 'no bearer token', 'expired']);
    } finally {
      await standIn.stop();
    }
  });

  it('a key PayAI refuses at verify, then at settle: 502 FACILITATOR_REFUSED each time, nothing charged on Solana, no 402; the same payment pays once the key works', async () => {
    const key = payaiKey();
    const keyId = newKeyId('payai-revoked');
    const standIn = await startJwtStandIn({ scheme: 'payai', keyId, publicKey: key.publicKey, forwardTo: svm.facilitatorUrl });
    const t = await payaiService(standIn, keyId, key.secret);
    try {
      standIn.trusted.verify = payaiKey().publicKey;
      const url = `${t.url}/v1/pdf/extract`;
      const payload = await signOnSolana(await quoteAt(url, form([pdf2])));
      const before = await balancesOf(svm);
      const calls = { ...svm.facilitator.calls };
      await expectRefused(await paidAt(url, form([pdf2]), payload), 'POST /verify', key.secret);
      expect(await balancesOf(svm)).to.equal(before);
      expect(svm.facilitator.calls).to.equal(calls);

      standIn.trusted.verify = key.publicKey;
      standIn.trusted.settle = payaiKey().publicKey;
      await expectRefused(await paidAt(url, form([pdf2]), payload), 'POST /settle', key.secret);
      expect(await balancesOf(svm)).to.equal(before);
      expect(svm.facilitator.calls.settle).to.equal(calls.settle);

      // Neither the payment's claim nor its duplicate-settlement claim outlives the refusal.
      standIn.trusted.settle = key.publicKey;
      const res = await paidAt(url, form([pdf2]), payload);
      expect(res.status).to.equal(200);
      const after = await balancesOf(svm);
      expect(before.payer - after.payer).to.equal(PRICE);
      expect(after.payTo - before.payTo).to.equal(PRICE);
    } finally {
      await t.stop();
      await standIn.stop();
    }
  });

  it('a PayAI key refused at boot stops the boot naming PAYAI_API_KEY_ID and PAYAI_API_KEY_SECRET; without SVM_FACILITATOR_URL the chain goes to PayAI\'s URL', async () => {
    const keyId = newKeyId('payai-boot');
    const standIn = await startJwtStandIn({ scheme: 'payai', keyId, publicKey: payaiKey().publicKey, forwardTo: svm.facilitatorUrl });
    try {
      const err = await payaiService(standIn, keyId, payaiKey().secret).then(stopAndPass, (e: unknown) => e as Error);
      expect(err!.message).to.equal(`the ${SOLANA} facilitator at ${standIn.host} refused this service's credentials at start (GET /supported answered 401: Unauthorized: bad signature); check PAYAI_API_KEY_ID and PAYAI_API_KEY_SECRET`);
    } finally {
      await standIn.stop();
    }
    const [chain] = await chainsFor(loadConfig({ payments: 'live', svmPayTo: svm.payTo, payaiApiKeyId: newKeyId('payai-default'), payaiApiKeySecret: payaiKey().secret }, {}), undefined);
    expect(chain).to.include({ network: SOLANA, facilitatorUrl: 'https://facilitator.payai.network' });
    expect(() => loadConfig({ payments: 'live', svmPayTo: svm.payTo, payaiApiKeyId: 'id', payaiApiKeySecret: 's', svmFacilitatorAuth: 'Bearer x' }, {})).to.throw(ConfigError, /SVM_FACILITATOR_AUTH cannot be combined with PAYAI_API_KEY_ID and PAYAI_API_KEY_SECRET/);
  });
});

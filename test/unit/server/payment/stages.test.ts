// The payment gate's stages one by one (server/payment/stages/), each against a stand-in for the
// one thing it asks (the resource server's matching, verify or settle; the guard store), so each
// rule is shown where it lives. The whole gate on the real chains is shown by payments, faults
// and scale.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { MAX_PAYLOAD_DEPTH, payloadShapeProblem, readPayment, versionProblem, type Payment } from '../../../../server/payment/stages/payload.js';
import { PaymentLedger } from '../../../../server/payment/stages/ledger.js';
import { verifyPayment } from '../../../../server/payment/stages/verify.js';
import { lifetimeProblem, SETTLEMENT_MARGIN_MS } from '../../../../server/payment/stages/lifetime.js';
import { settlePayment } from '../../../../server/payment/stages/settle.js';
import { ResultHolding } from '../../../../server/payment/stages/holding.js';
import { authorizationOf, classify, type AuthorizationReader, type AuthorizationState } from '../../../../server/payment/stages/authorization.js';
import { MemoryGuard, type PaymentGuard } from '../../../../server/payment/guard.js';
import { FORWARDED_HEADER, replicaOrigin, wasForwarded } from '../../../../server/replica-forward.js';
import { FacilitatorRefusedError } from '../../../../server/payment/facilitators.js';
import { createMetrics } from '../../../../server/metrics.js';
import { ServiceError } from '../../../../core/errors.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const BASE = 'eip155:8453';
const requirement: PaymentRequirements = {
  scheme: 'exact', network: BASE, amount: '5000', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' },
};

function payloadFor(accepted: PaymentRequirements, nonce = `0x${'ab'.repeat(32)}`, extensions?: Record<string, unknown>): PaymentPayload {
  return {
    x402Version: 2, accepted,
    payload: { signature: '0x00', authorization: { from: '0x1111111111111111111111111111111111111111', to: accepted.payTo, value: accepted.amount, validAfter: '0', validBefore: '9999999999', nonce } },
    ...(extensions ? { extensions } : {}),
  } as PaymentPayload;
}

function paymentOf(payload: PaymentPayload = payloadFor(requirement)): Payment {
  const read = readPayment(matcher(), [requirement], payload);
  if ('refusal' in read) throw new Error(read.refusal);
  return read.payment;
}

function matcher(): x402ResourceServer {
  const server = new x402ResourceServer([]);
  server.register(BASE, new ExactEvmScheme());
  return server;
}

async function thrown(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).to.be.an.instanceof(ServiceError);
  return err as ServiceError;
}

describe('payment stage 1: reading the payload', () => {
  it('refuses shapes x402 would walk recursively, and other versions, naming the rule', () => {
    expect(payloadShapeProblem([])).to.equal('the payment payload must be a JSON object');
    let deep: unknown = 1;
    for (let i = 0; i < MAX_PAYLOAD_DEPTH + 1; i++) deep = [deep];
    expect(payloadShapeProblem({ x: deep })).to.contain('nested more than 32 levels');
    expect(payloadShapeProblem({ x: Array.from({ length: 20_001 }, () => 0) })).to.contain('more than 20000 values');
    expect(versionProblem({ ...payloadFor(requirement), x402Version: 1 } as PaymentPayload)).to.equal('x402Version 1 is not supported; use 2');
    expect(versionProblem(payloadFor(requirement))).to.not.exist();
  });

  it('matches the requirement and reads the unique id; another price, no nonce or an invalid client id is a refusal', () => {
    const payment = paymentOf();
    expect(payment.id).to.equal(`${BASE}:0x1111111111111111111111111111111111111111:0x${'ab'.repeat(32)}`);
    expect(payment.matched.amount).to.equal('5000');
    expect(readPayment(matcher(), [requirement], payloadFor({ ...requirement, amount: '4999' }))).to.equal({ refusal: 'No matching payment requirements: the payment does not match this request\'s price, network, asset or payTo' });
    const noNonce = payloadFor(requirement);
    delete (noNonce.payload as { authorization: { nonce?: string } }).authorization.nonce;
    expect(readPayment(matcher(), [requirement], noNonce)).to.equal({ refusal: 'the payment payload has no authorization nonce or transaction signature' });
    const badId = payloadFor(requirement, undefined, { 'payment-identifier': { info: { required: false, id: 'short' } } });
    expect(readPayment(matcher(), [requirement], badId)).to.include('refusal');
  });
});

describe('payment stage 2: the ledger of what is known', () => {
  it('a claimed payment is refused as in progress; held elsewhere as unconfirmed; delivered as 410 or, with another payload, a conflict', async () => {
    const ledger = new PaymentLedger(new MemoryGuard());
    const payment = paymentOf();
    await ledger.refuseKnown(payment);
    expect(await ledger.claim(payment)).to.equal(true);
    expect(await ledger.claim(payment)).to.equal(false);
    expect((await thrown(ledger.refuseKnown(payment))).code).to.equal('PAYMENT_IN_PROGRESS');
    await ledger.markHeld(payment);
    expect((await thrown(ledger.refuseKnown(payment))).code).to.equal('SETTLEMENT_UNCONFIRMED');
    await ledger.markDelivered(payment);
    expect((await thrown(ledger.refuseKnown(payment))).code).to.equal('RESULT_DELIVERED');
    expect((await thrown(ledger.refuseKnown({ ...payment, digest: 'another' }))).code).to.equal('PAYMENT_ID_CONFLICT');
    await ledger.markSettleFailed(payment);
    expect((await thrown(ledger.refuseKnown(payment))).code).to.equal('SETTLEMENT_FAILED');
  });

  it('a result held with REPLICA_URL records where its holder is reached; without it, only that it is held; another payload is a conflict', async () => {
    const guard = new MemoryGuard();
    const payment = paymentOf();
    await new PaymentLedger(guard, () => 'http://10.0.0.5:8080').markHeld(payment);
    const ledger = new PaymentLedger(guard);
    expect(await guard.lookup(payment.id)).to.equal(`held:${payment.digest} http://10.0.0.5:8080`);
    expect(await ledger.holderOf(payment)).to.equal('http://10.0.0.5:8080');
    expect((await thrown(ledger.refuseKnown(payment))).code).to.equal('SETTLEMENT_UNCONFIRMED');
    expect((await thrown(ledger.refuseKnown({ ...payment, digest: 'another' }))).code).to.equal('PAYMENT_ID_CONFLICT');
    await ledger.markHeld(payment);
    expect(await ledger.holderOf(payment)).to.not.exist();
    await ledger.markDelivered(payment);
    expect(await ledger.holderOf(payment)).to.not.exist();
  });

  it('held again after the store lost its records: recorded where nothing is, never over what is (a delivery, another claim)', async () => {
    const guard = new MemoryGuard();
    const holder = new PaymentLedger(guard, () => 'http://10.0.0.5:8080');
    const payment = paymentOf();
    await holder.markHeldAgain(payment);
    expect(await holder.holderOf(payment)).to.equal('http://10.0.0.5:8080');
    await holder.markDelivered(payment);
    await holder.markHeldAgain(payment);
    expect((await thrown(holder.refuseKnown(payment))).code).to.equal('RESULT_DELIVERED');
  });

  it('only an http(s) origin without credentials read from the store is ever contacted; a forwarded request is marked', () => {
    expect(replicaOrigin('http://10.0.0.5:8080')?.href).to.equal('http://10.0.0.5:8080/');
    expect(replicaOrigin('https://replica-2.internal/some/path')?.href).to.equal('https://replica-2.internal/');
    for (const address of [undefined, '', 'file:///etc/passwd', 'gopher://10.0.0.5', 'http://user:pass@10.0.0.5', 'not a url']) expect(replicaOrigin(address), String(address)).to.not.exist();
    expect(wasForwarded({ [FORWARDED_HEADER]: '1' })).to.equal(true);
    expect(wasForwarded({})).to.equal(false);
  });

  it('a released payment can be claimed again; a client id used with one payload refuses another', async () => {
    const ledger = new PaymentLedger(new MemoryGuard());
    const payment = { ...paymentOf(), clientId: 'client-id-0123456789' };
    expect(await ledger.claim(payment)).to.equal(true);
    await ledger.release(payment);
    expect(await ledger.claim(payment)).to.equal(true);
    await ledger.checkClientId(payment);
    expect((await thrown(ledger.checkClientId({ ...payment, digest: 'another' }))).code).to.equal('PAYMENT_ID_CONFLICT');
  });

  it('a guard store that fails is 503 GUARD_UNAVAILABLE, never a claim granted', async () => {
    const broken: PaymentGuard = { claim: () => Promise.reject(new Error('down')), record: () => Promise.reject(new Error('down')), lookup: () => Promise.reject(new Error('down')), release: () => Promise.reject(new Error('down')), onReconnect: () => undefined, close: async () => undefined };
    const ledger = new PaymentLedger(broken);
    expect((await thrown(ledger.claim(paymentOf()))).code).to.equal('GUARD_UNAVAILABLE');
    expect((await thrown(ledger.refuseKnown(paymentOf()))).code).to.equal('GUARD_UNAVAILABLE');
    await ledger.release(paymentOf());
  });
});

describe('payment stage 2b: the payment outlives the call', () => {
  const now = 1_770_000_000_000;
  // Payloads of other schemes and chains, as the gate holds them once matched.
  const unread = (payload: PaymentPayload): Payment => ({ id: 'id', digest: 'digest', payload, matched: payload.accepted });
  const expiring = (seconds: number): Payment => {
    const payload = payloadFor(requirement);
    (payload.payload as { authorization: { validBefore: string } }).authorization.validBefore = String(now / 1000 + seconds);
    return paymentOf(payload);
  };

  it('accepts a Base authorization valid for the work, the push and the settlement margin, and refuses one a second shorter', () => {
    const duration = { workMs: 30_000, pushMs: 20_000 };
    const exactly = (30_000 + 20_000 + SETTLEMENT_MARGIN_MS) / 1000;
    expect(lifetimeProblem(expiring(exactly), duration, now)).to.be.undefined();
    const reason = lifetimeProblem(expiring(exactly - 1), duration, now)!;
    expect(reason).to.contain(`expires in ${exactly - 1} s`);
    expect(reason).to.contain(`needs it valid for at least ${exactly} s`);
    expect(reason).to.contain('the push to deliver_to (20 s)');
    expect(lifetimeProblem(expiring(exactly - 1), { workMs: 30_000 }, now)).to.be.undefined();
  });

  it('reads a deposit\'s ERC-3009 authorization the same way, and leaves a voucher (which does not expire) alone', () => {
    const deposit = unread({ ...payloadFor(requirement), payload: { type: 'deposit', deposit: { authorization: { erc3009Authorization: { validBefore: String(now / 1000 + 5) } } } } } as PaymentPayload);
    expect(lifetimeProblem(deposit, { workMs: 30_000 }, now)).to.contain('expires in 5 s');
    const voucher = unread({ ...payloadFor(requirement), payload: { type: 'voucher', voucher: { maxClaimableAmount: '5000' } } } as PaymentPayload);
    expect(lifetimeProblem(voucher, { workMs: 30_000, pushMs: 20_000 }, now)).to.be.undefined();
  });

  it('refuses a push paid on Solana, whose transaction\'s life cannot be read, and accepts Solana without a push', () => {
    const solana = unread({ ...payloadFor({ ...requirement, network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }), payload: { transaction: 'AAAA' } } as PaymentPayload);
    expect(lifetimeProblem(solana, { workMs: 30_000, pushMs: 20_000 }, now)).to.contain('pay on Base (eip155:8453) for deliver_to');
    expect(lifetimeProblem(solana, { workMs: 30_000 }, now)).to.be.undefined();
  });
});

describe('payment stage 3: verification', () => {
  const server = (verify: () => Promise<unknown>) => ({ verifyPayment: verify }) as unknown as Pick<x402ResourceServer, 'verifyPayment'>;

  it('valid, invalid with the facilitator\'s reason, a 4xx naming a reason: the payer\'s side', async () => {
    expect(await verifyPayment(server(async () => ({ isValid: true })), paymentOf())).to.equal({ kind: 'valid' });
    expect(await verifyPayment(server(async () => ({ isValid: false, invalidReason: 'insufficient_funds' })), paymentOf())).to.equal({ kind: 'invalid', reason: 'insufficient_funds' });
    const answered = Object.assign(new Error('bad'), { statusCode: 400, invalidReason: 'invalid_exact_evm_payload_signature' });
    expect(await verifyPayment(server(() => Promise.reject(answered)), paymentOf())).to.equal({ kind: 'invalid', reason: 'invalid_exact_evm_payload_signature' });
  });

  it('an authorization the facilitator finds already spent is 409 PAYMENT_ALREADY_USED, never a request to pay again', async () => {
    expect((await thrown(verifyPayment(server(async () => ({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' })), paymentOf()))).code).to.equal('PAYMENT_ALREADY_USED');
    const answered = Object.assign(new Error('bad'), { statusCode: 400, invalidReason: 'invalid_exact_evm_nonce_already_used' });
    expect((await thrown(verifyPayment(server(() => Promise.reject(answered)), paymentOf()))).status).to.equal(409);
  });

  it('a Solana transaction the cluster already processed is 409 PAYMENT_ALREADY_USED; any other failed simulation stays the payer\'s 402', async () => {
    const simulated = (invalidMessage: string, invalidReason = 'invalid_exact_svm_transaction_simulation_failed') => server(async () => ({ isValid: false, invalidReason, invalidMessage }));
    expect((await thrown(verifyPayment(simulated('Simulation failed: "AlreadyProcessed"'), paymentOf()))).code).to.equal('PAYMENT_ALREADY_USED');
    expect((await thrown(verifyPayment(server(async () => ({ isValid: false, invalidReason: 'invalid_exact_svm_smart_wallet_simulation_failed: Simulation failed: "AlreadyProcessed"' })), paymentOf()))).code).to.equal('PAYMENT_ALREADY_USED');
    const answered = Object.assign(new Error('bad'), { statusCode: 400, invalidReason: 'invalid_exact_svm_transaction_simulation_failed', invalidMessage: 'Simulation failed: "AlreadyProcessed"' });
    expect((await thrown(verifyPayment(server(() => Promise.reject(answered)), paymentOf()))).status).to.equal(409);
    expect(await verifyPayment(simulated('Simulation failed: {"InstructionError":[2,{"Custom":1}]}'), paymentOf())).to.equal({ kind: 'invalid', reason: 'invalid_exact_svm_transaction_simulation_failed' });
    expect(await verifyPayment(simulated('Simulation failed: "BlockhashNotFound"'), paymentOf())).to.equal({ kind: 'invalid', reason: 'invalid_exact_svm_transaction_simulation_failed' });
    expect(await verifyPayment(simulated('AlreadyProcessed', 'invalid_exact_svm_payload_signature'), paymentOf())).to.equal({ kind: 'invalid', reason: 'invalid_exact_svm_payload_signature' });
  });

  it('a facilitator that refuses this service\'s credentials is 502 FACILITATOR_REFUSED; one that fails is 502 FACILITATOR_UNREACHABLE', async () => {
    const refused = new FacilitatorRefusedError('facilitator.example', 'verify', 401, 'bad key', undefined);
    expect((await thrown(verifyPayment(server(() => Promise.reject(refused)), paymentOf()))).code).to.equal('FACILITATOR_REFUSED');
    expect((await thrown(verifyPayment(server(() => Promise.reject(new Error('ECONNRESET'))), paymentOf()))).code).to.equal('FACILITATOR_UNREACHABLE');
  });
});

describe('payment stage 5: settlement', () => {
  const server = (settle: () => Promise<SettleResponse>) => ({ settlePayment: settle }) as unknown as Pick<x402ResourceServer, 'settlePayment'>;
  const settleError = (errorReason?: string) => Object.assign(new Error('settle failed'), { name: 'SettleError', errorReason });

  it('classifies the facilitator\'s answer by what it proves about the transfer', async () => {
    const receipt: SettleResponse = { success: true, transaction: '0xabc', network: BASE };
    expect(await settlePayment(server(async () => receipt), paymentOf(), false)).to.equal({ kind: 'settled', receipt });
    expect((await settlePayment(server(() => Promise.reject(settleError('invalid_exact_evm_insufficient_funds'))), paymentOf(), false)).kind).to.equal('failed');
    expect((await settlePayment(server(() => Promise.reject(settleError('settlement_pending'))), paymentOf(), false)).kind).to.equal('unknown');
    expect((await settlePayment(server(() => Promise.reject(new Error('socket hang up'))), paymentOf(), false)).kind).to.equal('unknown');
    expect((await settlePayment(server(async () => ({ success: false, errorReason: 'settlement_pending', transaction: '', network: BASE })), paymentOf(), false)).kind).to.equal('unknown');
    const refused = new FacilitatorRefusedError('facilitator.example', 'settle', 401, '', undefined);
    expect((await settlePayment(server(() => Promise.reject(refused)), paymentOf(), false)).kind).to.equal('refused');
  });

  it('an authorization already spent is "spent" on a first settlement (never a request to pay again) and "settled" on the retry of a held result', async () => {
    const spent = server(() => Promise.reject(settleError('invalid_exact_evm_nonce_already_used')));
    expect(await settlePayment(spent, paymentOf(), false)).to.equal({ kind: 'spent', reason: 'invalid_exact_evm_nonce_already_used' });
    const retried = await settlePayment(spent, paymentOf(), true, { success: false, transaction: '0xfirst', network: BASE });
    expect(retried).to.equal({ kind: 'settled', receipt: { success: true, transaction: '0xfirst', network: BASE } });
  });

  it('a Solana transaction the cluster already processed is "spent" on a first settlement and "settled" on the retry of a held result', async () => {
    for (const reason of ['invalid_exact_svm_transaction_simulation_failed', 'transaction_simulation_failed']) {
      const processed = server(() => Promise.reject(Object.assign(settleError(reason), { errorMessage: 'Simulation failed: "AlreadyProcessed"' })));
      expect(await settlePayment(processed, paymentOf(), false), reason).to.equal({ kind: 'spent', reason });
      expect(await settlePayment(processed, paymentOf(), true, { success: false, transaction: 'firstSignature', network: BASE }), reason)
        .to.equal({ kind: 'settled', receipt: { success: true, transaction: 'firstSignature', network: BASE } });
    }
    // Blockhash gone: the status cache no longer remembers, so it proves nothing; the result stays held.
    const forgotten = server(() => Promise.reject(Object.assign(settleError('invalid_exact_svm_transaction_simulation_failed'), { errorMessage: 'Simulation failed: "BlockhashNotFound"' })));
    expect((await settlePayment(forgotten, paymentOf(), true)).kind).to.equal('unknown');
  });

  it('on a retry, a Solana facilitator still settling the transaction, or failing to simulate it again, leaves the outcome unknown (the result stays held), never "failed"', async () => {
    for (const reason of ['duplicate_settlement', 'transaction_simulation_failed', 'invalid_exact_svm_transaction_simulation_failed']) {
      const answer = server(async () => ({ success: false, errorReason: reason, transaction: '', network: BASE }));
      expect((await settlePayment(answer, paymentOf(), true)).kind, reason).to.equal('unknown');
      expect((await settlePayment(answer, paymentOf(), false)).kind, reason).to.equal('failed');
    }
  });
});

describe('payment stage 6: holding and handing over', () => {
  const result = { heldBytes: 10, discarded: 0, discard() { this.discarded++; } };

  it('a settled result is held until sent: not received keeps it (and marks it held), received drops it and remembers the delivery', async () => {
    const guard = new MemoryGuard();
    const ledger = new PaymentLedger(guard);
    const holding = new ResultHolding({ settlePayment: async () => { throw new Error('not asked'); }, verifyPayment: async () => { throw new Error('not asked'); } }, ledger, createMetrics({ queueDepth: () => 0, busyWorkers: () => 0 }));
    const payment = paymentOf();
    const outcome = holding.deliver(payment, result, { success: true, transaction: '0x1', network: BASE });
    expect(outcome.kind).to.equal('paid');
    if (outcome.kind !== 'paid') return;
    outcome.sent(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(holding.heldFor(payment)).to.exist();
    expect(await guard.lookup(payment.id)).to.equal(`held:${payment.digest}`);
    const again = await holding.redeliver(payment, holding.heldFor(payment)!);
    if (again.kind !== 'paid') throw new Error('not paid');
    again.sent(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(holding.heldFor(payment)).to.not.exist();
    expect(await guard.lookup(payment.id)).to.equal(`delivered:${payment.digest}`);
  });

  it('an unconfirmed result is settled by its retry; a retry whose settlement fails gets nothing and the result is discarded; another payload is a conflict', async () => {
    const ledger = new PaymentLedger(new MemoryGuard());
    let answer: () => Promise<SettleResponse> = async () => ({ success: true, transaction: '0x2', network: BASE });
    const facilitator = { settlePayment: () => answer(), verifyPayment: async () => ({ isValid: true }) };
    const holding = new ResultHolding(facilitator, ledger, createMetrics({ queueDepth: () => 0, busyWorkers: () => 0 }));
    const payment = paymentOf();
    await holding.holdUnconfirmed(payment, result, undefined);
    expect((await thrown(holding.redeliver({ ...payment, digest: 'other' }, holding.heldFor(payment)!))).code).to.equal('PAYMENT_ID_CONFLICT');
    const settled = await holding.redeliver(payment, holding.heldFor(payment)!);
    expect(settled.kind === 'paid' && settled.receipt.transaction).to.equal('0x2');

    const second = paymentOf(payloadFor(requirement, `0x${'cd'.repeat(32)}`));
    await holding.holdUnconfirmed(second, result, undefined);
    answer = () => Promise.reject(Object.assign(new Error('x'), { name: 'SettleError', errorReason: 'invalid_exact_evm_insufficient_funds' }));
    const before = result.discarded;
    expect((await thrown(holding.redeliver(second, holding.heldFor(second)!))).code).to.equal('SETTLEMENT_FAILED');
    expect(result.discarded).to.equal(before + 1);
    expect(holding.heldFor(second)).to.not.exist();
  });

  it('a retry the facilitator will not settle yet (a Solana transaction it still holds as settling) asks its verification: already processed is delivered, charged once; otherwise the result stays held', async () => {
    const ledger = new PaymentLedger(new MemoryGuard());
    let verified: () => Promise<{ isValid: boolean; invalidReason?: string; invalidMessage?: string }> = async () => ({ isValid: true });
    const settleAnswers: string[] = [];
    const holding = new ResultHolding({
      settlePayment: async () => { settleAnswers.push('duplicate_settlement'); return { success: false, errorReason: 'duplicate_settlement', transaction: '', network: BASE }; },
      verifyPayment: () => verified(),
    } as never, ledger, createMetrics({ queueDepth: () => 0, busyWorkers: () => 0 }));
    const payment = paymentOf();
    await holding.holdUnconfirmed(payment, result, { success: false, transaction: 'firstSignature', network: BASE });
    // Not yet on the chain (the simulation passes): the outcome is unknown, the result stays held.
    expect((await thrown(holding.redeliver(payment, holding.heldFor(payment)!))).code).to.equal('SETTLEMENT_UNCONFIRMED');
    expect(holding.heldFor(payment)).to.exist();
    verified = async () => ({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed', invalidMessage: 'Simulation failed: "AlreadyProcessed"' });
    const delivered = await holding.redeliver(payment, holding.heldFor(payment)!);
    expect(delivered.kind === 'paid' && delivered.receipt).to.equal({ success: true, transaction: 'firstSignature', network: BASE });
    expect(settleAnswers.length).to.equal(2);
  });

  it('a Base retry whose settlement fails asks the chain: used is delivered, expired unspent is a 402 saying so, unreadable stays held, still valid keeps the failure', async () => {
    const guard = new MemoryGuard();
    let state: () => Promise<AuthorizationState | undefined> = async () => 'used';
    const reader: AuthorizationReader = { stateOf: () => state() };
    const expiredAnswer = async (): Promise<SettleResponse> => { throw Object.assign(new Error('x'), { name: 'SettleError', errorReason: 'invalid_exact_evm_payload_authorization_valid_before' }); };
    const facilitator = { settlePayment: expiredAnswer, verifyPayment: async () => ({ isValid: true }) };
    const metrics = createMetrics({ queueDepth: () => 0, busyWorkers: () => 0 });
    const holding = new ResultHolding(facilitator, new PaymentLedger(guard), metrics, reader);
    const nonce = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
    const held = async (n: number) => {
      const payment = paymentOf(payloadFor(requirement, nonce(n)));
      await holding.holdUnconfirmed(payment, { ...result }, { success: false, errorReason: 'settlement_pending', transaction: '0xfirst', network: BASE });
      return payment;
    };

    const used = await held(1);
    const delivered = await holding.redeliver(used, holding.heldFor(used)!);
    expect(delivered.kind === 'paid' && delivered.receipt).to.equal({ success: true, transaction: '0xfirst', network: BASE });

    state = async () => 'expired-unused';
    const expired = await held(2);
    const refusal = await thrown(holding.redeliver(expired, holding.heldFor(expired)!));
    expect(refusal.code).to.equal('SETTLEMENT_FAILED');
    expect(refusal.message).to.contain('expired');
    expect(refusal.message).to.contain('nothing was charged');
    expect(holding.heldFor(expired)).to.not.exist();
    expect(await guard.lookup(expired.id)).to.equal('settle-failed');

    state = () => Promise.reject(new Error('rpc timed out'));
    const unreadable = await held(3);
    expect((await thrown(holding.redeliver(unreadable, holding.heldFor(unreadable)!))).code).to.equal('SETTLEMENT_UNCONFIRMED');
    expect(holding.heldFor(unreadable)).to.exist();

    state = async () => 'unused';
    const valid = await held(4);
    expect((await thrown(holding.redeliver(valid, holding.heldFor(valid)!))).message).to.contain('invalid_exact_evm_payload_authorization_valid_before');
    expect(holding.heldFor(valid)).to.not.exist();
  });

  it('an authorization is expired only when unused at a block whose timestamp is not below validBefore; only a well-formed EIP-3009 one is read', () => {
    expect(classify(true, 2000n, 1000n)).to.equal('used');
    expect(classify(false, 1000n, 1000n)).to.equal('expired-unused');
    expect(classify(false, 999n, 1000n)).to.equal('unused');
    expect(authorizationOf(paymentOf())).to.equal({ from: '0x1111111111111111111111111111111111111111', nonce: `0x${'ab'.repeat(32)}`, validBefore: 9999999999n });
    const odd = payloadFor(requirement);
    (odd.payload as { authorization: { validBefore: string } }).authorization.validBefore = '-1';
    expect(authorizationOf(paymentOf(odd))).to.not.exist();
  });
});

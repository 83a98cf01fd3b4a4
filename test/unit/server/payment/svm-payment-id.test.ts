// server/payment/svm-payment-id.ts on payloads built byte by byte: a Solana payment is named by the
// hash of its message (the bytes after the signatures), and a payload without one has no name. On
// real payments through the local chain's facilitator: test/service/payment-rig.test.ts.
import { createHash } from 'node:crypto';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { solanaPaymentId } from '../../../../server/payment/svm-payment-id.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

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

// server/derive/shared-schemas.ts: the error body every description points to covers every code
// of the one catalog as ServiceError.body() writes it; the PaymentRequired schema is x402 v2's.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { Ajv } from 'ajv';
import { ERROR_SCHEMA, PAYMENT_REQUIRED_SCHEMA } from '../../../../server/derive/shared-schemas.js';
import { ERROR_CATALOG, ServiceError, type ErrorCode } from '../../../../core/errors.js';
import { CHAINS } from '../../../support/public-view.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const ajv = new Ajv({ strict: false });
const errorBody = ajv.compile(ERROR_SCHEMA);
const paymentRequired = ajv.compile(PAYMENT_REQUIRED_SCHEMA);

describe('server/derive/shared-schemas', () => {
  it('every code\'s error body, with and without a field, is described; a code outside the catalog is not', () => {
    const codes = Object.keys(ERROR_CATALOG) as ErrorCode[];
    expect(codes.length).to.be.above(20);
    for (const code of codes) {
      expect(errorBody(new ServiceError(code).body()), code).to.be.true();
      expect(errorBody(new ServiceError(code, 'a message', { field: 'file' }).body()), code).to.be.true();
    }
    expect(errorBody({ error: { code: 'NOT_A_CODE', status: 400, message: 'x' } })).to.be.false();
    expect(errorBody({ error: { code: 'INTERNAL', status: 500 } })).to.be.false();
  });

  it('a v2 PaymentRequired with exact and channel offers is described; a v1 document is not', () => {
    const accepts = CHAINS.map((chain) => ({ scheme: 'exact', network: chain.network, amount: '5000', asset: chain.asset, payTo: chain.payTo, maxTimeoutSeconds: 300 }));
    const offer = { x402Version: 2, resource: { url: 'https://paydoc.example/v1/image/resize', mimeType: 'image/png' }, accepts: [...accepts, { ...accepts[0], scheme: 'batch-settlement', extra: { withdrawDelay: 900 } }] };
    expect(paymentRequired(offer), ajv.errorsText(paymentRequired.errors)).to.be.true();
    expect(paymentRequired({ ...offer, x402Version: 1 })).to.be.false();
    expect(paymentRequired({ ...offer, accepts: [{ ...accepts[0], scheme: 'upto' }] })).to.be.false();
  });
});

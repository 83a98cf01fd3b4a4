// server/derive/openapi.ts: the OpenAPI document on deployments a service test does not start
// (channels, URL inputs off, a local engine), the JSON Schema to OpenAPI 3.0 conversion, and the
// price agent wallets budget with (x-payment-info) for flat, capped and uncapped per-page operations.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { operationById, operations } from '../../../../operations/index.js';
import { openapiDocument, toOas30 } from '../../../../server/derive/openapi.js';
import { CHANNEL_TERMS, publicView } from '../../../support/public-view.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

interface Doc { paths: Record<string, { post?: Post; get?: Record<string, unknown> }>; info: Record<string, string> }
interface Post { operationId: string; description: string; responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, unknown> }>; 'x-payment-info': unknown; 'x-x402': Record<string, unknown> }
const doc = (view = publicView()) => openapiDocument(view) as unknown as Doc;
const post = (id: string, view = publicView()) => doc(view).paths[operationById(id).path].post!;

describe('server/derive/openapi', () => {
  it('toOas30: a type list with null becomes nullable, contentEncoding and $schema go, at every depth', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object',
      properties: { a: { type: ['string', 'null'], contentEncoding: 'base64' }, b: { type: ['integer'] }, c: { anyOf: [{ type: ['number', 'null'] }] } },
    };
    expect(toOas30(schema)).to.equal({
      type: 'object',
      properties: { a: { type: 'string', nullable: true }, b: { type: 'integer' }, c: { anyOf: [{ type: 'number', nullable: true }] } },
    });
    // Several types: OpenAPI 3.0 takes nullable only beside a type, so each alternative carries it.
    expect(toOas30({ type: ['string', 'boolean', 'null'] })).to.equal({ anyOf: [{ type: 'string', nullable: true }, { type: 'boolean', nullable: true }] });
    expect(toOas30({ type: ['string', 'boolean'] })).to.equal({ anyOf: [{ type: 'string' }, { type: 'boolean' }] });
  });

  it('x-payment-info: fixed for a flat price, a range for a capped per-page price, a minimum alone when uncapped', () => {
    expect(post('image.resize')['x-payment-info']).to.equal({ price: { mode: 'fixed', currency: 'USD', amount: '0.005' }, protocols: [{ x402: {} }] });
    expect(post('pdf.render')['x-payment-info']).to.equal({ price: { mode: 'dynamic', currency: 'USD', min: '0.01', max: '0.5' }, protocols: [{ x402: {} }] });
    expect(post('pdf.split')['x-payment-info']).to.equal({ price: { mode: 'dynamic', currency: 'USD', min: '0.005' }, protocols: [{ x402: {} }] });
    expect(post('pdf.render')['x-x402'].dynamicPrice).to.equal({ minAmount: '10000', minUsd: '0.01', maxAmount: '500000', maxUsd: '0.5' });
    expect(post('image.resize')['x-x402'].dynamicPrice).to.be.undefined();
  });

  it('the 200\'s media types: the result\'s own and JSON; JSON alone for a JSON result; the report header where there is one', () => {
    expect(Object.keys(post('image.resize').responses[200].content!)).to.equal(['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'application/json']);
    expect(Object.keys(post('pdf.markdown').responses[200].content!)).to.equal(['text/markdown', 'application/json']);
    expect(Object.keys(post('pdf.extract').responses[200].content!)).to.equal(['application/json']);
    expect(Object.keys(post('pdf.redact').responses[200].headers!)).to.equal(['PAYMENT-RESPONSE', 'Paydoc-Redactions']);
    expect(Object.keys(post('pdf.split').responses[200].headers!)).to.equal(['PAYMENT-RESPONSE']);
  });

  it('a model operation\'s 503 names the provider only where content is sent to it; its description where it stays', () => {
    expect(post('image.ocr').responses[503].description).to.startWith('The model provider is not configured on this deployment, or the service is busy (Retry-After); ');
    const local = publicView({ ocrEngine: 'tesseract' });
    expect(post('image.ocr', local).responses[503].description).to.startWith('The service is busy (Retry-After); ');
    expect(post('image.ocr', local).description).to.include('On this service OCR runs on this server (tesseract)');
    expect(post('image.ocr', local)['x-x402'].thirdParty).to.equal({ sendsContent: false, engine: 'tesseract (local)', languages: ['eng'], available: true });
    expect(post('image.resize').responses[501].description).to.equal('Not implemented: GIF input.');
    expect(post('pdf.split').responses[501].description).to.equal('Not implemented.');
  });

  it('the refund route and the channel sentence only where channels are offered; deliver_to only where URLs are on', () => {
    const withChannels = doc(publicView({}, CHANNEL_TERMS));
    expect(withChannels.paths['/v1/channels/refund'].get!.operationId).to.equal('channelRefund');
    expect(withChannels.info['x-guidance']).to.include('Payment channels (x402 batch-settlement)');
    expect(post('pdf.split', publicView({}, CHANNEL_TERMS))['x-x402'].schemes).to.equal([
      { scheme: 'exact', network: 'eip155:84532' }, { scheme: 'exact', network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1' }, { scheme: 'batch-settlement', network: 'eip155:84532' },
    ]);
    const plain = doc();
    expect(plain.paths['/v1/channels/refund']).to.be.undefined();
    expect(plain.info['x-guidance']).to.not.include('Payment channels');
    expect(plain.info['x-guidance']).to.include('"deliver_to": "<https URL>"');
    expect(doc(publicView({ urlInputs: 'off' })).info['x-guidance']).to.not.include(['deliver_to', '"url"']);
  });

  it('every operation is a POST under its path with its tool\'s name; the free routes take no authentication', () => {
    const document = doc();
    for (const op of operations) expect(document.paths[op.path].post!.operationId, op.id).to.equal(op.tool.replace(/^svc_/, ''));
    for (const path of ['/v1/health', '/openapi.json', '/v1/discovery', '/.well-known/x402', '/v1/results/{token}', '/llms.txt']) {
      expect(document.paths[path].get!.security, path).to.equal([]);
    }
  });
});

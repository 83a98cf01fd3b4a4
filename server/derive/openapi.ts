// The OpenAPI 3.0.3 description, derived from the operation table. Served at /openapi.json
// (canonical) and /v1/openapi.json.
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { ERROR_SCHEMA, PAYMENT_REQUIRED_SCHEMA } from './shared-schemas.js';
import { formJsonSchema } from './fields.js';
import { outputMediaTypes } from './resources.js';
import { priceRange, toUsd } from '../payment/pricing.js';
import { thirdPartyInfo } from './catalog.js';
import { operationDescription, sendsContent } from './descriptions.js';
import type { PublicView } from './view.js';

export const API_VERSION = '0.1.0';

/** JSON Schema (2020-12 style) to the OpenAPI 3.0 dialect: type arrays with null become nullable. */
export function toOas30(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOas30);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'contentEncoding' || key === '$schema') continue;
    if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null');
      out.type = types[0];
      if (types.length < value.length) out.nullable = true;
      continue;
    }
    out[key] = toOas30(value);
  }
  return out;
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function successContent(op: Operation): Record<string, unknown> {
  if (op.output.jsonSchema) return { 'application/json': { schema: toOas30(op.output.jsonSchema) } };
  if (op.output.mediaType === 'text/markdown; charset=utf-8') return { 'text/markdown': { schema: { type: 'string' } } };
  return Object.fromEntries(outputMediaTypes(op).map((t) => [t, { schema: { type: 'string', format: 'binary' } }]));
}

function operationObject(op: Operation, app: PublicView): Record<string, unknown> {
  const range = priceRange(op);
  const responses: Record<string, unknown> = {
    200: {
      description: `${op.output.description} The PAYMENT-RESPONSE header carries the settlement receipt.`,
      headers: { 'PAYMENT-RESPONSE': { description: 'base64 JSON x402 SettleResponse (the receipt).', schema: { type: 'string' } } },
      content: successContent(op),
    },
    402: {
      description: 'Payment required (no or invalid payment). The PAYMENT-REQUIRED header carries the exact price per chain; the body carries the same PaymentRequired JSON.',
      headers: { 'PAYMENT-REQUIRED': { description: 'base64 JSON x402 v2 PaymentRequired.', schema: { type: 'string' } } },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/PaymentRequired' } } },
    },
    409: errorResponse('PAYMENT_IN_PROGRESS: a request paid with this payment is still running (retry shortly to receive its result); PAYMENT_ID_CONFLICT: this payment or its payment-identifier was used with a different payload.'),
    410: errorResponse('RESULT_DELIVERED: the result this payment bought was already delivered and, like every result, not kept; nothing more was charged.'),
    413: errorResponse('Payload too large, or a limit exceeded (pages, pixels, ranges, schema size).'),
    422: errorResponse(op.output.unprocessable ?? 'Unsupported or corrupt input, or an invalid field.'),
    501: errorResponse(op.input.kind === 'image' ? 'Not implemented: GIF input.' : 'Not implemented.'),
    502: errorResponse('The payment facilitator or the model provider failed, or FACILITATOR_REFUSED: the facilitator refused this service\'s credentials (the payment is not at fault); nothing was charged.'),
    503: errorResponse(`${sendsContent(op, app) ? 'The model provider is not configured on this deployment, or the service is busy (Retry-After)' : 'The service is busy (Retry-After)'}; or a tool the job needs cannot start here (nothing charged); or SETTLEMENT_UNCONFIRMED: the facilitator did not confirm the settlement, the result is held for a few minutes, and the identical request with the same payment receives it without a second charge (Retry-After).`),
    504: errorResponse('The job passed its time limit; nothing was charged.'),
  };
  const thirdParty = thirdPartyInfo(op, app);
  return {
    operationId: op.tool.replace(/^svc_/, ''),
    summary: op.title,
    description: `${operationDescription(op, app)}\n\nPrice: ${toUsd(BigInt(op.price.rate))} USD ${op.price.model === 'flat' ? 'per call' : 'per page'} (${op.price.rate} atomic USDC).${op.price.note ? ` ${op.price.note}` : ''} MCP tool: \`${op.tool}\`.`,
    tags: [op.input.kind === 'image' ? 'image' : 'pdf'],
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: toOas30(formJsonSchema(op)),
          ...(op.input.count.max > 1 ? { encoding: { file: { contentType: 'application/pdf' } } } : {}),
        },
      },
    },
    responses,
    // Optional: without the payment the answer is the 402 quote.
    security: [{}, { x402: [] }],
    'x-x402': {
      pricingModel: op.price.model,
      amount: String(op.price.rate),
      priceUsd: toUsd(BigInt(op.price.rate)),
      dynamicPrice: op.price.model === 'per-page'
        ? { minAmount: range.min.toString(), minUsd: toUsd(range.min), ...(range.max !== undefined ? { maxAmount: range.max.toString(), maxUsd: toUsd(range.max) } : {}) }
        : undefined,
      asset: 'USDC',
      networks: app.gate.chains.map((c) => c.network),
      category: op.category,
      ...(thirdParty ? { thirdParty } : {}),
    },
  };
}

export function openapiDocument(app: PublicView): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const op of operations) paths[op.path] = { post: operationObject(op, app) };
  const json = (description: string, schema: Record<string, unknown> = { type: 'object' }) => ({ description, content: { 'application/json': { schema } } });
  paths['/v1/health'] = { get: { operationId: 'health', summary: 'Liveness and installed binaries', description: 'Status, version, the binaries the operations need (503 when one is missing), the payment networks and the queue.', tags: ['free'], responses: { 200: json('Healthy.', { $ref: '#/components/schemas/Health' }), 503: json('A required binary is missing.', { $ref: '#/components/schemas/Health' }) } } };
  paths['/openapi.json'] = { get: { operationId: 'openapi', summary: 'This document (canonical)', description: 'The OpenAPI 3.0.3 description of every route, derived from the operation table.', tags: ['free'], responses: { 200: json('OpenAPI 3.0.3') } } };
  paths['/v1/openapi.json'] = { get: { operationId: 'openapiV1', summary: 'This document under /v1', description: 'The same document as /openapi.json.', tags: ['free'], responses: { 200: json('OpenAPI 3.0.3') } } };
  paths['/v1/discovery'] = { get: { operationId: 'discovery', summary: 'Catalog of paid endpoints with live prices', description: 'Every paid endpoint with its price model, live price per chain, input schema and output.', tags: ['free'], responses: { 200: json('The catalog.') } } };
  paths['/.well-known/x402'] = { get: { operationId: 'wellKnownX402', summary: 'x402 discovery document: the paid resources as full URLs', description: 'What x402 crawlers and agent wallets read first.', tags: ['free'], responses: { 200: json('{ version: 1, resources: [URL] }') } } };
  paths['/llms.txt'] = { get: { operationId: 'llmsTxt', summary: 'The service, its prices and how to pay, for language models', description: 'Markdown in the llms.txt convention, derived from the operation table.', tags: ['free'], responses: { 200: { description: 'Markdown.', content: { 'text/markdown': { schema: { type: 'string' } } } } } } };
  return {
    openapi: '3.0.3',
    info: {
      title: 'paydoc: pay-per-call image and PDF processing',
      version: API_VERSION,
      description: 'Every paid endpoint takes multipart/form-data and is paid per call with x402 v2 (USDC on Base or Solana): call without payment to get a 402 with the exact price, sign, and repeat the identical request with the PAYMENT-SIGNATURE header. Errors have one shape: { error: { code, status, message, field? } }. The same 21 operations are MCP tools at /mcp.',
      contact: { name: 'paydoc', url: `${app.config.baseUrl}/` },
      license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
    },
    servers: [{ url: app.config.baseUrl }],
    tags: [
      { name: 'image', description: 'Image operations (JPEG, PNG, WebP in): paid per call.' },
      { name: 'pdf', description: 'PDF operations: paid per call or per page.' },
      { name: 'free', description: 'Free endpoints: health, this document, the catalog, discovery documents.' },
    ],
    paths,
    components: {
      // The x402 payment travels in a header; a request without it is valid and answered 402 with the price.
      securitySchemes: {
        x402: { type: 'apiKey', in: 'header', name: 'PAYMENT-SIGNATURE', description: 'base64 JSON x402 v2 PaymentPayload signed for the exact price of a 402 (any standard x402 client makes it).' },
      },
      schemas: {
        Error: ERROR_SCHEMA,
        PaymentRequired: PAYMENT_REQUIRED_SCHEMA,
        Health: {
          type: 'object', required: ['status', 'version'],
          properties: {
            status: { type: 'string', enum: ['ok', 'degraded'] }, version: { type: 'string' },
            binaries: { type: 'object', additionalProperties: { type: 'boolean' } },
            payments: { type: 'object', additionalProperties: true },
            modelProvider: { type: 'boolean' }, workers: { type: 'integer' }, queueDepth: { type: 'integer' },
          },
        },
      },
    },
  };
}

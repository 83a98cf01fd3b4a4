// The OpenAPI 3.0.3 description, derived from the operation table. Served at /openapi.json
// (canonical) and /v1/openapi.json.
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { INPUT_KINDS, INPUT_TAGS } from '../../operations/input-kinds.js';
import { ERROR_SCHEMA, PAYMENT_REQUIRED_SCHEMA } from './shared-schemas.js';
import { JOB_SCHEMA } from './delivery-schemas.js';
import { formJsonSchema } from './fields.js';
import { mcpInputSchema } from './mcp-schemas.js';
import { jsonAnswerSchema, outputMediaTypes } from './resources.js';
import { priceRange } from '../payment/pricing.js';
import { toUsd } from '../../core/usd.js';
import { thirdPartyInfo } from './catalog.js';
import { operationDescription, sendsContent } from './descriptions.js';
import { channelSentence, paymentSchemes, type PublicView } from './view.js';

export const API_VERSION = '0.1.0';

/** JSON Schema (2020-12 style) to the OpenAPI 3.0 dialect: type arrays with null become nullable, several other types anyOf. */
export function toOas30(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOas30);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'contentEncoding' || key === '$schema') continue;
    if (key === 'type' && Array.isArray(value)) {
      const types = (value as unknown[]).filter((t) => t !== 'null');
      // OpenAPI 3.0 takes nullable only beside a type, so with several types each alternative says it.
      const nullable = types.length < value.length ? { nullable: true } : {};
      if (types.length === 1) Object.assign(out, { type: types[0], ...nullable });
      else out.anyOf = types.map((type) => ({ type, ...nullable }));
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

/**
 * The 200's media types: the result itself (delivery=inline), and JSON for the other two ways
 * out, a one-time link (delivery=link) or the receipt of a push (deliver_to). An operation whose
 * result is JSON has all three under application/json; each has its own required key.
 */
function successContent(op: Operation): Record<string, unknown> {
  const json = { 'application/json': { schema: toOas30(jsonAnswerSchema(op)) } };
  if (op.output.jsonSchema) return json;
  if (op.output.mediaType === 'text/markdown; charset=utf-8') return { 'text/markdown': { schema: { type: 'string' } }, ...json };
  return { ...Object.fromEntries(outputMediaTypes(op).map((t) => [t, { schema: { type: 'string', format: 'binary' } }])), ...json };
}

/**
 * What agent wallets read to budget before calling (the structured x-payment-info of
 * @agentcash/discovery's OpenAPI profile): the flat price, or a per-page price's range, in USD.
 * A per-page operation without a page limit has no upper bound, so it declares only its minimum.
 */
function paymentInfo(op: Operation): Record<string, unknown> {
  const { min, max } = priceRange(op);
  const price = op.price.model === 'flat'
    ? { mode: 'fixed', currency: 'USD', amount: toUsd(min) }
    : { mode: 'dynamic', currency: 'USD', min: toUsd(min), ...(max !== undefined ? { max: toUsd(max) } : {}) };
  return { price, protocols: [{ x402: {} }] };
}

function operationObject(op: Operation, app: PublicView): Record<string, unknown> {
  const range = priceRange(op);
  const maxPrice = range.max !== undefined ? { maxAmount: range.max.toString(), maxUsd: toUsd(range.max) } : {};
  const responses: Record<string, unknown> = {
    200: {
      description: `${op.output.description} With delivery=link or deliver_to, JSON instead: a one-time link to GET the result from, or the receipt of its PUT. The PAYMENT-RESPONSE header carries the settlement receipt.`,
      headers: {
        'PAYMENT-RESPONSE': { description: 'base64 JSON x402 SettleResponse (the receipt).', schema: { type: 'string' } },
        ...(op.output.report ? { [op.output.report.header]: { description: `${op.output.report.description} Compact JSON, whichever way the result is delivered.`, content: { 'application/json': { schema: toOas30(op.output.report.jsonSchema) } } } } : {}),
      },
      content: successContent(op),
    },
    202: {
      description: 'Prefer: respond-async was honoured: the payment is verified (not yet settled) and the job runs on without the client. GET the Location for its state; it is settled only when its result is ready, and a job that fails is never charged.',
      headers: {
        Location: { description: 'BASE_URL/v1/jobs/<token>: the job\'s state and, once done, its one-time result link.', schema: { type: 'string', format: 'uri' } },
        'Preference-Applied': { description: 'respond-async', schema: { type: 'string', enum: ['respond-async'] } },
      },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Job' } } },
    },
    402: {
      description: 'Payment required (no or invalid payment). The PAYMENT-REQUIRED header carries the exact price per chain; the body carries the same PaymentRequired JSON.',
      headers: { 'PAYMENT-REQUIRED': { description: 'base64 JSON x402 v2 PaymentRequired.', schema: { type: 'string' } } },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/PaymentRequired' } } },
    },
    409: errorResponse('PAYMENT_IN_PROGRESS: a request paid with this payment is still running (retry shortly to receive its result); PAYMENT_ID_CONFLICT: this payment or its payment-identifier was used with a different payload; PAYMENT_ALREADY_USED: the payment was already spent on the chain (nothing more was charged).'),
    410: errorResponse('RESULT_DELIVERED: the result this payment bought was already delivered and, like every result, not kept; nothing more was charged.'),
    413: errorResponse('Payload too large, or a limit exceeded (pages, pixels, ranges, schema size); or RESULT_TOO_LARGE: the result is larger than this way of delivery carries (nothing charged; ask for delivery=link).'),
    422: errorResponse(`${op.output.unprocessable ?? 'Unsupported or corrupt input, or an invalid field.'} URL_REFUSED or URL_FETCH_FAILED: a file_url, {url} or deliver_to the service does not fetch from or push to, or could not fetch.`),
    501: errorResponse(op.input.kind === 'image' ? 'Not implemented: GIF input.'
      : op.input.kind === 'page-image' ? 'Not implemented: GIF input, animated images, TIFF files of several pages.' : 'Not implemented.'),
    502: errorResponse('The payment facilitator or the model provider failed, or FACILITATOR_REFUSED: the facilitator refused this service\'s credentials (the payment is not at fault), or DELIVERY_FAILED: deliver_to did not accept the result; nothing was charged.'),
    503: errorResponse(`${sendsContent(op, app) ? 'The model provider is not configured on this deployment, or the service is busy (Retry-After)' : 'The service is busy (Retry-After)'}; or a tool the job needs cannot start here (nothing charged); or SETTLEMENT_UNCONFIRMED: the facilitator did not confirm the settlement, the result is held for a few minutes, and the identical request with the same payment receives it without a second charge (Retry-After).`),
    504: errorResponse('The job passed its time limit; nothing was charged.'),
  };
  const thirdParty = thirdPartyInfo(op, app);
  return {
    operationId: op.tool.replace(/^svc_/, ''),
    summary: op.title,
    description: `${operationDescription(op, app)}\n\nPrice: ${toUsd(BigInt(op.price.rate))} USD ${op.price.model === 'flat' ? 'per call' : 'per page'} (${op.price.rate} atomic USDC).${op.price.note ? ` ${op.price.note}` : ''} MCP tool: \`${op.tool}\`.`,
    tags: [INPUT_KINDS[op.input.kind].tag],
    parameters: [{ $ref: '#/components/parameters/PaymentSignature' }, { $ref: '#/components/parameters/Prefer' }],
    requestBody: {
      required: true,
      description: 'The file(s) and fields as a multipart form (a file part, or file_url in its place), or as JSON in the shape of the MCP tool\'s arguments: { "file": { "data": <standard base64> } or { "url": <https URL> }, ...fields } ("files": [...] for the merges).',
      content: {
        'multipart/form-data': {
          schema: toOas30(formJsonSchema(op)),
          ...(op.input.count.max > 1 ? { encoding: { file: { contentType: INPUT_KINDS[op.input.kind].mediaTypes.join(', ') } } } : {}),
        },
        'application/json': { schema: toOas30(mcpInputSchema(op)) },
      },
    },
    responses,
    // No API authentication: the payment is not a credential but part of each request (the
    // PAYMENT-SIGNATURE parameter), declared by x-payment-info. Agent wallets read a security
    // scheme as an API key to obtain, so there is none.
    security: [],
    'x-payment-info': paymentInfo(op),
    'x-x402': {
      pricingModel: op.price.model,
      amount: String(op.price.rate),
      priceUsd: toUsd(BigInt(op.price.rate)),
      dynamicPrice: op.price.model === 'per-page'
        ? { minAmount: range.min.toString(), minUsd: toUsd(range.min), ...maxPrice }
        : undefined,
      asset: 'USDC',
      networks: app.gate.chains.map((c) => c.network),
      schemes: paymentSchemes(app),
      category: op.category,
      ...(thirdParty ? { thirdParty } : {}),
    },
  };
}

function guidance(app: PublicView, llms: string): string {
  return [
    `Image and PDF processing, paid per call with x402 v2 in USDC (${app.gate.chains.map((c) => c.network).join(', ')}); no account or API key. Read ${llms} for every operation, its price and how to pay.`,
    'Each paid route is a POST: without payment it answers 402 with the exact price for the file sent (every check runs first); an x402 client signs and repeats the identical request. Nothing is charged for a call that fails.',
    app.config.urlInputs === 'on'
      ? 'Send JSON { "file": { "url": "https://..." } or { "data": "<standard base64>" }, ...fields } ("files": [...] for the merges), or a multipart form.'
      : 'Send JSON { "file": { "data": "<standard base64>" }, ...fields } ("files": [...] for the merges), or a multipart form.',
    `Results come back in the answer; add "delivery": "link" for a one-time download link instead${app.config.urlInputs === 'on' ? ', or "deliver_to": "<https URL>" to have the result PUT there' : ''}.`,
    channelSentence(app),
  ].filter(Boolean).join(' ');
}

export function openapiDocument(app: PublicView): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const op of operations) paths[op.path] = { post: operationObject(op, app) };
  const json = (description: string, schema: Record<string, unknown> = { type: 'object' }) => ({ description, content: { 'application/json': { schema } } });
  // Free routes declare explicitly that they take no authentication.
  const free = (operation: Record<string, unknown>) => ({ get: { ...operation, tags: ['free'], security: [] } });
  paths['/v1/health'] = free({ operationId: 'health', summary: 'Liveness and installed binaries', description: 'Status, version, the binaries the operations need (503 when one is missing), the payment networks and the queue.', responses: { 200: json('Healthy.', { $ref: '#/components/schemas/Health' }), 503: json('A required binary is missing.', { $ref: '#/components/schemas/Health' }) } });
  paths['/openapi.json'] = free({ operationId: 'openapi', summary: 'This document (canonical)', description: 'The OpenAPI 3.0.3 description of every route, derived from the operation table.', responses: { 200: json('OpenAPI 3.0.3') } });
  paths['/v1/openapi.json'] = free({ operationId: 'openapiV1', summary: 'This document under /v1', description: 'The same document as /openapi.json.', responses: { 200: json('OpenAPI 3.0.3') } });
  paths['/v1/discovery'] = free({ operationId: 'discovery', summary: 'Catalog of paid endpoints with live prices', description: 'Every paid endpoint with its price model, live price per chain, input schema and output.', responses: { 200: json('The catalog.') } });
  if (app.gate.channelTerms) {
    paths[app.gate.channelTerms.refundPath] = free({
      operationId: 'channelRefund', summary: 'Refund the rest of a payment channel (x402 batch-settlement)',
      description: 'Without payment: 402 with the channel\'s terms. With a refund payload in PAYMENT-SIGNATURE (x402\'s batch-settlement client, refund(url)): what is left of the deposit returns to the buyer on the chain; nothing is charged.',
      responses: { 200: json('The refund\'s transaction, amount and the channel\'s state; the PAYMENT-RESPONSE header carries the receipt.'), 402: json('The channel\'s terms, or why the refund was refused.') },
    });
  }
  paths['/.well-known/x402'] = free({ operationId: 'wellKnownX402', summary: 'x402 discovery document: the paid resources as full URLs', description: 'What x402 crawlers and agent wallets read first.', responses: { 200: json('{ version: 1, resources: [URL] }') } });
  paths['/v1/results/{token}'] = free({
    operationId: 'resultLink', summary: 'Download a result bought with delivery=link (once)',
    description: 'The url a paid call with delivery=link answered. The first complete download ends the link, as does its expiry; the result is not kept.',
    parameters: [{ name: 'token', in: 'path', required: true, description: 'The token in the url the paid call answered.', schema: { type: 'string' } }],
    responses: {
      200: { description: 'The result\'s bytes, with its media type.', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
      410: errorResponse('RESULT_GONE: the link was already downloaded or has expired.'),
    },
  });
  paths['/v1/jobs/{token}'] = free({
    operationId: 'job', summary: 'The state of a long job (Prefer: respond-async)',
    description: `The Location a paid call with Prefer: respond-async answered 202 with. running, then failed (with the error the call without Prefer would have answered) or done (with its one-time result link). Reading it spends nothing. A job is kept in memory ${app.config.resultLinkTtlS} s after it ends (RESULT_LINK_TTL_S), then answers 404.`,
    parameters: [{ name: 'token', in: 'path', required: true, description: 'The token in the Location the paid call answered.', schema: { type: 'string' } }],
    responses: {
      200: json('The job\'s state.', { $ref: '#/components/schemas/Job' }),
      404: errorResponse('NOT_FOUND: no such job; it has expired, or was never made.'),
      503: errorResponse('RESULT_ELSEWHERE: another instance of the service holds the job and could not be reached; retry (Retry-After).'),
    },
  });
  paths['/llms.txt'] = free({ operationId: 'llmsTxt', summary: 'The service, its prices and how to pay, for language models', description: 'Markdown in the llms.txt convention, derived from the operation table.', responses: { 200: { description: 'Markdown.', content: { 'text/markdown': { schema: { type: 'string' } } } } } });
  const llms = `${app.config.baseUrl}/llms.txt`;
  return {
    openapi: '3.0.3',
    info: {
      title: 'paydoc: pay-per-call image, PDF and Office document processing',
      version: API_VERSION,
      description: `Every paid endpoint takes multipart/form-data or JSON and is paid per call with x402 v2 (USDC on Base or Solana): call without payment to get a 402 with the exact price, sign, and repeat the identical request with the PAYMENT-SIGNATURE header. Errors have one shape: { error: { code, status, message, field? } }. The same ${operations.length} operations are MCP tools at /mcp.`,
      // Short guidance agents read with the route list (@agentcash/discovery's info.x-guidance); the rest is in llms.txt.
      'x-guidance': guidance(app, llms),
      contact: { name: 'paydoc', url: `${app.config.baseUrl}/` },
      license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
    },
    'x-agentcash-guidance': { llmsTxtUrl: llms },
    servers: [{ url: app.config.baseUrl }],
    tags: [
      ...INPUT_TAGS,
      { name: 'free', description: 'Free endpoints: health, this document, the catalog, discovery documents.' },
    ],
    paths,
    components: {
      parameters: {
        // The x402 payment travels in a header; a request without it is valid and answered 402 with the price.
        PaymentSignature: {
          name: 'PAYMENT-SIGNATURE', in: 'header', required: false,
          description: 'base64 JSON x402 v2 PaymentPayload signed for the exact price of the 402 this request got without it (any standard x402 client makes it and repeats the request; the v1 name X-PAYMENT is accepted too).',
          schema: { type: 'string' },
        },
        Prefer: {
          name: 'Prefer', in: 'header', required: false,
          description: 'respond-async (RFC 7240): once the payment is verified, answer 202 with the job\'s address instead of waiting for the result, which then comes as a one-time link (or is pushed to deliver_to). Unpaid, the same 402 as without it.',
          schema: { type: 'string' },
        },
      },
      schemas: {
        Error: ERROR_SCHEMA,
        Job: toOas30(JOB_SCHEMA),
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

// JSON Schemas that several descriptions share: the error body and x402's PaymentRequired.
// Written in the subset that is valid both as OpenAPI 3.0.3 and as JSON Schema.
import { ERROR_CATALOG } from '../../core/errors.js';

export const ERROR_SCHEMA: Record<string, unknown> = {
  type: 'object', required: ['error'],
  properties: {
    error: {
      type: 'object', required: ['code', 'status', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_CATALOG) },
        status: { type: 'integer' },
        message: { type: 'string', description: 'Names the problem: the field, what was expected and what was received.' },
        field: { type: 'string' },
      },
    },
  },
};

export const PAYMENT_REQUIRED_SCHEMA: Record<string, unknown> = {
  type: 'object', required: ['x402Version', 'resource', 'accepts'],
  properties: {
    x402Version: { type: 'integer', enum: [2] },
    error: { type: 'string' },
    resource: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, description: { type: 'string' }, mimeType: { type: 'string' } } },
    accepts: {
      type: 'array',
      items: {
        type: 'object', required: ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds'],
        properties: {
          scheme: { type: 'string', enum: ['exact', 'batch-settlement'] }, network: { type: 'string' }, amount: { type: 'string' },
          asset: { type: 'string' }, payTo: { type: 'string' }, maxTimeoutSeconds: { type: 'integer' },
          extra: { type: 'object', additionalProperties: true },
        },
      },
    },
    extensions: { type: 'object', additionalProperties: true },
  },
};

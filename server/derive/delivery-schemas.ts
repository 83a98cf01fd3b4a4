// What a paid call answers instead of the result's bytes when the buyer asked for a link
// (delivery=link) or a push (deliver_to): one declaration for OpenAPI, the MCP output schemas
// and the catalog.

export const LINK_RESULT_SCHEMA = {
  type: 'object',
  required: ['result'],
  properties: {
    result: {
      type: 'object',
      required: ['url', 'mediaType', 'bytes', 'sha256', 'expiresAt'],
      properties: {
        url: { type: 'string', format: 'uri', description: 'GET it once for the bytes (BASE_URL/v1/results/<token>); after the first complete download, or once it expires, it answers 410.' },
        mediaType: { type: 'string', description: 'The result\'s media type.' },
        bytes: { type: 'integer', minimum: 0, description: 'The result\'s size.' },
        sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the result, hex.' },
        expiresAt: { type: 'string', format: 'date-time', description: 'When the link stops working (RESULT_LINK_TTL_S after the answer).' },
      },
    },
  },
} as const;

export const PUSH_RESULT_SCHEMA = {
  type: 'object',
  required: ['delivered'],
  properties: {
    delivered: {
      type: 'object',
      required: ['status', 'bytes', 'sha256', 'mediaType'],
      properties: {
        status: { type: 'integer', minimum: 200, maximum: 299, description: 'What deliver_to answered the PUT.' },
        bytes: { type: 'integer', minimum: 0, description: 'The size of the result that was PUT.' },
        sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the result, hex.' },
        mediaType: { type: 'string', description: 'The Content-Type the result was PUT with.' },
      },
    },
  },
} as const;

/** A long job's answer (the 202 of Prefer: respond-async, and GET /v1/jobs/{token}). */
export const JOB_SCHEMA = {
  type: 'object',
  required: ['job'],
  properties: {
    job: {
      type: 'object',
      required: ['state'],
      properties: {
        url: { type: 'string', format: 'uri', description: 'In the 202 only: where to GET the job\'s state (BASE_URL/v1/jobs/<token>), also in the Location header.' },
        state: { type: 'string', enum: ['running', 'failed', 'done'], description: 'running until the result is ready and settled; failed (nothing charged, except SETTLEMENT_UNCONFIRMED: see error); done.' },
        error: {
          type: 'object', required: ['code', 'status', 'message'], description: 'When failed: the error the call without Prefer would have answered.',
          properties: { code: { type: 'string' }, status: { type: 'integer' }, message: { type: 'string' }, field: { type: 'string' } },
        },
        result: { ...LINK_RESULT_SCHEMA.properties.result, description: 'When done: the one-time result link, as delivery=link answers it.' },
        delivered: { ...PUSH_RESULT_SCHEMA.properties.delivered, description: 'When done with deliver_to: the receipt of the PUT, instead of result.' },
        receipt: { type: 'object', additionalProperties: true, description: 'When done: the x402 SettleResponse, what the PAYMENT-RESPONSE header of a plain call carries (decoded).' },
        report: { type: 'object', additionalProperties: true, description: 'When done, for operations with a report: the report its header would carry.' },
      },
    },
  },
} as const;

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

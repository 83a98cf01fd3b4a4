import { defineOperation } from '../define.js';
import { MODEL_PDF_INPUT, MODEL_TIMEOUT_MS } from '../shared.js';

export const pdfTables = defineOperation({
  id: 'pdf.tables', title: 'Extract tables',
  description: 'Finds the tables on up to 30 pages and returns them as rows of strings.',
  category: 'pdf-extraction', fields: [], input: MODEL_PDF_INPUT, price: { model: 'per-page', rate: 30000 },
  output: {
    mediaType: 'application/json', description: 'JSON { tables: [ { page, title, headers, rows } ] }.',
    jsonSchema: {
      type: 'object', required: ['tables'], additionalProperties: false,
      properties: {
        tables: {
          type: 'array',
          items: {
            type: 'object', required: ['page', 'title', 'headers', 'rows'], additionalProperties: false,
            properties: {
              page: { type: 'integer', minimum: 1, description: '1-based page number.' },
              title: { type: ['string', 'null'], description: 'Caption or title, or null.' },
              headers: { type: 'array', items: { type: 'string' } },
              rows: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
            },
          },
        },
      },
    },
  },
  content: { provider: 'model', localWhen: 'TABLES_ENGINE=local' }, engines: ['mutool'], timeoutMs: MODEL_TIMEOUT_MS,
  plan: () => ({}),
});

import { compileUserSchema } from '../../checks/schema.js';
import { defineOperation } from '../define.js';
import { MODEL_PDF_INPUT, MODEL_TIMEOUT_MS } from '../shared.js';

export const pdfStructured = defineOperation({
  id: 'pdf.structured', title: 'Extract schema-shaped JSON',
  description: 'Extracts an object shaped by the given JSON Schema from up to 30 pages.',
  category: 'pdf-extraction',
  fields: [{ name: 'schema', type: 'string', required: true, minLength: 2, maxBytes: 16 * 1024, secret: true, description: 'A JSON Schema (as a string, at most 16 KB) of the object to extract.', example: '{"type":"object","properties":{"total":{"type":"number"}},"required":["total"]}' }],
  checkFields: (fields) => compileUserSchema(fields.schema),
  input: MODEL_PDF_INPUT, price: { model: 'per-page', rate: 40000 },
  output: {
    mediaType: 'application/json', description: 'JSON { data } where data matches the schema.',
    jsonSchema: { type: 'object', required: ['data'], properties: { data: { type: 'object' } } },
  },
  content: { provider: 'model' }, engines: ['mutool'], timeoutMs: MODEL_TIMEOUT_MS,
  // The worker compiles the checked schema again: a compiled validator cannot cross threads.
  plan: ({ fields }) => ({ schema: fields.schema }),
});

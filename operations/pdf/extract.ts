import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfExtract = defineOperation({
  id: 'pdf.extract', title: 'Extract plain text',
  description: 'The text layer in reading order, the page count, and whether the PDF looks scanned (pages with images and almost no text).',
  category: 'pdf-extraction', fields: [], input: PDF_INPUT, price: { model: 'per-page', rate: 10000 },
  output: {
    mediaType: 'application/json', description: 'JSON { text, pageCount, likelyScanned }.',
    jsonSchema: {
      type: 'object', required: ['text', 'pageCount', 'likelyScanned'], additionalProperties: false,
      properties: {
        text: { type: 'string', description: 'Text of all pages, pages separated by form feeds (U+000C).' },
        pageCount: { type: 'integer', minimum: 1 },
        likelyScanned: { type: 'boolean', description: 'True when the PDF has no usable text layer: use /v1/pdf/ocr.' },
      },
    },
  },
  content: { local: true }, engines: ['pdftotext', 'mutool'], timeoutMs: PDF_TIMEOUT_MS,
  plan: () => ({}),
});

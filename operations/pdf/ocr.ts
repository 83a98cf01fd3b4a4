import { defineOperation } from '../define.js';
import { MODEL_PDF_INPUT, MODEL_TIMEOUT_MS, TEXT_SCHEMA } from '../shared.js';

export const pdfOcr = defineOperation({
  id: 'pdf.ocr', title: 'Recognise text in a PDF',
  description: 'Renders up to 30 pages and recognises their text, in page order.',
  category: 'ocr', fields: [], input: MODEL_PDF_INPUT, price: { model: 'per-page', rate: 30000 },
  output: { mediaType: 'application/json', description: 'JSON { text }.', jsonSchema: TEXT_SCHEMA },
  content: { provider: 'model', localWhen: 'OCR_ENGINE=tesseract' }, engines: ['mutool'], timeoutMs: MODEL_TIMEOUT_MS,
  plan: () => ({}),
});

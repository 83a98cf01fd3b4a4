import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfImages = defineOperation({
  id: 'pdf.images', title: 'Extract embedded images',
  description: 'One PNG per embedded raster image (JPEG sources converted), in a ZIP named image-NNNN.png in the order found; 422 when there are none.',
  category: 'pdf-extraction', fields: [], input: PDF_INPUT, price: { model: 'per-page', rate: 10000 },
  output: {
    mediaType: 'application/zip', description: 'ZIP with one PNG per embedded image.',
    unprocessable: 'Unsupported or corrupt input, an invalid field, or a PDF with no embedded images.',
  },
  content: { local: true }, engines: ['mutool'], timeoutMs: PDF_TIMEOUT_MS,
  plan: () => ({}),
});

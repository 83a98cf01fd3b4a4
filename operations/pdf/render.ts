import { checkRenderPixels } from '../../checks/pdf.js';
import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfRender = defineOperation({
  id: 'pdf.render', title: 'Render pages to PNG',
  description: 'Renders every page (at most 50) to PNG at dpi; a page is bounded to 50 megapixels (larger pages are refused with 413 naming the page).',
  category: 'pdf-processing',
  fields: [{ name: 'dpi', type: 'integer', minimum: 36, maximum: 300, default: 150, description: 'Resolution in dots per inch.' }],
  input: { ...PDF_INPUT, maxPages: 50, pagesReadByMupdf: true }, price: { model: 'per-page', rate: 10000 },
  output: { mediaType: 'application/zip', description: 'ZIP with page-NNNN.png per page, in page order.' },
  content: { local: true }, engines: ['mutool'], timeoutMs: PDF_TIMEOUT_MS,
  plan: async ({ fields, pageBoxes }) => {
    const { dpi } = fields;
    // A huge page at a high dpi is refused from its size before payment, not discovered by the
    // job; unreadable sizes are not a verdict, since the job checks each page again.
    const boxes = await pageBoxes();
    if (boxes) checkRenderPixels(boxes, dpi);
    return { dpi };
  },
});

import { defineOperation } from '../define.js';
import { LEVEL, MERGE_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfMergeCompress = defineOperation({
  id: 'pdf.merge-compress', title: 'Merge and compress PDFs',
  description: 'Joins 2 to 20 PDFs in order and compresses the result, at a bundle rate.',
  category: 'pdf-processing', fields: [LEVEL], input: MERGE_INPUT,
  price: { model: 'per-page', rate: 8000, note: 'Bundle rate; pages are summed over all inputs.' },
  output: { mediaType: 'application/pdf', description: 'One merged and compressed PDF.' },
  content: { local: true }, engines: ['qpdf', 'gs'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields }) => ({ level: fields.level }),
});

import { defineOperation } from '../define.js';
import { MERGE_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfMerge = defineOperation({
  id: 'pdf.merge', title: 'Merge PDFs',
  description: 'Joins 2 to 20 PDFs in the order given, keeping their outlines.',
  category: 'pdf-processing', fields: [], input: MERGE_INPUT, price: { model: 'per-page', rate: 5000, note: 'Pages are summed over all inputs.' },
  output: { mediaType: 'application/pdf', description: 'One PDF with the inputs in order.' },
  content: { local: true }, engines: ['qpdf'], timeoutMs: PDF_TIMEOUT_MS,
  plan: () => ({}),
});

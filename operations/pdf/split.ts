import { parseRanges, type PageRange } from '../../core/page-ranges.js';
import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export interface SplitPlan { ranges: PageRange[] }

export const pdfSplit = defineOperation({
  id: 'pdf.split', title: 'Split a PDF',
  description: 'One PDF per range, in a ZIP whose entries are named part-NN-pA-B.pdf (NN the range number from 01, A-B its first and last page).',
  category: 'pdf-processing',
  fields: [{ name: 'ranges', type: 'string', required: true, minLength: 1, maxLength: 4096, description: 'At most 50 comma-separated ranges such as "1-3,4-6,7-z".', example: '1-3,4-z' }],
  input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: { mediaType: 'application/zip', description: 'ZIP with one PDF per range.' },
  content: { local: true }, engines: ['qpdf'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields, pages }): SplitPlan => ({ ranges: parseRanges(fields.ranges, pages, { field: 'ranges' }) }),
});

import { defineOperation } from '../define.js';
import { LEVEL, PDF_INPUT, PDF_TIMEOUT_MS, type CompressionLevel } from '../shared.js';

export const pdfCompress = defineOperation({
  id: 'pdf.compress', title: 'Compress a PDF',
  description: 'Makes a PDF smaller; never returns a file larger than the input. Links, outlines and searchable text are kept.',
  category: 'pdf-processing', fields: [LEVEL], input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: { mediaType: 'application/pdf', description: 'The compressed PDF.' },
  thirdParty: false, binaries: ['qpdf', 'gs'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields }) => ({ level: fields.level as CompressionLevel }),
});

import { fail } from '../../core/errors.js';
import { defineOperation, type FieldSpec } from '../define.js';
import { KB, LEVEL, PDF_INPUT, PDF_TIMEOUT_MS, TARGET_KB_BOUNDS, TARGET_UNPROCESSABLE, type CompressionLevel } from '../shared.js';

const TARGET_KB = {
  name: 'target_kb', type: 'integer', ...TARGET_KB_BOUNDS,
  description: `Compress to a size: at most this many kilobytes (1 KB = 1024 bytes; ${TARGET_KB_BOUNDS.minimum} to ${TARGET_KB_BOUNDS.maximum}). `
    + 'Instead of `level` (send one or the other): the levels are tried from the best quality down (lossless, balanced, max, then images at 50 and 36 dpi with stronger JPEG compression) '
    + 'and the first at or under the target is returned. When none is, the answer is 422 TARGET_UNREACHABLE naming the smallest size reached, and nothing is charged.',
} as const satisfies FieldSpec;

export interface PdfCompressPlan {
  level: CompressionLevel;
  /** target_kb in bytes: the search's bound, instead of the level. */
  targetBytes?: number;
}

export const pdfCompress = defineOperation({
  id: 'pdf.compress', title: 'Compress a PDF',
  description: 'Makes a PDF smaller; never returns a file larger than the input. Links, outlines and searchable text are kept. With `target_kb`, the best quality at or under that size.',
  category: 'pdf-processing', fields: [LEVEL, TARGET_KB], input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: { mediaType: 'application/pdf', description: 'The compressed PDF.', unprocessable: TARGET_UNPROCESSABLE },
  content: { local: true }, engines: ['qpdf', 'gs'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields, sent }): PdfCompressPlan => {
    const targetKb = fields.target_kb;
    if (targetKb === undefined) return { level: fields.level };
    if (sent('level')) fail('FIELD_INVALID', 'send either "level" or "target_kb": with a target size the service chooses the level', { field: 'target_kb' });
    return { level: fields.level, targetBytes: targetKb * KB };
  },
});

import { parsePageList } from '../../core/page-ranges.js';
import { atLeastOneOf, defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export interface PagesPlan {
  /** The output pages in order (repeats allowed); undefined keeps every page. */
  pages?: number[];
  /** Clockwise rotation of every output page. */
  rotate?: 90 | 180 | 270;
}

export const pdfPages = defineOperation({
  id: 'pdf.pages', title: 'Select, reorder, delete or rotate pages',
  description: 'Keeps the listed pages in the listed order (which deletes and reorders) and/or rotates the output pages clockwise. At least one of pages and rotate is required (422 otherwise).',
  category: 'pdf-processing',
  fields: [
    { name: 'pages', type: 'string', minLength: 1, maxLength: 4096, description: 'Page list such as "3,1-2,z": numbers, ranges a-b, z for the last page.' },
    { name: 'rotate', type: 'integer', enum: [90, 180, 270], description: 'Clockwise rotation applied to every output page.' },
  ],
  checkFields: atLeastOneOf('pages', 'pages', 'rotate'),
  input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: { mediaType: 'application/pdf', description: 'The recomposed PDF.' },
  content: { local: true }, engines: ['qpdf'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields, pages }): PagesPlan => ({
    ...(fields.pages !== undefined ? { pages: parsePageList(fields.pages, pages, { field: 'pages' }) } : {}),
    ...(fields.rotate !== undefined ? { rotate: fields.rotate } : {}),
  }),
});

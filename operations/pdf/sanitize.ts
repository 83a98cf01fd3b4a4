import { REMOVED_KINDS, type SanitizeRequest } from '../../tools/engines/mupdf-js.js';
import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfSanitize = defineOperation({
  id: 'pdf.sanitize', title: 'Sanitize a PDF: scripts, actions, attachments, metadata',
  description: 'Removes JavaScript (document, page, annotation and form scripts), the open action and additional actions, Launch, ImportData, SubmitForm and remote GoTo actions, embedded files and file attachments, XFA forms, and the Info and XMP metadata; keeps the text, images, outline and links. Reports what it removed, by kind and count.',
  category: 'pdf-processing',
  fields: [
    { name: 'keep_links', type: 'string', enum: ['true', 'false'], default: 'true', description: 'true: web links (URI actions) stay; false: they are removed too (the link areas stay, inert).' },
  ],
  input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: {
    mediaType: 'application/pdf', description: 'The sanitized PDF.',
    report: {
      name: 'removed', header: 'Paydoc-Removed',
      description: 'What was removed, by kind and count (kinds not found are absent; {} when the file held none).',
      jsonSchema: {
        type: 'object', additionalProperties: false,
        properties: Object.fromEntries(REMOVED_KINDS.map((kind) => [kind, { type: 'integer', minimum: 1 }])),
      },
    },
  },
  content: { local: true }, engines: [], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields }): SanitizeRequest => ({ keepLinks: fields.keep_links !== 'false' }),
});

import { LAYOUT_BASE_MS, LAYOUT_DEADLINE_SHARE, LAYOUT_MS_PER_KB } from '../../checks/markdown.js';
import { RUN_LIMIT, RUN_STEP } from '../../checks/markdown-page.js';
import { defineOperation, MB } from '../define.js';
import { PDF_TIMEOUT_MS } from '../shared.js';

export const pdfFromMarkdown = defineOperation({
  id: 'pdf.from-markdown', title: 'Typeset Markdown as a PDF',
  description: `Typesets UTF-8 Markdown (CommonMark with tables and strikethrough) as an A4 PDF with embedded fonts, links, an outline and page numbers. Images are skipped and raw HTML is shown as text; nothing is ever fetched. Runs over ${RUN_LIMIT} characters without a space may wrap every ${RUN_STEP} characters; Markdown whose estimated layout passes ${LAYOUT_BASE_MS / 1000} s and ${LAYOUT_MS_PER_KB} ms per KB (far more per byte than READMEs), or ${(PDF_TIMEOUT_MS * LAYOUT_DEADLINE_SHARE) / 1000} s (half the deadline), is refused before payment.`,
  category: 'pdf-processing',
  fields: [{ name: 'title', type: 'string', maxLength: 1000, description: 'Document title metadata.' }],
  input: { kind: 'markdown', maxBytes: 1 * MB, count: { min: 1, max: 1 }, maxTotalBytes: 1 * MB },
  price: { model: 'flat', rate: 10000 },
  output: { mediaType: 'application/pdf', description: 'A typeset A4 PDF.' },
  content: { local: true }, engines: ['python3', 'weasyprint'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields }) => ({ ...(fields.title !== undefined ? { title: fields.title } : {}) }),
});

import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfMarkdown = defineOperation({
  id: 'pdf.markdown', title: 'Convert a PDF to Markdown',
  description: 'Markdown with headings, lists, tables, code, links and reading order recovered from the text layer, and scanned pages read by local OCR where the deployment enables it; nothing leaves the server.',
  category: 'pdf-extraction', fields: [], input: { ...PDF_INPUT, pagesReadByMupdf: true }, price: { model: 'per-page', rate: 20000 },
  output: { mediaType: 'text/markdown; charset=utf-8', description: 'Markdown text.' },
  // tesseract is not listed: its content route requires it only when MARKDOWN_OCR chooses it.
  content: { local: true, scansReadWhen: 'MARKDOWN_OCR=tesseract' }, engines: ['mutool'], timeoutMs: PDF_TIMEOUT_MS,
  plan: () => ({}),
});

import { PAGE_ZIP_LIMITS } from '../../checks/web-page.js';
import type { WebPageForm } from '../../checks/web-page.js';
import { fail } from '../../core/errors.js';
import { defineOperation, MB, type FieldSpec } from '../define.js';

/** The paper sizes Chromium prints on, by the field's names. */
export const PAPER_SIZES = ['a4', 'letter', 'legal', 'a3', 'a5'] as const;
export type Paper = (typeof PAPER_SIZES)[number];

/** Printed pages a call may produce: the price is flat, so the work is bounded. Refused after rendering, uncharged. */
export const WEB_PAGE_LIMIT = 100;
/** A web page's job deadline: loading, scripts and printing together. */
export const WEB_TIMEOUT_MS = 60_000;
/** header_html and footer_html: templates, not documents. */
export const TEMPLATE_MAX_BYTES = 16 * 1024;

/** The fields from-html and from-url share. */
export const PRINT_FIELDS = [
  { name: 'paper', type: 'string', enum: PAPER_SIZES, default: 'a4', description: 'Paper size: a4, letter, legal, a3 or a5.' },
  { name: 'landscape', type: 'boolean', default: false, description: 'true: landscape pages.' },
  { name: 'margin_mm', type: 'integer', minimum: 0, maximum: 50, default: 10, description: 'Margin on all four sides, in millimetres (0 to 50).' },
  { name: 'javascript', type: 'boolean', default: false, description: 'true: the page\'s scripts run before printing (within the deadline); false: they do not run.' },
  {
    name: 'header_html', type: 'string', maxBytes: TEMPLATE_MAX_BYTES,
    description: 'HTML printed at the top of every page (Chromium\'s headerTemplate): elements of class pageNumber, totalPages, date, title and url are filled in.'
      + ' Inline styles only; it fetches nothing (images only as data: URLs); a <link>, an @import or a font by URL is refused before payment.'
      + ' Give it a font-size: Chromium\'s default is tiny.',
  },
  { name: 'footer_html', type: 'string', maxBytes: TEMPLATE_MAX_BYTES, description: 'HTML printed at the bottom of every page (Chromium\'s footerTemplate), with the same classes as header_html.' },
  { name: 'background', type: 'boolean', default: true, description: 'true: background colours and images are printed; false: left out, as a browser prints by default.' },
] as const satisfies readonly FieldSpec[];

// What makes Chromium's printing of a header or footer fail instead of leaving it out: a stylesheet or
// a font it would have to load. Templates load nothing, so these are refused before payment.
const TEMPLATE_LOADS = [
  { pattern: /<link\b/i, what: 'a <link> element' },
  { pattern: /@import\b/i, what: 'an @import rule' },
  { pattern: /@font-face\s*\{[^}]*url\(\s*['"]?(?!data:)/i, what: 'a font by URL (give it as a data: URL)' },
];

/** header_html and footer_html as the print request takes them, refused when they ask to load a stylesheet or a font. */
export function printTemplates(fields: { header_html?: string | undefined; footer_html?: string | undefined }): Pick<PrintRequest, 'headerHtml' | 'footerHtml'> {
  for (const field of ['header_html', 'footer_html'] as const) {
    const loads = TEMPLATE_LOADS.find(({ pattern }) => pattern.test(fields[field] ?? ''));
    if (loads) fail('FIELD_INVALID', `${field} holds ${loads.what}: a header or footer loads nothing, so put its styles inline`, { field });
  }
  return {
    ...(fields.header_html !== undefined ? { headerHtml: fields.header_html } : {}),
    ...(fields.footer_html !== undefined ? { footerHtml: fields.footer_html } : {}),
  };
}

export interface PrintRequest {
  paper: Paper;
  landscape: boolean;
  marginMm: number;
  javascript: boolean;
  headerHtml?: string;
  footerHtml?: string;
  background: boolean;
}

export interface FromHtmlRequest extends PrintRequest {
  form: WebPageForm;
}

export const pdfFromHtml = defineOperation({
  id: 'pdf.from-html', title: 'Typeset an HTML page as a PDF (Chromium)',
  description: `Prints an HTML document, or a ZIP of a page (index.html at its root with its stylesheets, scripts, images and fonts), to PDF with headless Chromium: text stays text, links stay links. Nothing is fetched: every request the page makes is answered from the ZIP or refused. Scripts run only with javascript=true. At most ${WEB_PAGE_LIMIT} pages (refused after rendering, uncharged) within ${WEB_TIMEOUT_MS / 1000} s (a page still loading at the deadline is refused with RENDER_TIMEOUT, uncharged).`,
  category: 'pdf-processing',
  fields: PRINT_FIELDS,
  input: { kind: 'web', maxBytes: 50 * MB, count: { min: 1, max: 1 }, maxTotalBytes: 50 * MB },
  price: { model: 'flat', rate: 20000, note: `A browser per call, at most ${WEB_PAGE_LIMIT} pages; a ZIP may unpack to ${PAGE_ZIP_LIMITS.uncompressedBytes / MB} MB.` },
  output: { mediaType: 'application/pdf', description: 'The page printed as a PDF.' },
  content: { local: true }, engines: ['chromium', 'qpdf'], timeoutMs: WEB_TIMEOUT_MS,
  plan: ({ fields, files }): FromHtmlRequest => {
    const file = files[0];
    if (file?.kind !== 'web') throw new Error('from-html planned without a web page');
    return {
      form: file.form, paper: fields.paper, landscape: fields.landscape, marginMm: fields.margin_mm, javascript: fields.javascript,
      ...printTemplates(fields),
      background: fields.background,
    };
  },
});

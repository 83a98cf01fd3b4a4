import { defineOperation, MB, type FieldSpec } from '../define.js';
import { PRINT_FIELDS, WEB_PAGE_LIMIT, WEB_TIMEOUT_MS, printTemplates, type PrintRequest } from './from-html.js';

/** A PNG of a page is at most this tall, in pixels (the page's width is the viewport's). */
export const PNG_MAX_HEIGHT = 16_384;
/** The viewport a page is loaded in, in CSS pixels: a desktop browser's. */
export const VIEWPORT = { width: 1280, height: 800 } as const;
/** Waited after the page's load event, at most (wait_ms). */
export const WAIT_MS_MAX = 10_000;
/** What a page may fetch per call: the document, its subresources and frames together. */
export const PAGE_FETCH_BUDGET = { requests: 200, totalBytes: 50 * MB } as const;
/** The longest URL taken, as for URL inputs (server/outbound/fetcher.ts MAX_URL_LENGTH). */
const URL_MAX_LENGTH = 8192;

export interface FromUrlRequest extends PrintRequest {
  url: string;
  format: 'pdf' | 'png';
  waitMs: number;
}

const URL_FIELDS = [
  {
    name: 'url', type: 'string', required: true, maxLength: URL_MAX_LENGTH, buyerUrl: true, example: 'https://example.com/',
    description: 'The page: an https URL. It and every request the page makes are fetched by the service under its URL rules'
      + ' (URL_FETCH_ALLOW, public addresses only, redirects, size and time limits).',
  },
  ...PRINT_FIELDS,
  {
    name: 'format', type: 'string', enum: ['pdf', 'png'], default: 'pdf',
    description: `pdf: the page printed; png: a full-page screenshot ${VIEWPORT.width} pixels wide, at most ${PNG_MAX_HEIGHT} tall.`,
  },
  {
    name: 'wait_ms', type: 'integer', minimum: 0, maximum: WAIT_MS_MAX, default: 0,
    description: `Milliseconds waited after the page has loaded, before printing (0 to ${WAIT_MS_MAX}).`,
  },
] as const satisfies readonly FieldSpec[];

export const pdfFromUrl = defineOperation({
  id: 'pdf.from-url', title: 'Print a web page as a PDF or PNG (Chromium)',
  description: 'Loads a web page by its URL in headless Chromium and prints it to PDF, or takes a full-page PNG.'
    + ' Every request the page makes (document, scripts, stylesheets, images, fonts, frames) goes through'
    + ' the service\'s URL fetcher and its rules; nothing else leaves the machine.'
    + ` At most ${PAGE_FETCH_BUDGET.requests} requests and ${PAGE_FETCH_BUDGET.totalBytes / MB} MB per page,`
    + ` ${WEB_PAGE_LIMIT} printed pages (refused after rendering, uncharged),`
    + ` within ${WEB_TIMEOUT_MS / 1000} s (RENDER_TIMEOUT, uncharged).`,
  category: 'pdf-processing',
  fields: URL_FIELDS,
  input: { kind: 'web', maxBytes: 0, count: { min: 0, max: 0 }, maxTotalBytes: 0 },
  price: {
    model: 'flat', rate: 20000,
    note: `A browser per call, at most ${PAGE_FETCH_BUDGET.requests} requests and ${WEB_PAGE_LIMIT} pages.`,
  },
  output: { mediaType: 'application/pdf', description: 'The page printed as a PDF, or as a PNG with format=png.' },
  content: { local: true }, engines: ['chromium', 'qpdf'], timeoutMs: WEB_TIMEOUT_MS,
  plan: ({ fields }): FromUrlRequest => ({
    url: fields.url, format: fields.format, waitMs: fields.wait_ms,
    paper: fields.paper, landscape: fields.landscape, marginMm: fields.margin_mm, javascript: fields.javascript,
    ...printTemplates(fields),
    background: fields.background,
  }),
  resultMediaType: (plan) => (plan.format === 'png' ? 'image/png' : 'application/pdf'),
});

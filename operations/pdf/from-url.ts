import type { PrintRequest } from './from-html.js';

/** A PNG of a page is at most this tall, in pixels (the page's width is the viewport's). */
export const PNG_MAX_HEIGHT = 16_384;
/** The viewport a page is loaded in, in CSS pixels: a desktop browser's. */
export const VIEWPORT = { width: 1280, height: 800 } as const;
/** Waited after the page's load event, at most (wait_ms). */
export const WAIT_MS_MAX = 10_000;
/** What a page may fetch per call: the document, its subresources and frames together. */
export const PAGE_FETCH_BUDGET = { requests: 200, totalBytes: 50 * 1024 * 1024 } as const;

export interface FromUrlRequest extends PrintRequest {
  url: string;
  format: 'pdf' | 'png';
  waitMs: number;
}

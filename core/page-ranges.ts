// The page-range syntax shared by /v1/pdf/pages (`pages`) and /v1/pdf/split (`ranges`):
// comma-separated items, each a page number, `z` (the last page) or a range `a-b` whose ends
// are numbers or `z`. Parsed before payment, so every mistake is named precisely.
import { fail } from './errors.js';

/** At most this many ranges in `ranges` (the spec's Limits table). */
export const MAX_SPLIT_RANGES = 50;
/** A page list may repeat pages, but not without bound: a one-page PDF listed 100 000 times is a cheap way to make a huge job. */
export const MAX_LISTED_PAGES = 10_000;

export interface PageRange {
  first: number;
  last: number;
  /** first..last, explicit. */
  pages: number[];
}

interface ParseOptions {
  field: string;
}

function pageWord(pageCount: number): string {
  return pageCount === 1 ? '1 page' : `${pageCount} pages`;
}

function parseEnd(text: string, item: string, pageCount: number, field: string): number {
  if (/^z$/i.test(text)) return pageCount;
  if (!/^\d+$/.test(text)) {
    fail('FIELD_INVALID', `${field}: "${item}" is not a page number, a range a-b or z`, { field });
  }
  const page = Number(text);
  if (page === 0) fail('FIELD_INVALID', `${field}: page 0 does not exist: pages are numbered from 1`, { field });
  if (!Number.isSafeInteger(page) || page > pageCount) {
    fail('FIELD_INVALID', `${field}: page ${text} does not exist: the PDF has ${pageWord(pageCount)}`, { field });
  }
  return page;
}

function splitItems(text: string, field: string): string[] {
  const items = text.split(',').map((item) => item.trim());
  if (items.length === 1 && items[0] === '') fail('FIELD_INVALID', `${field} is empty: list pages such as "1-3,5,z"`, { field });
  return items;
}

function parseItem(item: string, position: number, pageCount: number, field: string): PageRange {
  if (item === '') fail('FIELD_INVALID', `${field}: item ${position} is empty (two commas in a row, or a comma at an end)`, { field });
  const dash = item.indexOf('-');
  if (dash === -1) {
    const page = parseEnd(item, item, pageCount, field);
    return { first: page, last: page, pages: [page] };
  }
  const first = parseEnd(item.slice(0, dash).trim(), item, pageCount, field);
  const last = parseEnd(item.slice(dash + 1).trim(), item, pageCount, field);
  if (last < first) fail('FIELD_INVALID', `${field}: range ${item.replace(/\s+/g, '')} is reversed (${first} comes after ${last}); write it as ${last}-${first}`, { field });
  const pages: number[] = [];
  for (let page = first; page <= last; page++) pages.push(page);
  return { first, last, pages };
}

/** `pages` of /v1/pdf/pages: the listed pages, in the listed order (repeats allowed). */
export function parsePageList(text: string, pageCount: number, options: ParseOptions = { field: 'pages' }): number[] {
  const { field } = options;
  const items = splitItems(text, field);
  let listed = 0;
  const pages: number[] = [];
  items.forEach((item, index) => {
    const range = parseItem(item, index + 1, pageCount, field);
    listed += range.pages.length;
    if (listed > Math.max(MAX_LISTED_PAGES, pageCount)) {
      fail('LIMIT_EXCEEDED', `${field} lists more than ${Math.max(MAX_LISTED_PAGES, pageCount)} output pages`, { field });
    }
    pages.push(...range.pages);
  });
  return pages;
}

/** `ranges` of /v1/pdf/split: one PageRange per item, at most 50. */
export function parseRanges(text: string, pageCount: number, options: ParseOptions = { field: 'ranges' }): PageRange[] {
  const { field } = options;
  const items = splitItems(text, field);
  if (items.length > MAX_SPLIT_RANGES) {
    fail('LIMIT_EXCEEDED', `${field} holds ${items.length} ranges; at most ${MAX_SPLIT_RANGES} are allowed`, { field });
  }
  return items.map((item, index) => parseItem(item, index + 1, pageCount, field));
}

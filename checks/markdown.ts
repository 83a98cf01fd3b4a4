// Pre-payment checks for /v1/pdf/from-markdown: the upload must be UTF-8, hold something to
// typeset, and not more than one job can typeset in its time and memory. All are cheap, so nobody
// pays for a file the worker would refuse.
import { fail } from '../core/errors.js';
import { estimatedLayoutMs } from './markdown-estimate.js';

// Read by the renderer and the estimate from markdown-page.ts, and by this check's tests from here.
export { BOX_LIMIT, RUN_LIMIT, RUN_STEP } from './markdown-page.js';
export { estimatedLayoutMs } from './markdown-estimate.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Offset of the first byte that does not start a well-formed UTF-8 sequence (Unicode table 3-7:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or -1 when every byte is fine.
 */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) { i += 1; continue; }
    let continuation: number;
    let secondMin = 0x80;
    let secondMax = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) continuation = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      continuation = 2;
      if (lead === 0xe0) secondMin = 0xa0;
      if (lead === 0xed) secondMax = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      continuation = 3;
      if (lead === 0xf0) secondMin = 0x90;
      if (lead === 0xf4) secondMax = 0x8f;
    } else return i;
    for (let k = 1; k <= continuation; k += 1) {
      const byte = bytes[i + k];
      const min = k === 1 ? secondMin : 0x80;
      const max = k === 1 ? secondMax : 0xbf;
      if (byte === undefined || byte < min || byte > max) return i;
    }
    i += continuation + 1;
  }
  return -1;
}

function lineOf(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i += 1) if (bytes[i] === 0x0a) line += 1;
  return line;
}

/**
 * The Markdown as text (a leading byte order mark removed). Throws CORRUPT_INPUT naming the
 * byte offset when the bytes are not UTF-8, and NO_CONTENT when there is nothing but whitespace.
 */
export function decodeMarkdown(bytes: Uint8Array): string {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    const offset = firstInvalidUtf8Offset(bytes);
    if (offset < 0) fail('CORRUPT_INPUT', 'the Markdown is not valid UTF-8', { field: 'file' });
    const byte = bytes[offset]!;
    fail('CORRUPT_INPUT',
      `the Markdown is not valid UTF-8: the byte 0x${byte.toString(16).padStart(2, '0')} at offset ${offset} (line ${lineOf(bytes, offset)}) does not start a valid character`,
      { field: 'file' });
  }
  if (text.trim() === '') {
    fail('NO_CONTENT', 'the Markdown is empty: it holds no characters other than whitespace', { field: 'file' });
  }
  return text;
}

// The layout budget: how much of markdown-estimate.ts's estimate an upload of its size is given.
/** Any Markdown may be estimated at this much layout, whatever its shape. */
export const LAYOUT_BASE_MS = 3_200;
/** What LAYOUT_BASE_MS lets through, measured with the benchmark's documents. */
export const LAYOUT_BASE_SIZE = 'about 30 pages mixing paragraphs, lists, code and tables';
/**
 * Past LAYOUT_BASE_MS, the estimate may grow by this much per KB (1,024 bytes) of Markdown, so
 * that no accepted Markdown costs far more CPU per byte than ordinary documents. The 326 README and
 * CHANGELOG files of more than 8 KB in node_modules are estimated at 18 to 110 ms per KB (median
 * 34), a reference table of options at 170, running text at 6 to 12; Markdown that lays out a short
 * element every few bytes (one-letter paragraphs, list items, headings, code spans, emphasis, table
 * cells) at 220 to 770.
 */
export const LAYOUT_MS_PER_KB = 200;
/**
 * No Markdown may be estimated at more than this share of its job's deadline (60 s of 120 s): the
 * pool runs a job per core, and an estimate met exactly still leaves the job the other half for
 * sharing its core. 1 MB of README and CHANGELOG files is estimated at 39 to 51 s (27 to 30 s of
 * CPU), 1 MB of running text at 12 s (8 s).
 */
export const LAYOUT_DEADLINE_SHARE = 0.5;
/** What the deadline's share lets through, measured (bench/notes/markdown-layout-cost.md). */
export const LAYOUT_CEILING_SIZE = '1 MB of running text, README or CHANGELOG files, or about 360 pages of a changelog dense with lists and links';

/**
 * The most estimated layout, in milliseconds, a Markdown upload of `bytes` is given for a job of
 * `deadlineMs`: LAYOUT_BASE_MS, or LAYOUT_MS_PER_KB for each KB when that is more, and never more
 * than LAYOUT_DEADLINE_SHARE of the deadline.
 */
export function layoutBudgetMs(bytes: number, deadlineMs: number): number {
  return Math.min(deadlineMs * LAYOUT_DEADLINE_SHARE, perByteBudgetMs(bytes));
}
const perByteBudgetMs = (bytes: number) => Math.max(LAYOUT_BASE_MS, (LAYOUT_MS_PER_KB * bytes) / 1024);

/** How much of an upload past the ceiling is scanned again, to say whether it is dense. */
const DENSITY_SAMPLE = 64 * 1024;
const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/**
 * The pre-payment check for a job of `deadlineMs`: throws CORRUPT_INPUT (not UTF-8), NO_CONTENT
 * (empty or whitespace only) or LIMIT_EXCEEDED (an estimate past layoutBudgetMs, saying which
 * part of the budget it passes).
 */
export function inspectMarkdown(bytes: Uint8Array, deadlineMs: number): void {
  const budget = layoutBudgetMs(bytes.length, deadlineMs);
  const ceiling = deadlineMs * LAYOUT_DEADLINE_SHARE;
  // Counting stops at the budget, so a dense 1 MB upload is not scanned whole before payment.
  const markdown = decodeMarkdown(bytes);
  const estimate = estimatedLayoutMs(markdown, budget);
  if (estimate <= budget) return;
  const dense = `far more to typeset per byte than ordinary documents: its estimated layout time passes both ${seconds(LAYOUT_BASE_MS)} and ${LAYOUT_MS_PER_KB} ms per KB of Markdown (README and CHANGELOG files are estimated at 18 to 110 ms per KB); it holds too many short elements for its size (one-line paragraphs, list items, headings, code spans, emphasis or table cells). Join short lines into paragraphs, or split it: a part estimated within ${seconds(LAYOUT_BASE_MS)} (${LAYOUT_BASE_SIZE}) is accepted whatever its shape`;
  if (budget < ceiling) fail('LIMIT_EXCEEDED', `the Markdown costs ${dense}`, { field: 'file' });
  // Past the ceiling: whether its beginning is dense tells the writer what to change.
  const beginning = markdown.slice(0, DENSITY_SAMPLE);
  const denseBeginning = estimatedLayoutMs(beginning) > perByteBudgetMs(Buffer.byteLength(beginning));
  fail('LIMIT_EXCEEDED',
    `the Markdown is more than one job typesets: its estimated layout time passes ${seconds(ceiling)}, ${LAYOUT_DEADLINE_SHARE * 100} % of the job's ${seconds(deadlineMs)} deadline (${LAYOUT_CEILING_SIZE} fit); ${denseBeginning ? `and its beginning costs ${dense}` : 'split it into smaller documents (/v1/pdf/merge joins the PDFs)'}`,
    { field: 'file' });
}

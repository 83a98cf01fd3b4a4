// The fields of /v1/pdf/redact, read and checked before payment: `text` (literal strings),
// `regex` (patterns V8 runs in linear time) and `areas` (rectangles on the pages), each a JSON
// array sent as a string. Every refusal is a 422 that names the field.
import { setFlagsFromString } from 'node:v8';
import { fail } from '../core/errors.js';
import { ATTACHMENT_MODES, LINEAR_REGEXP_FLAG, type AttachmentMode, type RedactionArea, type RedactionRequest } from '../tools/engines/mupdf-js.js';
import type { PageBox } from './pdf.js';

// The engine runs patterns with V8's linear-time engine (the `l` flag); compiling them here with
// the same flag refuses before payment exactly what it would refuse.
setFlagsFromString(LINEAR_REGEXP_FLAG);

export const REDACTION_BOUNDS = {
  texts: 50,
  textChars: 200,
  patterns: 20,
  patternChars: 200,
  areas: 1000,
  /** The JSON of one field, in characters. */
  fieldChars: 64 * 1024,
} as const;

/** The safe subset, as the field descriptions and errors state it. */
export const REGEX_SUBSET = 'JavaScript regular expression syntax without flags, run by a linear-time engine: no backreferences, no lookahead or lookbehind, repetition counts {n,m} of at most 16 (use + or * for longer runs), no \\p{…} classes; case-sensitive (write [Jj]ohn for either case); a pattern must not match the empty string';

function jsonArray(field: string, value: string | undefined, max: number): unknown[] {
  if (value === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    fail('FIELD_INVALID', `${field} must be a JSON array; it is not valid JSON`, { field });
  }
  if (!Array.isArray(parsed)) fail('FIELD_INVALID', `${field} must be a JSON array`, { field });
  if (parsed.length > max) fail('FIELD_INVALID', `${field} holds ${parsed.length} entries; at most ${max} are taken`, { field });
  return parsed;
}

function strings(field: string, value: string | undefined, max: number, maxChars: number): string[] {
  return jsonArray(field, value, max).map((entry, i) => {
    if (typeof entry !== 'string' || entry.trim() === '') fail('FIELD_INVALID', `${field}[${i}] must be a non-empty string`, { field });
    if (entry.length > maxChars) fail('FIELD_INVALID', `${field}[${i}] has ${entry.length} characters; at most ${maxChars} are taken`, { field });
    return entry;
  });
}

function checkPattern(pattern: string, i: number): void {
  const field = 'regex';
  if (/\\[pP]\{/.test(pattern)) fail('FIELD_INVALID', `regex[${i}] uses a \\p{…} class, which needs Unicode mode; the linear-time engine has none: list the characters instead`, { field });
  let compiled: RegExp;
  try {
    // eslint-disable-next-line no-invalid-regexp -- `l` is V8's linear-time flag, enabled above
    compiled = new RegExp(pattern, 'l');
  } catch (err) {
    const why = /linear time/.test((err as Error).message)
      ? 'it cannot run in linear time (a backreference, a lookahead or lookbehind, or a repetition count over 16)'
      : 'it is not a valid regular expression';
    fail('FIELD_INVALID', `regex[${i}] is refused: ${why}. Accepted: ${REGEX_SUBSET}`, { field });
  }
  if (compiled.test('')) fail('FIELD_INVALID', `regex[${i}] matches the empty string; a pattern must match at least one character`, { field });
}

/** `boxes` null: the shape only (before the file is read); undefined: the file's page sizes could not be read. */
function areas(value: string | undefined, boxes: readonly PageBox[] | null | undefined): RedactionArea[] {
  const field = 'areas';
  const list = jsonArray(field, value, REDACTION_BOUNDS.areas);
  if (list.length > 0 && boxes === undefined) fail('CORRUPT_INPUT', 'the PDF\'s page sizes cannot be read, so the areas cannot be placed on its pages', { field: 'file' });
  return list.map((entry, i) => {
    const where = `areas[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) fail('FIELD_INVALID', `${where} must be an object { "page", "x", "y", "width", "height" }`, { field });
    const area = entry as Record<string, unknown>;
    const extra = Object.keys(area).filter((k) => !['page', 'x', 'y', 'width', 'height'].includes(k));
    if (extra.length > 0) fail('FIELD_INVALID', `${where} has keys other than page, x, y, width and height`, { field });
    const number = (key: string) => {
      const n = area[key];
      if (typeof n !== 'number' || !Number.isFinite(n)) fail('FIELD_INVALID', `${where}.${key} must be a number`, { field });
      return n;
    };
    const page = number('page');
    if (!Number.isInteger(page) || page < 1) fail('FIELD_INVALID', `${where}.page must be a page number, 1 for the first page`, { field });
    const [x, y, width, height] = [number('x'), number('y'), number('width'), number('height')];
    if (width <= 0 || height <= 0) fail('FIELD_INVALID', `${where} must have a positive width and height`, { field });
    if (x < 0 || y < 0) fail('FIELD_INVALID', `${where} starts off the page: x and y are measured from the page's top-left corner and cannot be negative`, { field });
    if (!boxes) return { page, x, y, width, height };
    if (page > boxes.length) fail('FIELD_INVALID', `${where}.page is ${page}, but the PDF has ${boxes.length} page${boxes.length === 1 ? '' : 's'}`, { field });
    const box = boxes[page - 1];
    // A hundredth of a point for rounding in the caller's arithmetic.
    if (x + width > box.widthPt + 0.01 || y + height > box.heightPt + 0.01) {
      fail('FIELD_INVALID', `${where} is not on page ${page}, which is ${round(box.widthPt)} x ${round(box.heightPt)} points (x and y from its top-left corner)`, { field });
    }
    return { page, x, y, width, height };
  });
}

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * Reads and checks the three fields; at least one must hold something to redact. With `boxes`
 * null only what the fields say is checked (before the file is read); with the page sizes, the
 * areas are placed on the pages too.
 */
export function parseRedaction(
  fields: { text?: string; regex?: string; areas?: string; attachments?: string }, boxes: readonly PageBox[] | null | undefined,
): RedactionRequest {
  const text = strings('text', fields.text, REDACTION_BOUNDS.texts, REDACTION_BOUNDS.textChars);
  const regex = strings('regex', fields.regex, REDACTION_BOUNDS.patterns, REDACTION_BOUNDS.patternChars);
  regex.forEach(checkPattern);
  const attachments = (fields.attachments ?? 'redact') as AttachmentMode;
  if (!ATTACHMENT_MODES.includes(attachments)) fail('FIELD_INVALID', `attachments must be one of ${ATTACHMENT_MODES.join(', ')}`, { field: 'attachments' });
  const request = { text, regex, areas: areas(fields.areas, boxes), attachments };
  if (text.length + regex.length + request.areas.length === 0) {
    fail('FIELD_INVALID', 'redact needs something to redact: at least one entry in "text", "regex" or "areas"', { field: 'text' });
  }
  return request;
}

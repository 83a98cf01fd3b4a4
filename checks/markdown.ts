// Pre-payment checks for /v1/pdf/from-markdown: the upload must be UTF-8 and hold something
// to typeset. Both are cheap, so nobody pays for a file the worker would refuse.
import { fail } from '../core/errors.js';

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

/** The pre-payment check: throws CORRUPT_INPUT (not UTF-8) or NO_CONTENT (empty or whitespace only). */
export function inspectMarkdown(bytes: Uint8Array): void {
  decodeMarkdown(bytes);
}

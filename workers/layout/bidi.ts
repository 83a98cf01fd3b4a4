// Right-to-left text: Hebrew and Arabic glyphs that mupdf gives in visual order (left to
// right on the page) are put back in reading order; left-to-right runs inside them keep
// theirs, and brackets shown mirrored are turned back.
import type { Span } from './types.js';

/** A glyph with the characters its font maps it to, or a space; `span` indexes the fragment's span that holds it. */
export interface DrawnUnit { span: number; text: string }

export const RTL_LETTER = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/u;
const LTR_LETTER = /[\p{L}\p{N}]/u;
const MIRRORED: Record<string, string> = { '(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{', '<': '>', '>': '<', '«': '»', '»': '«' };

export function mostlyRightToLeft(spans: Span[]): boolean {
  let rtl = 0, ltr = 0;
  for (const s of spans) for (const ch of s.text) {
    if (RTL_LETTER.test(ch)) rtl++;
    else if (LTR_LETTER.test(ch)) ltr++;
  }
  return rtl > ltr;
}

/**
 * Visual order (left to right on the page) to reading order for a right-to-left line: the drawn
 * units reversed (a ligature's characters keep their order), except that runs of left-to-right
 * text inside it (Latin words, numbers, with the spaces and punctuation between them) keep
 * theirs, and paired brackets, which a right-to-left line shows mirrored, are turned back.
 * Styles and links stay with their characters. (The Unicode bidirectional algorithm run
 * backwards, for what one line usually holds.)
 */
export function readingOrder(drawn: DrawnUnit[], spans: Span[]): Span[] {
  const units = [...drawn].reverse();
  const ltr = (text: string) => LTR_LETTER.test(text) && !RTL_LETTER.test(text);
  for (let i = 0; i < units.length;) {
    if (!ltr(units[i]!.text)) { i++; continue; }
    // From this left-to-right unit to the last one before the next right-to-left letter, spaces
    // and punctuation between them included ("Hello World", "3.14", "(15)").
    let end = i;
    for (let j = i + 1; j < units.length && !RTL_LETTER.test(units[j]!.text); j++) if (ltr(units[j]!.text)) end = j;
    const run = units.slice(i, end + 1).reverse();
    units.splice(i, run.length, ...run);
    i = end + 1;
  }
  const out: Span[] = [];
  let from = -1;
  units.forEach(({ text, span }, k) => {
    const between = k > 0 && k < units.length - 1 && ltr(units[k - 1]!.text) && ltr(units[k + 1]!.text);
    const shown = !between && MIRRORED[text] ? MIRRORED[text]! : text;
    if (span === from) out[out.length - 1]!.text += shown;
    else {
      const { text: _text, ...style } = spans[span]!;
      out.push({ ...style, text: shown });
      from = span;
    }
  });
  return out;
}

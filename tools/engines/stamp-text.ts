// What /v1/pdf/stamp writes, without MuPDF: the characters its text may hold, their codes in
// the stamp's font, the text of each page ({n}, {total}), the box a stamp is placed in and the
// matrices that place it. The stamp's font is the standard Helvetica with WinAnsiEncoding: every
// PDF reader has it (PDF's standard 14 fonts), so nothing is embedded, and every reader maps its
// codes back to characters, so the text is selectable and searchable.

/** The characters WinAnsiEncoding gives codes 0x80 to 0x9F (the rest of the encoding is Latin-1's). */
const WIN_ANSI_HIGH: Record<number, number> = {
  0x20ac: 0x80, 0x201a: 0x82, 0x0192: 0x83, 0x201e: 0x84, 0x2026: 0x85, 0x2020: 0x86, 0x2021: 0x87, 0x02c6: 0x88,
  0x2030: 0x89, 0x0160: 0x8a, 0x2039: 0x8b, 0x0152: 0x8c, 0x017d: 0x8e, 0x2018: 0x91, 0x2019: 0x92, 0x201c: 0x93,
  0x201d: 0x94, 0x2022: 0x95, 0x2013: 0x96, 0x2014: 0x97, 0x02dc: 0x98, 0x2122: 0x99, 0x0161: 0x9a, 0x203a: 0x9b,
  0x0153: 0x9c, 0x017e: 0x9d, 0x0178: 0x9f,
};

/** In words, for the documentation and the refusal. */
export const STAMP_CHARACTERS = 'printable ASCII, Latin-1 (U+00A0 to U+00FF) and € ‚ ƒ „ … † ‡ ˆ ‰ Š ‹ Œ Ž ‘ ’ “ ” • – — ˜ ™ š › œ ž Ÿ';

/** The character's code in the stamp's font (WinAnsiEncoding), or undefined when the font has none. */
export function winAnsiCode(codePoint: number): number | undefined {
  if (codePoint >= 0x20 && codePoint <= 0x7e) return codePoint;
  // U+00AD (soft hyphen) is invisible in most readers: refused with the other characters outside the font.
  if (codePoint >= 0xa0 && codePoint <= 0xff && codePoint !== 0xad) return codePoint;
  return WIN_ANSI_HIGH[codePoint];
}

/** The first character of `text` the stamp's font cannot show, as "U+0416 (Ж) at character 3"; undefined when all can. */
export function firstUnsupportedCharacter(text: string): string | undefined {
  let at = 0;
  for (const char of text) {
    at += 1;
    const codePoint = char.codePointAt(0)!;
    if (winAnsiCode(codePoint) !== undefined) continue;
    const code = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
    const shown = /[\p{L}\p{N}\p{P}\p{S}]/u.test(char) ? ` (${char})` : '';
    return `${code}${shown} at character ${at}`;
  }
  return undefined;
}

/** The text as a PDF hex string in WinAnsiEncoding: <48656C6C6F>. Every character must have a code. */
export function winAnsiHex(text: string): string {
  const hex = [...text].map((char) => {
    const code = winAnsiCode(char.codePointAt(0)!);
    if (code === undefined) throw new Error('a character outside WinAnsiEncoding reached the stamp');
    return code.toString(16).toUpperCase().padStart(2, '0');
  });
  return `<${hex.join('')}>`;
}

export interface Numbering {
  /** {n} of the first page of the document. */
  start: number;
  /** {n} is zero-padded to this many digits, when given. */
  digits?: number;
}

/** The text of the page at `index` (0 for the first page of the document): {n} and {total} replaced. */
export function pageText(template: string, index: number, total: number, numbering: Numbering): string {
  const n = numbering.start + index;
  const shown = numbering.digits === undefined ? String(n) : String(Math.abs(n)).padStart(numbering.digits, '0');
  const number = n < 0 && numbering.digits !== undefined ? `-${shown}` : shown;
  return template.replaceAll('{n}', number).replaceAll('{total}', String(total));
}

export const STAMP_POSITIONS = ['center', 'top-left', 'top', 'top-right', 'left', 'right', 'bottom-left', 'bottom', 'bottom-right'] as const;
export type StampPosition = typeof STAMP_POSITIONS[number];

/** The distance, in points, from a stamp not placed at the centre to the edges of the page as displayed. */
export const STAMP_MARGIN_PT = 24;

/** Helvetica's ascender and descender (its AFM's Ascender and Descender, per 1000 units of the em). */
export const HELVETICA_ASCENT = 0.718;
export const HELVETICA_DESCENT = -0.207;

/** [a b c d e f]: PDF's matrix, points as row vectors (x' = a x + c y + e). */
export type Matrix = [number, number, number, number, number, number];

export function concat(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[1] * n[2], m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2], m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4], m[4] * n[1] + m[5] * n[3] + n[5],
  ];
}

export function invert(m: Matrix): Matrix {
  const det = m[0] * m[3] - m[1] * m[2];
  return [m[3] / det, -m[1] / det, -m[2] / det, m[0] / det, (m[2] * m[5] - m[3] * m[4]) / det, (m[1] * m[4] - m[0] * m[5]) / det];
}

export const translate = (x: number, y: number): Matrix => [1, 0, 0, 1, x, y];
export const scale = (x: number, y: number): Matrix => [x, 0, 0, y, 0, 0];
/** Counter-clockwise by `degrees` in a y-up space. */
export function rotate(degrees: number): Matrix {
  const r = (degrees * Math.PI) / 180;
  const cos = Math.cos(r);
  const sin = Math.sin(r);
  return [cos, sin, -sin, cos, 0, 0];
}

/**
 * The matrix that maps the unit square an image is drawn into onto itself so that the image
 * stands as its EXIF orientation (1 to 8) says it is to be shown: PDF readers ignore EXIF.
 */
export function orientationMatrix(orientation: number): Matrix {
  const table: Record<number, Matrix> = {
    2: [-1, 0, 0, 1, 1, 0], 3: [-1, 0, 0, -1, 1, 1], 4: [1, 0, 0, -1, 0, 1],
    5: [0, -1, -1, 0, 1, 1], 6: [0, -1, 1, 0, 0, 1], 7: [0, 1, 1, 0, 0, 0], 8: [0, 1, -1, 0, 1, 0],
  };
  return table[orientation] ?? [1, 0, 0, 1, 0, 0];
}

/** A box in the stamp's own y-up space: the text's advance and Helvetica's ascent and descent, or the image's size. */
export interface StampBox { x0: number; y0: number; x1: number; y1: number }

/** The page as displayed: its size after /Rotate, y down from the top-left corner. */
export interface DisplayedPage { width: number; height: number }

/**
 * The matrix from the stamp's space (y up) to the displayed page's (y down from its top-left
 * corner): the stamp turned `rotation` degrees counter-clockwise about its centre, then placed so
 * that its turned box sits at `position`, STAMP_MARGIN_PT from the edges it is placed against.
 */
export function placement(box: StampBox, page: DisplayedPage, position: StampPosition, rotation: number): Matrix {
  const cx = (box.x0 + box.x1) / 2;
  const cy = (box.y0 + box.y1) / 2;
  const turned = concat(translate(-cx, -cy), rotate(rotation));
  // The half extents of the turned box.
  const corners = [[box.x0, box.y0], [box.x1, box.y0], [box.x0, box.y1], [box.x1, box.y1]]
    .map(([x, y]) => [x * turned[0] + y * turned[2] + turned[4], x * turned[1] + y * turned[3] + turned[5]]);
  const halfWidth = Math.max(...corners.map(([x]) => Math.abs(x)));
  const halfHeight = Math.max(...corners.map(([, y]) => Math.abs(y)));
  const horizontal = position.endsWith('left') ? 'left' : position.endsWith('right') ? 'right' : 'middle';
  const vertical = position.startsWith('top') ? 'top' : position.startsWith('bottom') ? 'bottom' : 'middle';
  const x = horizontal === 'left' ? STAMP_MARGIN_PT + halfWidth
    : horizontal === 'right' ? page.width - STAMP_MARGIN_PT - halfWidth : page.width / 2;
  const y = vertical === 'top' ? STAMP_MARGIN_PT + halfHeight
    : vertical === 'bottom' ? page.height - STAMP_MARGIN_PT - halfHeight : page.height / 2;
  // y up to y down, then to the stamp's place on the displayed page.
  return concat(concat(turned, scale(1, -1)), translate(x, y));
}

/** "#1a2b3c" as PDF's three colour components from 0 to 1. */
export function rgbOf(color: string): [number, number, number] {
  const value = Number.parseInt(color.slice(1), 16);
  return [(value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff].map((c) => Number((c / 255).toFixed(4))) as [number, number, number];
}

/** A number as a content stream writes it: at most four decimals, no exponent. */
export function pdfNumber(n: number): string {
  const fixed = n.toFixed(4).replace(/\.?0+$/, '');
  return fixed === '-0' ? '0' : fixed;
}

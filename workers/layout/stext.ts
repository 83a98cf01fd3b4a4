// Reads mupdf's structured-text XML (`mutool draw -F stext`) into positioned glyph runs.
// The XML form is used rather than stext.json because it keeps the font of every span and
// the exact box of every character, which word gaps, column gutters and table cells need.

export interface Glyph {
  c: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

export interface FontFace {
  bold: boolean;
  italic: boolean;
  mono: boolean;
  size: number;
}

/** A run of one mupdf line in one font: glyphs in reading order. */
export interface GlyphRun {
  font: FontFace;
  glyphs: Glyph[];
}

export interface StextLine {
  runs: GlyphRun[];
}

export interface StextPage {
  width: number;
  height: number;
  lines: StextLine[];
}

const MONO_NAME = /mono|courier|consol|menlo|inconsolata|typewriter|fixed|code|\btt|cmtt|lucidaconsole/i;
const BOLD_NAME = /bold|black|heavy|semibold|demi|-bd\b|,b\b/i;
const ITALIC_NAME = /italic|oblique|-it\b|,i\b/i;

const faceCache = new Map<string, FontFace>();

function faceFor(name: string, size: number): FontFace {
  const key = `${name}\u0000${size}`;
  let face = faceCache.get(key);
  if (!face) {
    face = { bold: BOLD_NAME.test(name), italic: ITALIC_NAME.test(name), mono: MONO_NAME.test(name), size };
    faceCache.set(key, face);
  }
  return face;
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescapeXml(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
    return ENTITY[name] ?? whole;
  });
}

// One pass over the tags with indexOf rather than a regular expression: a page holds
// thousands of <char> tags and this loop is a large share of the conversion's time.
// Attribute values of <char> are read by position because mupdf always writes them in
// the same order: quad="ulx uly urx ury llx lly lrx lry" x=".." y=".." color=".." c="..".
const ATTR = /(\w+)="([^"]*)"/g;

function attrs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  ATTR.lastIndex = 0;
  for (let m = ATTR.exec(text); m; m = ATTR.exec(text)) out[m[1]!] = m[2]!;
  return out;
}

const CHAR_OPEN = '<char quad="';

/**
 * Reads the eight numbers of a quad starting at `at` into `into`; returns the index after
 * them, or -1. Plain decimals are read digit by digit (no substring per number); anything
 * else (an exponent) goes through Number.
 */
function readQuad(xml: string, at: number, into: Float64Array): number {
  for (let k = 0; k < 8; k++) {
    const start = at;
    let negative = false, whole = 0, fraction = 0, scale = 1, dot = false, plain = true;
    for (;; at++) {
      const ch = xml.charCodeAt(at);
      if (ch >= 48 && ch <= 57) {
        if (dot) { fraction = fraction * 10 + (ch - 48); scale *= 10; } else whole = whole * 10 + (ch - 48);
      } else if (ch === 46 && !dot) dot = true;
      else if (ch === 45 && at === start) negative = true;
      else if (ch === 32 || ch === 34 || Number.isNaN(ch)) break; // space, quote, end of text
      else plain = false;
    }
    if (at === start) return -1;
    let value = plain ? whole + fraction / scale : Number(xml.slice(start, at));
    if (!Number.isFinite(value)) return -1;
    if (plain && negative) value = -value;
    into[k] = value;
    at++;
  }
  return at - 1;
}

export function parseStext(xml: string): StextPage[] {
  const pages: StextPage[] = [];
  let page: StextPage | undefined;
  let line: StextLine | undefined;
  let run: GlyphRun | undefined;
  let face: FontFace = faceFor('', 10);
  const quad = new Float64Array(8);
  let pos = 0;
  for (;;) {
    pos = xml.indexOf('<', pos);
    if (pos < 0) break;
    if (xml.startsWith(CHAR_OPEN, pos)) {
      const after = readQuad(xml, pos + CHAR_OPEN.length, quad);
      const cAt = after < 0 ? -1 : xml.indexOf(' c="', after);
      const cEnd = cAt < 0 ? -1 : xml.indexOf('"', cAt + 4);
      if (cEnd < 0) { pos++; continue; }
      pos = cEnd;
      if (!line) continue;
      const c = unescapeXml(xml.slice(cAt + 4, cEnd));
      if (!run) { run = { font: face, glyphs: [] }; line.runs.push(run); }
      run.glyphs.push({
        c,
        x0: Math.min(quad[0]!, quad[2]!, quad[4]!, quad[6]!), x1: Math.max(quad[0]!, quad[2]!, quad[4]!, quad[6]!),
        y0: Math.min(quad[1]!, quad[3]!, quad[5]!, quad[7]!), y1: Math.max(quad[1]!, quad[3]!, quad[5]!, quad[7]!),
      });
      continue;
    }
    const close = xml.indexOf('>', pos);
    if (close < 0) break;
    if (xml.startsWith('<font ', pos)) {
      const a = attrs(xml.slice(pos, close));
      face = faceFor(a.name ?? '', Number(a.size ?? 10));
      run = undefined;
    } else if (xml.startsWith('<line ', pos) || xml.startsWith('<line>', pos)) {
      // Every line takes part in layout; rotated text is kept as plain lines.
      line = { runs: [] };
      run = undefined;
      page?.lines.push(line);
    } else if (xml.startsWith('<page ', pos) || xml.startsWith('<page>', pos)) {
      const a = attrs(xml.slice(pos, close));
      page = { width: Number(a.width ?? 612), height: Number(a.height ?? 792), lines: [] };
      pages.push(page);
      line = undefined;
    } else if (xml.startsWith('</line>', pos) || xml.startsWith('</page>', pos)) {
      line = undefined;
      run = undefined;
    }
    pos = close + 1;
  }
  return pages;
}

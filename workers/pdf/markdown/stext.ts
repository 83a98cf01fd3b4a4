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

/** A piece of one mupdf line in one font: glyphs in reading order. */
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

// One pass over the tags; attribute values are read by position because mupdf always
// writes them in the same order.
const TAG = /<(page|line|font|char)\b([^>]*)>|<\/(line|page)>/g;
const ATTR = /(\w+)="([^"]*)"/g;

function attrs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  ATTR.lastIndex = 0;
  for (let m = ATTR.exec(text); m; m = ATTR.exec(text)) out[m[1]!] = m[2]!;
  return out;
}

export function parseStext(xml: string): StextPage[] {
  const pages: StextPage[] = [];
  let page: StextPage | undefined;
  let line: StextLine | undefined;
  let run: GlyphRun | undefined;
  let face: FontFace = faceFor('', 10);
  TAG.lastIndex = 0;
  for (let m = TAG.exec(xml); m; m = TAG.exec(xml)) {
    const tag = m[1];
    if (tag === 'char') {
      if (!line) continue;
      const a = m[2]!;
      // quad="ulx uly urx ury llx lly lrx lry" ... c="x"
      const q = a.indexOf('quad="');
      const cAt = a.lastIndexOf(' c="');
      if (q < 0 || cAt < 0) continue;
      const quad = a.slice(q + 6, a.indexOf('"', q + 6)).split(' ').map(Number);
      const c = unescapeXml(a.slice(cAt + 4, a.lastIndexOf('"')));
      if (quad.length < 8) continue;
      const xs = [quad[0]!, quad[2]!, quad[4]!, quad[6]!];
      const ys = [quad[1]!, quad[3]!, quad[5]!, quad[7]!];
      if (!run) { run = { font: face, glyphs: [] }; line.runs.push(run); }
      run.glyphs.push({ c, x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys) });
    } else if (tag === 'font') {
      const a = attrs(m[2]!);
      face = faceFor(a.name ?? '', Number(a.size ?? 10));
      run = undefined;
    } else if (tag === 'line') {
      const a = attrs(m[2]!);
      // Only horizontal left-to-right lines take part in layout; rotated text is kept as plain lines.
      void a;
      line = { runs: [] };
      run = undefined;
      page?.lines.push(line);
    } else if (tag === 'page') {
      const a = attrs(m[2]!);
      page = { width: Number(a.width ?? 612), height: Number(a.height ?? 792), lines: [] };
      pages.push(page);
      line = undefined;
    } else if (m[3] === 'line') {
      line = undefined;
      run = undefined;
    }
  }
  return pages;
}

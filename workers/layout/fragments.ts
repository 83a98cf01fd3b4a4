// Fragments: mupdf's glyph runs become word groups with no wide gap inside, so table
// cells and text columns stay apart, each a list of styled spans with their links.
import type { FontFace, Glyph, StextLine } from './stext.js';
import type { Fragment, LinkArea, Rule, Span } from './types.js';
import { mostlyRightToLeft, readingOrder, RTL_LETTER, type DrawnUnit } from './bidi.js';
import {
  BACKWARD_JUMP_EM, CELL_GAP_EM, OFF_LINE_EM, RULE_IN_GAP_PT, SIZE_STEPS_PER_PT, STYLED_SHARE, UNSPACED_GAP_EM, WIDE_SPACE_ALWAYS_EM,
  WIDE_SPACE_EM, WIDE_SPACE_OVER_GLYPHS, WORD_GAP_EM, ZERO_WIDTH_PT,
} from './thresholds.js';

const SPACE = /\s/;
/** What mupdf writes for a glyph its font maps to no character. */
const UNMAPPED_CHAR = '\uFFFD';

function linkAt(links: LinkArea[], x: number, y: number): string | undefined {
  for (const link of links) {
    if (x >= link.x0 && x <= link.x1 && y >= link.y0 && y <= link.y1) return link.uri;
  }
  return undefined;
}

interface Builder {
  frag: Fragment;
  /** Left edge of the glyph before, to tell text set left to right from glyphs placed right to left. */
  lastX0: number;
  /** Glyph-to-glyph steps to the right and to the left. */
  rightward: number;
  leftward: number;
  /**
   * The fragment's text as drawn units, in the order read: a glyph with the characters its font
   * maps it to (a ligature may stand for a whole word; mupdf gives the extra characters no width),
   * or a space. Right-to-left text is put in reading order unit by unit.
   */
  units: DrawnUnit[];
  lastX1: number;
  pendingSpace: boolean;
  wideSpace: boolean;
  sizeWeight: Map<number, number>;
  styled: { bold: number; italic: number; mono: number; all: number };
  widthSum: number;
}

function finish(b: Builder): Fragment {
  const f = b.frag;
  let best = f.size;
  let bestCount = -1;
  for (const [size, count] of b.sizeWeight) if (count > bestCount) { best = size; bestCount = count; }
  f.size = best;
  f.text = f.spans.map((s) => s.text).join('');
  // Hebrew and Arabic lines are mostly shown glyph by glyph from left to right, as PDF text
  // advances, so mupdf reads them in visual order: back to front. Turned to reading order.
  // (One native scan of the text first: most fragments hold no right-to-left letter at all.)
  if (b.rightward > b.leftward && RTL_LETTER.test(f.text) && mostlyRightToLeft(f.spans)) {
    f.spans = readingOrder(b.units, f.spans);
    f.text = f.spans.map((s) => s.text).join('');
  }
  const all = b.styled.all || 1;
  f.bold = b.styled.bold / all > STYLED_SHARE;
  f.italic = b.styled.italic / all > STYLED_SHARE;
  f.mono = b.styled.mono / all > STYLED_SHARE;
  f.charWidth = b.widthSum / all;
  return f;
}

function ruleBetween(cuts: Rule[], from: number, to: number, y: number): boolean {
  for (const r of cuts) if (r.at >= from - RULE_IN_GAP_PT && r.at <= to + RULE_IN_GAP_PT && r.from <= y && r.to >= y) return true;
  return false;
}

/**
 * A glyph the font maps to no character (mupdf writes U+FFFD; often one part of a ligature whose
 * whole word sits on another glyph) says nothing a reader could use: it is left out, and the line
 * runs on over its place as if it were ink. Pages made mostly of such glyphs are sent to OCR
 * before this (needsOcr).
 */
function isUnmappedGlyph(g: Glyph): boolean {
  return g.c === UNMAPPED_CHAR;
}

/** A space glyph, typed or synthetic (mupdf may give a filled gap no character at all): it makes no ink, only a pending word space. */
function isSpaceGlyph(g: Glyph): boolean {
  return SPACE.test(g.c) || g.c === '';
}

/**
 * mupdf fills a positioning gap with one wide synthetic space; a typed space is narrower than the
 * font's letters (monospaced fonts: as wide). A space is wide, and so may be a cell gap, when it
 * is wider than WIDE_SPACE_EM and either wider than the letters before it or than any typed space
 * (WIDE_SPACE_ALWAYS_EM): capitals and figures are wide, so a table header in capitals would hide
 * its cell gaps from the letter test alone.
 */
export function isWideSpace(width: number, typeSize: number, meanGlyphWidth: number): boolean {
  const em = Math.max(1, typeSize);
  return width > em * WIDE_SPACE_EM && (width > WIDE_SPACE_OVER_GLYPHS * meanGlyphWidth || width > em * WIDE_SPACE_ALWAYS_EM);
}

/** A gap wider than CELL_GAP_EM of the larger type size is a cell's padding or a gutter, typed space or not. */
function isCellGap(gap: number, size: number, fragmentSize: number): boolean {
  return gap > Math.max(size, fragmentSize) * CELL_GAP_EM;
}

/** Half an em with no typed space in it (or only a wide synthetic one) is how cell padding is set: it separates table cells. */
function isUnspacedCellGap(gap: number, size: number, b: Builder): boolean {
  return gap > size * UNSPACED_GAP_EM && (!b.pendingSpace || b.wideSpace);
}

/** A glyph well left of the one before is text set elsewhere on the line, not the next letter. */
function jumpsBack(gap: number, size: number): boolean {
  return gap < -size * BACKWARD_JUMP_EM;
}

/** A glyph above or below the fragment's box by more than OFF_LINE_EM belongs to another line. */
function isOffLine(g: Glyph, f: Fragment, size: number): boolean {
  return g.y0 > f.y1 + size * OFF_LINE_EM || g.y1 < f.y0 - size * OFF_LINE_EM;
}

/** A vertical rule (a table's column border) between the fragment's last glyph and this one parts them, however narrow the gap. */
function ruleBefore(cuts: Rule[], b: Builder, g: Glyph, gap: number): boolean {
  return cuts.length > 0 && gap > 0 && ruleBetween(cuts, b.lastX1, g.x0, (g.y0 + g.y1) / 2);
}

/** Whether a glyph of this type size starts a new fragment instead of continuing the one being built. */
function startsNewFragment(b: Builder, g: Glyph, size: number, cuts: Rule[]): boolean {
  const gap = g.x0 - b.lastX1;
  return isCellGap(gap, size, b.frag.size) || isUnspacedCellGap(gap, size, b) || jumpsBack(gap, size)
    || isOffLine(g, b.frag, size) || ruleBefore(cuts, b, g, gap);
}

/** The glyph's type size: its font's, or its box's height when the font gives none. */
function glyphSize(face: FontFace, g: Glyph): number {
  return face.size > 0 ? face.size : Math.max(1, g.y1 - g.y0);
}

/** A new fragment, its box the glyph's; the glyph itself is added by addGlyph. */
function startFragment(g: Glyph, size: number): Builder {
  return {
    frag: { x0: g.x0, x1: g.x1, y0: g.y0, y1: g.y1, size, spans: [], text: '', bold: false, italic: false, mono: false, charWidth: 0 },
    lastX0: g.x0, rightward: 0, leftward: 0, units: [],
    lastX1: g.x1, pendingSpace: false, wideSpace: false, sizeWeight: new Map(),
    styled: { bold: 0, italic: 0, mono: 0, all: 0 }, widthSum: 0,
  };
}

/**
 * A word space goes before the glyph when a space glyph came before it, or a gap wider than
 * WORD_GAP_EM (kerned PDFs omit space glyphs).
 */
function hasWordSpaceBefore(b: Builder, g: Glyph, size: number): boolean {
  return b.frag.spans.length > 0 && (b.pendingSpace || g.x0 - b.lastX1 > size * WORD_GAP_EM);
}

/** A glyph continues the last span when it has the span's style and link; otherwise it opens a span of its own. */
function continuesSpan(span: Span, face: FontFace, link: string | undefined): boolean {
  return span.bold === face.bold && span.italic === face.italic && span.mono === face.mono && span.link === link;
}

/** A glyph with (almost) no width is an extra character of the ligature drawn just before it: one drawn unit with it. */
function joinsLigature(g: Glyph, unit: DrawnUnit | undefined, spanIndex: number): unit is DrawnUnit {
  return g.x1 - g.x0 < ZERO_WIDTH_PT && unit !== undefined && unit.span === spanIndex && unit.text !== ' ';
}

/**
 * Adds a glyph to the fragment: its text to the span of its style (a word space before it when due),
 * its box, size and style to the fragment's tallies.
 */
function addGlyph(b: Builder, g: Glyph, face: FontFace, size: number, link: string | undefined): void {
  const f = b.frag;
  const space = hasWordSpaceBefore(b, g, size);
  const last = f.spans[f.spans.length - 1];
  let span: Span;
  if (last && continuesSpan(last, face, link)) {
    span = last;
    if (space) { span.text += ' '; b.units.push({ span: f.spans.length - 1, text: ' ' }); }
  } else {
    if (space && last) { last.text += ' '; b.units.push({ span: f.spans.length - 1, text: ' ' }); }
    span = { text: '', bold: face.bold, italic: face.italic, mono: face.mono, ...(link ? { link } : {}) };
    f.spans.push(span);
  }
  span.text += g.c;
  const unit = b.units[b.units.length - 1];
  if (joinsLigature(g, unit, f.spans.length - 1)) unit.text += g.c;
  else b.units.push({ span: f.spans.length - 1, text: g.c });
  b.pendingSpace = false;
  b.wideSpace = false;
  if (g.x0 > b.lastX0) b.rightward++;
  else if (g.x0 < b.lastX0) b.leftward++;
  b.lastX0 = g.x0;
  b.lastX1 = Math.max(b.lastX1, g.x1);
  f.x0 = Math.min(f.x0, g.x0); f.x1 = Math.max(f.x1, g.x1);
  f.y0 = Math.min(f.y0, g.y0); f.y1 = Math.max(f.y1, g.y1);
  const rounded = Math.round(size * SIZE_STEPS_PER_PT) / SIZE_STEPS_PER_PT;
  b.sizeWeight.set(rounded, (b.sizeWeight.get(rounded) ?? 0) + 1);
  b.styled.all += 1;
  if (face.bold) b.styled.bold += 1;
  if (face.italic) b.styled.italic += 1;
  if (face.mono) b.styled.mono += 1;
  b.widthSum += g.x1 - g.x0;
}

/**
 * Splits mupdf lines into fragments wherever the gap between glyphs is wider than about an
 * em, or a vertical rule (a table's column border) runs between them.
 */
export function fragmentsOf(lines: StextLine[], links: LinkArea[], cuts: Rule[] = []): Fragment[] {
  const out: Fragment[] = [];
  for (const line of lines) {
    let b: Builder | undefined;
    for (const run of line.runs) {
      const face = run.font;
      for (const g of run.glyphs) {
        if (isUnmappedGlyph(g)) {
          if (b) b.lastX1 = Math.max(b.lastX1, g.x1);
          continue;
        }
        if (isSpaceGlyph(g)) {
          if (b) {
            b.pendingSpace = true;
            b.wideSpace ||= isWideSpace(g.x1 - g.x0, face.size, b.widthSum / Math.max(1, b.styled.all));
          }
          continue;
        }
        const size = glyphSize(face, g);
        if (b && startsNewFragment(b, g, size, cuts)) {
          out.push(finish(b));
          b = undefined;
        }
        const link = links.length ? linkAt(links, (g.x0 + g.x1) / 2, (g.y0 + g.y1) / 2) : undefined;
        b ??= startFragment(g, size);
        addGlyph(b, g, face, size, link);
      }
    }
    if (b) out.push(finish(b));
  }
  return out;
}

// Fragments: mupdf's glyph runs become word groups with no wide gap inside, so table
// cells and text columns stay apart, each a list of styled spans with their links.
import type { StextLine } from './stext.js';
import type { Fragment, LinkArea, Rule } from './types.js';
import { mostlyRightToLeft, readingOrder, RTL_LETTER, type DrawnUnit } from './bidi.js';
import { BACKWARD_JUMP_EM, CELL_GAP_EM, OFF_LINE_EM, RULE_IN_GAP_PT, STYLED_SHARE, UNSPACED_GAP_EM, WIDE_SPACE_ALWAYS_EM, WIDE_SPACE_EM, WIDE_SPACE_OVER_GLYPHS, WORD_GAP_EM, ZERO_WIDTH_PT } from './thresholds.js';

const SPACE = /\s/;

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
        // A glyph the font maps to no character (mupdf writes U+FFFD; often one piece of a ligature
        // whose whole word sits on another glyph) says nothing a reader could use: it is left out,
        // and the line runs on over its place as if it were ink. Pages made mostly of such glyphs
        // are sent to OCR before this (needsOcr).
        if (g.c === '\uFFFD') {
          if (b) b.lastX1 = Math.max(b.lastX1, g.x1);
          continue;
        }
        if (SPACE.test(g.c) || g.c === '') {
          // mupdf fills a positioning gap with one wide synthetic space; a typed space is
          // narrower than the font's letters (monospaced fonts: as wide).
          if (b) {
            const w = g.x1 - g.x0;
            b.pendingSpace = true;
            // Wider than the letters around it, or than any typed space (at most a third of an
            // em, a little more when justified): capitals and figures are wide, so a table
            // header in capitals would hide its cell gaps from the first test alone.
            const em = Math.max(1, face.size);
            b.wideSpace ||= w > em * WIDE_SPACE_EM && (w > WIDE_SPACE_OVER_GLYPHS * (b.widthSum / Math.max(1, b.styled.all)) || w > em * WIDE_SPACE_ALWAYS_EM);
          }
          continue;
        }
        const size = face.size > 0 ? face.size : Math.max(1, g.y1 - g.y0);
        const gap = b ? g.x0 - b.lastX1 : 0;
        // A gap of half an em with no typed space in it separates table cells.
        if (b && (gap > Math.max(size, b.frag.size) * CELL_GAP_EM || (gap > size * UNSPACED_GAP_EM && (!b.pendingSpace || b.wideSpace)) || gap < -size * BACKWARD_JUMP_EM || g.y0 > b.frag.y1 + size * OFF_LINE_EM || g.y1 < b.frag.y0 - size * OFF_LINE_EM
          || (cuts.length > 0 && gap > 0 && ruleBetween(cuts, b.lastX1, g.x0, (g.y0 + g.y1) / 2)))) {
          out.push(finish(b));
          b = undefined;
        }
        const link = links.length ? linkAt(links, (g.x0 + g.x1) / 2, (g.y0 + g.y1) / 2) : undefined;
        if (!b) {
          b = {
            frag: { x0: g.x0, x1: g.x1, y0: g.y0, y1: g.y1, size, spans: [], text: '', bold: false, italic: false, mono: false, charWidth: 0 },
            lastX0: g.x0, rightward: 0, leftward: 0, units: [],
            lastX1: g.x1, pendingSpace: false, wideSpace: false, sizeWeight: new Map(), styled: { bold: 0, italic: 0, mono: 0, all: 0 }, widthSum: 0,
          };
        }
        const f = b.frag;
        const space = f.spans.length > 0 && (b.pendingSpace || g.x0 - b.lastX1 > size * WORD_GAP_EM);
        let span = f.spans[f.spans.length - 1];
        if (!span || span.bold !== face.bold || span.italic !== face.italic || span.mono !== face.mono || span.link !== link) {
          if (space && span) { span.text += ' '; b.units.push({ span: f.spans.length - 1, text: ' ' }); }
          span = { text: '', bold: face.bold, italic: face.italic, mono: face.mono, ...(link ? { link } : {}) };
          f.spans.push(span);
        } else if (space) {
          span.text += ' ';
          b.units.push({ span: f.spans.length - 1, text: ' ' });
        }
        span.text += g.c;
        const unit = b.units[b.units.length - 1];
        if (g.x1 - g.x0 < ZERO_WIDTH_PT && unit && unit.span === f.spans.length - 1 && unit.text !== ' ') unit.text += g.c;
        else b.units.push({ span: f.spans.length - 1, text: g.c });
        b.pendingSpace = false;
        b.wideSpace = false;
        if (g.x0 > b.lastX0) b.rightward++;
        else if (g.x0 < b.lastX0) b.leftward++;
        b.lastX0 = g.x0;
        b.lastX1 = Math.max(b.lastX1, g.x1);
        f.x0 = Math.min(f.x0, g.x0); f.x1 = Math.max(f.x1, g.x1);
        f.y0 = Math.min(f.y0, g.y0); f.y1 = Math.max(f.y1, g.y1);
        const rounded = Math.round(size * 2) / 2;
        b.sizeWeight.set(rounded, (b.sizeWeight.get(rounded) ?? 0) + 1);
        b.styled.all += 1;
        if (face.bold) b.styled.bold += 1;
        if (face.italic) b.styled.italic += 1;
        if (face.mono) b.styled.mono += 1;
        b.widthSum += g.x1 - g.x0;
      }
    }
    if (b) out.push(finish(b));
  }
  return out;
}

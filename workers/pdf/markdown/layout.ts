// Geometry: glyph runs become fragments (word groups with no wide gap inside), running
// headers and footers are dropped, the page is cut into reading-order regions (columns),
// and each region's fragments are grouped into visual rows.
import type { StextLine } from './stext.js';
import type { Rule, TableCells } from './rules.js';

export interface LinkArea {
  x0: number; y0: number; x1: number; y1: number;
  uri: string;
}

export interface Span {
  text: string;
  bold: boolean;
  italic: boolean;
  mono: boolean;
  link?: string;
}

export interface Fragment {
  x0: number; x1: number; y0: number; y1: number;
  size: number;
  spans: Span[];
  text: string;
  bold: boolean;
  italic: boolean;
  mono: boolean;
  /** Mean advance of a glyph, to turn indentation of code into spaces. */
  charWidth: number;
  /** Set on the one fragment standing for a whole ruled table (its box is the table's). */
  table?: TableCells;
}

export interface Row {
  x0: number; x1: number; y0: number; y1: number;
  /** Baseline-ish reference: the bottom of the tallest fragment. */
  base: number;
  size: number;
  fragments: Fragment[];
}

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
  units: { span: number; text: string }[];
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
  f.bold = b.styled.bold / all > 0.6;
  f.italic = b.styled.italic / all > 0.6;
  f.mono = b.styled.mono / all > 0.6;
  f.charWidth = b.widthSum / all;
  return f;
}

const RTL_LETTER = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/u;
const LTR_LETTER = /[\p{L}\p{N}]/u;
const MIRRORED: Record<string, string> = { '(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{', '<': '>', '>': '<', '«': '»', '»': '«' };

function mostlyRightToLeft(spans: Span[]): boolean {
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
function readingOrder(drawn: Builder['units'], spans: Span[]): Span[] {
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

function ruleBetween(cuts: Rule[], from: number, to: number, y: number): boolean {
  for (const r of cuts) if (r.at >= from - 1 && r.at <= to + 1 && r.from <= y && r.to >= y) return true;
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
            b.wideSpace ||= w > Math.max(1, face.size) * 0.45 && w > 1.1 * (b.widthSum / Math.max(1, b.styled.all));
          }
          continue;
        }
        const size = face.size > 0 ? face.size : Math.max(1, g.y1 - g.y0);
        const gap = b ? g.x0 - b.lastX1 : 0;
        // A gap of half an em with no typed space in it separates table cells.
        if (b && (gap > Math.max(size, b.frag.size) * 0.95 || (gap > size * 0.5 && (!b.pendingSpace || b.wideSpace)) || gap < -size * 1.5 || g.y0 > b.frag.y1 + size * 0.5 || g.y1 < b.frag.y0 - size * 0.5
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
        const space = f.spans.length > 0 && (b.pendingSpace || g.x0 - b.lastX1 > size * 0.22);
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
        if (g.x1 - g.x0 < 0.01 && unit && unit.span === f.spans.length - 1 && unit.text !== ' ') unit.text += g.c;
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

/** Groups fragments whose vertical centres fall within one another's band into rows, top to bottom. */
export function rowsOf(fragments: Fragment[]): Row[] {
  const sorted = [...fragments].sort((a, b) => (a.y0 + a.y1) - (b.y0 + b.y1));
  const rows: Row[] = [];
  let row: Row | undefined;
  for (const f of sorted) {
    const centre = (f.y0 + f.y1) / 2;
    const h = f.y1 - f.y0;
    // A table stands alone in its row.
    if (row && !f.table && !row.fragments[0]!.table
      && centre > row.y0 + (row.y1 - row.y0) * 0.15 && centre < row.y1 - (row.y1 - row.y0) * 0.15 + h * 0.0 && overlapsNone(row, f)) {
      row.fragments.push(f);
      row.x0 = Math.min(row.x0, f.x0); row.x1 = Math.max(row.x1, f.x1);
      if (f.size > row.size) { row.size = f.size; row.base = f.y1; }
      row.y0 = Math.min(row.y0, f.y0); row.y1 = Math.max(row.y1, f.y1);
      continue;
    }
    row = { x0: f.x0, x1: f.x1, y0: f.y0, y1: f.y1, base: f.y1, size: f.size, fragments: [f] };
    rows.push(row);
  }
  for (const r of rows) r.fragments.sort((a, b) => a.x0 - b.x0);
  return rows;
}

function overlapsNone(row: Row, f: Fragment): boolean {
  for (const other of row.fragments) {
    if (f.x0 < other.x1 - 1 && f.x1 > other.x0 + 1) return false;
  }
  return true;
}

const PAGE_NUMBER = /^(page\s*)?[-–—(]?\s*([0-9]{1,4}|[ivxlcdm]{1,7})\s*[-–—)]?(\s*(of|\/)\s*[0-9]{1,4})?$/i;

function normalizeRunning(text: string): string {
  return text.toLowerCase().replace(/[0-9]+/g, '#').replace(/\s+/g, ' ').trim();
}

/**
 * Removes running headers, footers and page numbers: short rows in the top or bottom tenth
 * of a page, set apart from the body by a clear gap, that either look like a page number or
 * repeat (digits ignored) on other pages. A one-page document has no repetition to go by:
 * there a row goes only when it is also set smaller than the body text, as running heads and
 * feet are, so that a letter's "Dear Ms Smith," or a title line at body size stays.
 */
export function dropRunningText(pages: { height: number; fragments: Fragment[] }[], bodySize: number): void {
  const candidates: { page: number; row: Row; key: string }[] = [];
  const counts = new Map<string, number>();
  pages.forEach((page, index) => {
    const rows = rowsOf(page.fragments);
    if (rows.length < 2) return;
    const zone = page.height * 0.1;
    const top: Row[] = [];
    for (let i = 0; i < rows.length - 1 && rows[i]!.y1 < zone; i++) {
      const gap = rows[i + 1]!.y0 - rows[i]!.y1;
      top.push(rows[i]!);
      if (gap > rows[i]!.size * 1.2) { for (const r of top) candidates.push({ page: index, row: r, key: '' }); break; }
    }
    const bottom: Row[] = [];
    for (let i = rows.length - 1; i > 0 && rows[i]!.y0 > page.height - zone; i--) {
      const gap = rows[i]!.y0 - rows[i - 1]!.y1;
      bottom.push(rows[i]!);
      if (gap > rows[i]!.size * 1.2) { for (const r of bottom) candidates.push({ page: index, row: r, key: '' }); break; }
    }
    // A page number alone may sit further in (TeX leaves a deep bottom margin): the first or
    // last row of the page, in its outer fifth, set apart, and one bare number (digits or a
    // lower-case roman numeral: a capital letter alone is more often a label).
    const last = rows[rows.length - 1]!, first = rows[0]!;
    const alone = (r: Row) => r.fragments.length === 1 && /^([0-9]{1,4}|[ivxlcdm]{1,7})$/.test(r.fragments[0]!.text.trim());
    if (last.y0 > page.height * 0.8 && last.y0 - rows[rows.length - 2]!.y1 > last.size * 1.2 && alone(last)) candidates.push({ page: index, row: last, key: '' });
    if (first.y1 < page.height * 0.2 && rows[1]!.y0 - first.y1 > first.size * 1.2 && alone(first)) candidates.push({ page: index, row: first, key: '' });
  });
  for (const c of candidates) {
    c.key = normalizeRunning(c.row.fragments.map((f) => f.text).join(' '));
    counts.set(c.key, (counts.get(c.key) ?? 0) + 1);
  }
  const drop = new Set<Fragment>();
  for (const c of candidates) {
    const text = c.row.fragments.map((f) => f.text).join(' ').trim();
    const short = text.length <= 80;
    const pageNumber = c.row.fragments.every((f) => PAGE_NUMBER.test(f.text.trim()));
    const repeated = (counts.get(c.key) ?? 0) >= 2;
    // Across pages, a number beside other words ("Annual Report 12") marks a running head; on a
    // single page the row must be smaller than the body ("Invoice 2024" at body size is content).
    const evidence = pages.length === 1
      ? c.row.size < bodySize * 0.92
      : c.row.fragments.some((f) => PAGE_NUMBER.test(f.text.trim()));
    if (short && (pageNumber || repeated || evidence)) {
      for (const f of c.row.fragments) drop.add(f);
    }
  }
  if (drop.size === 0) return;
  for (const page of pages) page.fragments = page.fragments.filter((f) => !drop.has(f));
}

interface Box { x0: number; x1: number; y0: number; y1: number }

function bounds(fragments: Fragment[]): Box {
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const f of fragments) {
    if (f.x0 < x0) x0 = f.x0; if (f.x1 > x1) x1 = f.x1;
    if (f.y0 < y0) y0 = f.y0; if (f.y1 > y1) y1 = f.y1;
  }
  return { x0, x1, y0, y1 };
}

/**
 * Short fragments that continue a line begun further left (a table cell after another).
 * A table a little too wide for its text column spills such cells into the gutter; a few
 * of them must not hide the gutter.
 */
function continuingCells(fragments: Fragment[], width: number): Set<Fragment> {
  const out = new Set<Fragment>();
  for (const row of rowsOf(fragments)) {
    for (let k = 1; k < row.fragments.length; k++) {
      const f = row.fragments[k]!;
      if (f.x1 - f.x0 < width * 0.3) out.add(f);
    }
  }
  return out;
}

/** Vertical strips at least 6 pt wide, away from the edges, where `open(x)` holds; nearest the middle first. */
function stripsWhere(cells: number, open: (x: number) => boolean): { from: number; to: number }[] {
  const strips: { from: number; to: number }[] = [];
  let runFrom = -1;
  for (let x = 0; x <= cells; x++) {
    if (x < cells && open(x)) { if (runFrom < 0) runFrom = x; continue; }
    if (runFrom >= 0) {
      const mid = (runFrom + x) / 2;
      if (x - runFrom >= 6 && mid > cells * 0.25 && mid < cells * 0.75) strips.push({ from: runFrom, to: x });
      runFrom = -1;
    }
  }
  return strips.sort((a, b) => Math.abs((a.from + a.to) / 2 - cells / 2) - Math.abs((b.from + b.to) / 2 - cells / 2));
}

/** Which side of a column cut a fragment reads on: where it starts (a cell spilling over the gutter stays left). */
function leftOf(f: Fragment, cut: number): boolean {
  return f.x0 < cut;
}

/**
 * A vertical gutter that splits these fragments into two text columns, or undefined.
 * Tables also have gutters; a column of running text is told apart by its lines filling
 * most of the column's width and by both sides being wide.
 */
function findGutter(fragments: Fragment[], box: Box, pageWidth: number, wholePage = false): number | undefined {
  const width = box.x1 - box.x0;
  if (width < pageWidth * 0.45 || fragments.length < 6) return undefined;
  const start = Math.floor(box.x0);
  const cells = Math.ceil(box.x1) - start + 1;
  const mark = (list: Iterable<Fragment>): Uint16Array => {
    const cover = new Uint16Array(cells);
    for (const f of list) {
      const a = Math.max(0, Math.floor(f.x0) - start);
      const b = Math.min(cells - 1, Math.ceil(f.x1) - start);
      for (let x = a; x <= b; x++) cover[x]!++;
    }
    return cover;
  };
  const fills = (side: Fragment[]): number => {
    if (side.length < 3) return 0;
    const b = bounds(side);
    const sideWidth = b.x1 - b.x0;
    if (sideWidth < width * 0.3) return 0;
    const rows = rowsOf(side);
    // A line of running text is one fragment across the column; a table row is several cells.
    const full = rows.filter((r) => r.fragments.some((f) => f.x1 - f.x0 > sideWidth * 0.7)).length;
    return rows.length >= 3 ? full / rows.length : 0;
  };
  // Empty vertical strips; a column gutter is the one nearest the middle that leaves
  // running text on both sides (a table's own gutters fail that test). Fragments crossing
  // the cut take part in neither side's test.
  const test = (strips: { from: number; to: number }[]): number | undefined => {
    for (const strip of strips.slice(0, 3)) {
      const cut = start + (strip.from + strip.to) / 2;
      const left = fragments.filter((f) => f.x1 <= cut);
      const right = fragments.filter((f) => f.x0 >= cut);
      if (wholePage) {
        // Lines of running text: one fragment across most of its side (table rows are several cells).
        const prose = (side: Fragment[]) => {
          const b = bounds(side);
          const w = b.x1 - b.x0;
          if (side.length < 1 || w < width * 0.3) return 0;
          return rowsOf(side).filter((r) => r.fragments.some((f) => f.x1 - f.x0 > w * 0.7)).length;
        };
        const a = prose(left), b = prose(right);
        if (Math.max(a, b) >= 3 && Math.min(a, b) >= 1) return cut;
        continue;
      }
      const a = fills(left), b = fills(right);
      if (Math.max(a, b) >= 0.4 && Math.min(a, b) >= 0.2) return cut;
    }
    return undefined;
  };
  const cover = mark(fragments);
  const strict = test(stripsWhere(cells, (x) => cover[x] === 0));
  if (strict !== undefined) return strict;
  // A table spilling into the gutter: a strip crossed only by a few cells that continue a
  // row from the left, and by nothing else.
  const spilling = continuingCells(fragments, width);
  if (!spilling.size) return undefined;
  const solid = mark(fragments.filter((f) => !spilling.has(f)));
  const allowed = Math.max(2, Math.round(fragments.length * 0.08));
  return test(stripsWhere(cells, (x) => solid[x] === 0 && cover[x]! <= allowed));
}

/**
 * Recursive XY cut: bands separated by horizontal whitespace, and within a run of bands
 * that share a column gutter, the left column before the right. Returns the fragments of
 * each reading-order region.
 */
export function readingRegions(fragments: Fragment[], pageWidth: number, depth = 0): Fragment[][] {
  if (fragments.length === 0) return [];
  const box = bounds(fragments);
  // A strip empty from the top of the page to the bottom is a strong sign of columns.
  const whole = depth < 4 ? findGutter(fragments, box, pageWidth, depth === 0) : undefined;
  if (whole !== undefined) {
    return [
      ...readingRegions(fragments.filter((f) => leftOf(f, whole)), pageWidth, depth + 1),
      ...readingRegions(fragments.filter((f) => !leftOf(f, whole)), pageWidth, depth + 1),
    ];
  }
  if (depth >= 4) return [fragments];
  // Bands: maximal groups of fragments whose vertical extents chain together.
  const sorted = [...fragments].sort((a, b) => a.y0 - b.y0);
  const bands: Fragment[][] = [];
  let band: Fragment[] = [];
  let bandBottom = -Infinity;
  for (const f of sorted) {
    if (band.length && f.y0 > bandBottom + 0.5) { bands.push(band); band = []; bandBottom = -Infinity; }
    band.push(f);
    bandBottom = Math.max(bandBottom, f.y1);
  }
  if (band.length) bands.push(band);
  if (bands.length <= 1) return [fragments];
  // Merge consecutive bands into groups: a group with a gutter is read column by column.
  const out: Fragment[][] = [];
  let group: Fragment[] = [];
  let plain: Fragment[] = [];
  const flushPlain = () => { if (plain.length) { out.push(plain); plain = []; } };
  const flushGroup = () => {
    if (!group.length) return;
    const g = group; group = [];
    const cut = findGutter(g, bounds(g), pageWidth);
    if (cut === undefined) { plain.push(...g); return; }
    flushPlain();
    out.push(...readingRegions(g.filter((f) => leftOf(f, cut)), pageWidth, depth + 1));
    out.push(...readingRegions(g.filter((f) => !leftOf(f, cut)), pageWidth, depth + 1));
  };
  // A band is "columnar" when its lines sit on both sides of the page middle without crossing it.
  const mid = box.x0 + (box.x1 - box.x0) / 2;
  for (const b of bands) {
    const crosses = b.some((f) => f.x0 < mid - 3 && f.x1 > mid + 3);
    const twoSided = b.some((f) => f.x1 <= mid + 3) && b.some((f) => f.x0 >= mid - 3);
    if (!crosses && twoSided) { group.push(...b); continue; }
    if (!crosses && group.length) { group.push(...b); continue; }
    flushGroup();
    plain.push(...b);
  }
  flushGroup();
  flushPlain();
  return out;
}

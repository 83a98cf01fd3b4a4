// The pure pipeline: structured-text XML and link areas in, Markdown out. No I/O here, so
// every step can be tested on fixtures and timed without subprocesses.
import { parseStext, type StextPage } from './stext.js';
import { dropRunningText, fragmentsOf, readingRegions, type Fragment, type LinkArea } from './layout.js';
import { assignHeadingLevels, blocksOf, bodySizeOf, type Block } from './structure.js';
import { emit } from './emit.js';

/** Links of one page, page index counted from the first page of the XML. */
export interface PageLink { page: number; rect: [number, number, number, number]; uri: string }

const USABLE_URI = /^(https?:|mailto:|ftp:)/i;

function needsOcr(page: StextPage): boolean {
  let total = 0, bad = 0;
  for (const line of page.lines) for (const run of line.runs) for (const g of run.glyphs) {
    if (/\s/.test(g.c)) continue;
    total++;
    const code = g.c.codePointAt(0) ?? 0;
    if (code === 0xfffd || (code >= 0xe000 && code <= 0xf8ff) || code < 0x20) bad++;
  }
  return total === 0 || bad / total > 0.3;
}

export function ocrNote(pageNumber: number): string {
  return `*Page ${pageNumber} has no text layer: OCR is needed to read it.*`;
}

/** Markdown for the pages of one stext document; firstPage numbers them in notes. */
export function convertStext(xml: string, links: PageLink[] = [], firstPage = 1): string {
  const pages = parseStext(xml);
  const perPage = pages.map((page, index) => {
    const areas: LinkArea[] = links
      .filter((l) => l.page === index && USABLE_URI.test(l.uri))
      .map((l) => ({ x0: l.rect[0], y0: l.rect[1], x1: l.rect[2], y1: l.rect[3], uri: l.uri }));
    return { height: page.height, width: page.width, ocr: needsOcr(page), fragments: fragmentsOf(page.lines, areas) as Fragment[] };
  });
  dropRunningText(perPage.filter((p) => !p.ocr));
  const bodySize = bodySizeOf(perPage.flatMap((p) => p.fragments));
  const pageBlocks: (Block[] | 'ocr')[] = perPage.map((p) => {
    if (p.ocr) return 'ocr';
    return readingRegions(p.fragments, p.width).flatMap((region) => blocksOf(region, { bodySize }));
  });
  const all = pageBlocks.flatMap((b) => (b === 'ocr' ? [] : b));
  assignHeadingLevels(all, bodySize);
  const out: string[] = [];
  let pending: Block[] = [];
  const flush = () => { if (pending.length) out.push(emit(pending)); pending = []; };
  pageBlocks.forEach((blocks, index) => {
    if (blocks === 'ocr') { flush(); out.push(`${ocrNote(firstPage + index)}\n`); return; }
    // A paragraph cut by the page break continues on the next page.
    const last = pending[pending.length - 1];
    const first = blocks[0];
    if (last?.kind === 'paragraph' && first?.kind === 'paragraph') {
      const tail = last.spans.map((s) => s.text).join('').trimEnd();
      const head = first.spans.map((s) => s.text).join('').trimStart();
      if (!/[.!?:]$/.test(tail) && /^[a-z]/.test(head)) {
        last.spans.push({ text: ' ', bold: false, italic: false, mono: false }, ...first.spans);
        blocks = blocks.slice(1);
      }
    }
    pending.push(...blocks);
  });
  flush();
  return out.join('\n');
}

// The tables endpoint's local engine (TABLES_ENGINE=local): the tables this layout engine
// finds for /v1/pdf/markdown (ruled ones in rules.ts, borderless ones in aligned-tables.ts),
// returned in the endpoint's shape { page, title, headers, rows } instead of as Markdown.
// Nothing leaves the server: mutool reads the text layer and the drawn rules, as for Markdown.
import type { WorkFunction } from '../../core/job.js';
import { fail } from '../../core/errors.js';
import { appendBlocks, bodySizeOfPages, layoutStext, prepareText, regionBlocks, unread, type PageDrawing } from './convert.js';
import { withDocumentWords } from './hyphens.js';
import { readStextChunks } from './index.js';
import { MAX_MODEL_PAGES, pdfPageCount } from '../model/pages.js';
import type { Block, Cell, Span } from './types.js';
import { TABLE_CAPTION_MAX_CHARS } from './thresholds.js';

/** One cell of a table as HTML has it: its text and how many grid slots it covers. */
export interface GridCell { text: string; colspan: number; rowspan: number }

/** A table in the endpoint's shape. */
export interface PageTable { page: number; title: string | null; headers: string[]; rows: string[][] }

/**
 * The slots of a table: every row as wide as the widest, each cell's text in its top-left slot
 * and '' in the other slots it covers (HTML's placement of rowspan and colspan). `owner` names
 * the cell over each slot, so a header cell spanning columns can label each of them.
 */
function grid(rows: readonly (readonly GridCell[])[]): { text: string[][]; owner: (GridCell | undefined)[][] } {
  const owner: (GridCell | undefined)[][] = [];
  const text: string[][] = [];
  const taken = (r: number, c: number) => owner[r]?.[c] !== undefined;
  rows.forEach((row, r) => {
    let c = 0;
    for (const cell of row) {
      while (taken(r, c)) c++;
      const rowspan = Math.max(1, Math.min(cell.rowspan, rows.length - r));
      const colspan = Math.max(1, cell.colspan);
      for (let dr = 0; dr < rowspan; dr++) {
        for (let dc = 0; dc < colspan; dc++) {
          (owner[r + dr] ??= [])[c + dc] = cell;
          (text[r + dr] ??= [])[c + dc] = dr === 0 && dc === 0 ? cell.text : '';
        }
      }
      c += colspan;
    }
  });
  const width = Math.max(0, ...owner.map((o) => o.length));
  for (let r = 0; r < rows.length; r++) {
    owner[r] ??= []; text[r] ??= [];
    for (let c = 0; c < width; c++) { text[r]![c] ??= ''; }
    owner[r]!.length = width;
  }
  return { text, owner };
}

/**
 * headers and rows of a table. The header is the first row; when that row groups columns
 * under one cell (a colspan) and labels others over several rows (a rowspan), as the engine
 * reads a two-level header, the header is that many rows, and each column's header joins the
 * labels over it, top down, with " / " ("Spring counts / Birds"). Body rows keep every slot, a
 * spanning cell's text in its first one, so columns line up with the headers.
 */
export function shapeTable(rows: readonly (readonly GridCell[])[]): { headers: string[]; rows: string[][] } {
  if (!rows.length) return { headers: [], rows: [] };
  const { text, owner } = grid(rows);
  const first = rows[0]!;
  const grouped = first.some((c) => c.colspan > 1) && first.some((c) => c.rowspan > 1);
  const depth = grouped ? Math.min(rows.length, Math.max(...first.map((c) => c.rowspan))) : 1;
  // One header row: its slots as they are (a title spanning every column is named once).
  if (depth === 1) return { headers: text[0]!, rows: text.slice(1) };
  const headers = text[0]!.map((_, c) => {
    const labels: string[] = [];
    for (let r = 0; r < depth; r++) {
      const label = owner[r]![c]?.text ?? '';
      if (label && labels[labels.length - 1] !== label) labels.push(label);
    }
    return labels.join(' / ');
  });
  return { headers, rows: text.slice(depth) };
}

/** A cell's text as plain text: no Markdown emphasis or link syntax, one space between words. */
function plain(spans: Span[]): string {
  return spans.map((s) => s.text).join('').replace(/\s+/g, ' ').trim();
}

function cellsOf(rows: Cell[][]): GridCell[][] {
  return rows.map((row) => row.map((c) => ({ text: plain(c.spans), colspan: c.colspan, rowspan: c.rowspan })));
}

// "Table 3: Results", "Table 2.1. Yields", "TABLE IV — Costs", "Table: Observers": a caption, as
// opposed to a sentence that starts with the word ("Table 3 shows ...").
const CAPTION = /^(?:table|tab\.)\s*(?:[0-9]+(?:[.-][0-9]+)*[a-z]?|[ivxlc]+|[a-z])?\s*[:.\u2013\u2014-]/i;

/** The title of a table: the heading or caption just above it in its reading region, else null. */
function titleAbove(block: Block | undefined): string | null {
  if (!block) return null;
  if (block.kind === 'heading') return plain(block.spans) || null;
  if (block.kind === 'paragraph') {
    const text = plain(block.spans);
    if (text.length <= TABLE_CAPTION_MAX_CHARS && CAPTION.test(text)) return text;
  }
  return null;
}

/**
 * The tables of the pages of one stext document, top to bottom, with their pages (firstPage
 * numbers the first), and how many of the pages have no text layer to read. A table that goes on
 * past a page or column break is one table, as in the Markdown (appendBlocks joins it); its page is
 * the one where it starts.
 */
export function tablesOfStext(xml: string, drawings: PageDrawing[] = [], firstPage = 1): { tables: PageTable[]; pagesWithoutText: number } {
  const layout = layoutStext(xml, drawings);
  const words = prepareText(layout);
  const perPage = layout.pages;
  const pagesWithoutText = perPage.filter(unread).length;
  const tables = withDocumentWords(words, () => {
    const bodySize = bodySizeOfPages(perPage);
    const found = new Map<Block, { page: number; title: string | null }>();
    const flow: Block[] = [];
    perPage.forEach((p, index) => {
      // A page without a text layer has no tables to read here, and nothing continues across it.
      if (unread(p)) { flow.push({ kind: 'paragraph', spans: [] }); return; }
      for (const region of regionBlocks(p, bodySize)) {
        region.forEach((block, k) => {
          if (block.kind === 'table') found.set(block, { page: firstPage + index, title: titleAbove(region[k - 1]) });
        });
        appendBlocks(flow, region);
      }
    });
    const tables: PageTable[] = [];
    for (const block of flow) {
      const where = found.get(block);
      if (block.kind !== 'table' || !where) continue;
      const { headers, rows } = shapeTable(cellsOf(block.rows));
      tables.push({ page: where.page, title: where.title, headers, rows });
    }
    return tables;
  });
  return { tables, pagesWithoutText };
}

/** /v1/pdf/tables on this server: mutool's structured text and drawn rules, read by the layout engine. */
export const localTables: WorkFunction = async (input) => {
  const file = input.files[0];
  if (!file?.path) fail('UNSUPPORTED_TYPE', 'Upload one PDF file.', { field: 'file' });
  const count = await pdfPageCount(input, file);
  if (count > MAX_MODEL_PAGES) fail('LIMIT_EXCEEDED', `the PDF has ${count} pages; this operation accepts at most ${MAX_MODEL_PAGES}`);
  const tables: PageTable[] = [];
  let scanned = 0;
  // The same chunked reading as pdf.markdown (index.ts).
  const chunks = readStextChunks(input, file.path, count, 'The PDF holds more text than one extraction can read; send fewer pages at a time.');
  for await (const { xml, drawings, first } of chunks) {
    const chunk = tablesOfStext(xml, drawings, first);
    scanned += chunk.pagesWithoutText;
    tables.push(...chunk.tables);
  }
  // Pages without a text layer cannot be read here: an answer of no tables for a scanned
  // document would be charged for nothing, so it fails (uncharged) and says why.
  if (scanned === count) {
    fail('NO_CONTENT', 'The PDF has no text layer (it looks scanned); this service reads tables from the text layer on the server and cannot read them from scanned pages.', { field: 'file' });
  }
  return { body: new TextEncoder().encode(JSON.stringify({ tables })), mediaType: 'application/json' };
};

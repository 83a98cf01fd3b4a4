import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

/** Bounds of chunk_chars: a chunk holds at least a short paragraph, and at most what a large embedding or prompt window takes. */
export const CHUNK_CHARS_BOUNDS = { minimum: 200, maximum: 100_000 } as const;

const BBOX = {
  type: 'array', items: { type: 'number' }, minItems: 4, maxItems: 4,
  description: '[x0, y0, x1, y1] in PDF points (1/72 inch) from the top-left corner of the page as displayed: its rotation, its crop box\'s origin and its UserUnit applied; x grows to the right, y downward.',
};
const PLACE = {
  type: 'object', required: ['page', 'bbox'], additionalProperties: false,
  properties: { page: { type: 'integer', minimum: 1, description: '1-based page number.' }, bbox: BBOX },
};

const BLOCK = {
  type: 'object', required: ['page', 'bbox', 'kind', 'text', 'markdown'], additionalProperties: false,
  properties: {
    page: { type: 'integer', minimum: 1, description: '1-based page number (where the block starts).' },
    bbox: BBOX,
    kind: {
      type: 'string', enum: ['heading', 'paragraph', 'list_item', 'table', 'figure', 'caption', 'code', 'header', 'footer'],
      description: 'header and footer: running heads, feet and page numbers, which the Markdown leaves out. figure: a drawn image (text and markdown are empty). caption: a paragraph naming a figure or table ("Figure 3: …").',
    },
    level: { type: 'integer', minimum: 1, maximum: 6, description: 'Headings: 1 for the largest type.' },
    depth: { type: 'integer', minimum: 0, description: 'List items: nesting depth, 0 at the outermost level.' },
    ordered: { type: 'boolean', description: 'List items: numbered or lettered.' },
    marker: { type: 'string', description: 'List items: the marker as printed ("•", "3.", "(b)").' },
    rows: {
      type: 'array', description: 'Tables: the rows in order, each with its page and box, and its cells.',
      items: {
        type: 'object', required: ['page', 'bbox', 'cells'], additionalProperties: false,
        properties: {
          page: { type: 'integer', minimum: 1 }, bbox: BBOX,
          cells: {
            type: 'array',
            items: {
              type: 'object', required: ['text', 'colspan', 'rowspan'], additionalProperties: false,
              properties: {
                text: { type: 'string' }, colspan: { type: 'integer', minimum: 1 }, rowspan: { type: 'integer', minimum: 1 },
                bbox: { ...BBOX, description: `${BBOX.description} Absent for an empty cell of a table drawn without rules.` },
              },
            },
          },
        },
      },
    },
    text: { type: 'string', description: 'Plain text: a table\'s cells parted by tabs and its rows by line breaks; code as set.' },
    markdown: { type: 'string', description: 'The block as /v1/pdf/markdown writes it.' },
    continued: { type: 'array', items: PLACE, description: 'A block cut by a column or page break and read as one: where its further pieces are.' },
  },
};

export const pdfBlocks = defineOperation({
  id: 'pdf.blocks', title: 'Blocks with page coordinates, and chunks',
  description: 'The document\'s blocks in reading order, each with its page, bounding box, kind (heading with its level, paragraph, list item, table with its cells, figure, caption, code, header, footer), text and Markdown, from the same layout engine as /v1/pdf/markdown; with chunk_chars, also the blocks grouped into chunks of at most that many characters, for retrieval with citations. Scanned pages are read by local OCR where the deployment enables it; nothing leaves the server.',
  category: 'pdf-extraction',
  fields: [
    {
      name: 'chunk_chars', type: 'integer', ...CHUNK_CHARS_BOUNDS,
      description: 'Also group the blocks into chunks of at most this many characters (Unicode code points of the chunk\'s text and of its Markdown). A longer block is cut at sentence ends, code between lines, a table between rows (never inside a row); a single table row longer than this is a chunk of its own, marked oversized.',
    },
  ],
  input: { ...PDF_INPUT, pagesReadByMupdf: true }, price: { model: 'per-page', rate: 20000 },
  output: {
    mediaType: 'application/json', description: 'JSON { pageCount, pages, blocks, chunks? }.',
    jsonSchema: {
      type: 'object', required: ['pageCount', 'pages', 'blocks'], additionalProperties: false,
      properties: {
        pageCount: { type: 'integer', minimum: 1 },
        pages: {
          type: 'array', description: 'Each page\'s size as displayed, in points, and how its text was read.',
          items: {
            type: 'object', required: ['page', 'width', 'height', 'read'], additionalProperties: false,
            properties: {
              page: { type: 'integer', minimum: 1 }, width: { type: 'number' }, height: { type: 'number' },
              read: { type: 'string', enum: ['text-layer', 'ocr', 'unread'], description: 'unread: a scanned page OCR did not read (note says why).' },
              note: { type: 'string' },
            },
          },
        },
        blocks: { type: 'array', items: BLOCK },
        chunks: {
          type: 'array', description: 'With chunk_chars: the blocks in order, grouped.',
          items: {
            type: 'object', required: ['text', 'markdown', 'pages', 'boxes', 'blocks'], additionalProperties: false,
            properties: {
              text: { type: 'string' }, markdown: { type: 'string' },
              pages: { type: 'array', items: { type: 'integer', minimum: 1 } },
              boxes: { type: 'array', items: PLACE, description: 'Where the chunk\'s text is drawn: a table piece\'s rows on each page; a piece of a cut paragraph or code block, its whole block.' },
              blocks: { type: 'array', items: { type: 'integer', minimum: 0 }, description: 'Indices into blocks.' },
              oversized: { type: 'boolean', description: 'true: one table row (or rows tied by a cell spanning them) longer than chunk_chars, kept whole.' },
            },
          },
        },
      },
    },
  },
  // tesseract is not listed: its content route requires it only when MARKDOWN_OCR chooses it.
  content: { local: true, scansReadWhen: 'MARKDOWN_OCR=tesseract' }, engines: ['mutool'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields }) => ({ chunkChars: fields.chunk_chars ?? null }),
});

// The operation table: all 21 operations, declared once. Everything public is derived from it.
import { MB, type FieldSpec, type InputSpec, type Operation } from '../core/operation.js';

const FILE_BYTES = 50 * MB;
const MERGE_TOTAL_BYTES = 95 * MB;
const MARKDOWN_BYTES = 1 * MB;
const SCHEMA_BYTES = 16 * 1024;

const imageInput: InputSpec = { kind: 'image', maxBytes: FILE_BYTES, count: { min: 1, max: 1 }, maxTotalBytes: FILE_BYTES };
const pdfInput: InputSpec = { kind: 'pdf', maxBytes: FILE_BYTES, count: { min: 1, max: 1 }, maxTotalBytes: FILE_BYTES };
const mergeInput: InputSpec = { kind: 'pdf', maxBytes: FILE_BYTES, count: { min: 2, max: 20 }, maxTotalBytes: MERGE_TOTAL_BYTES };
const modelPdfInput: InputSpec = { ...pdfInput, maxPages: 30 };

const IMAGE_SHARED: FieldSpec[] = [
  { name: 'format', type: 'string', enum: ['jpeg', 'png', 'webp'], description: 'Target format; defaults to the input format.' },
  { name: 'quality', type: 'integer', minimum: 1, maximum: 100, default: 90, description: 'JPEG and WebP quality (ignored for PNG).' },
  {
    name: 'colors', type: 'integer', minimum: 2, maximum: 256, default: 256,
    description: 'PNG palette size (PNG only). Sending it, or calling compress, makes a palette PNG; otherwise PNG output is true colour.',
  },
];

const LEVEL: FieldSpec = {
  name: 'level', type: 'string', enum: ['lossless', 'balanced', 'max'], default: 'balanced',
  description: 'lossless: restructure and recompress streams only; balanced: images re-encoded at ebook quality; max: smallest file.',
};

// pngquant makes exact palette sizes; jpegtran rotates and mirrors JPEGs losslessly.
const IMAGE_BINARIES: readonly string[] = ['pngquant', 'jpegtran'];
const IMAGE_TIMEOUT = 30_000;
const PDF_TIMEOUT = 120_000;
const MODEL_TIMEOUT = 240_000;

const TEXT_SCHEMA = {
  type: 'object', required: ['text'], additionalProperties: false,
  properties: { text: { type: 'string', description: 'The recognised text, pages separated by form feeds (U+000C) for PDFs.' } },
};

export const operations: readonly Operation[] = [
  // ---- Images -------------------------------------------------------------------------
  {
    id: 'image.compress', path: '/v1/image/compress', tool: 'svc_image_compress', title: 'Compress or convert an image',
    description: 'Re-encodes a JPEG, PNG or WebP image, optionally converting it; PNG output is palette-quantised to `colors`.',
    category: 'image-processing', fields: IMAGE_SHARED, input: imageInput,
    price: { model: 'flat', rate: 5000 }, output: { mediaType: 'image', description: 'The compressed image (image/jpeg, image/png or image/webp).' },
    thirdParty: false, binaries: IMAGE_BINARIES, timeoutMs: IMAGE_TIMEOUT,
    work: () => import('../workers/image/transform.js').then((m) => m.compress),
  },
  {
    id: 'image.resize', path: '/v1/image/resize', tool: 'svc_image_resize', title: 'Resize an image',
    description: 'Resizes to width and/or height. With one side only, the other follows the aspect ratio and fit is ignored. contain fits inside the box (aspect kept, no padding: the result may be smaller on one side), cover fills the box and crops the overflow centred, fill stretches to exactly the box.',
    category: 'image-processing',
    fields: [
      { name: 'width', type: 'integer', minimum: 1, maximum: 16384, description: 'Target width in pixels (at least one of width and height).' },
      { name: 'height', type: 'integer', minimum: 1, maximum: 16384, description: 'Target height in pixels (at least one of width and height).' },
      { name: 'fit', type: 'string', enum: ['contain', 'cover', 'fill'], default: 'contain', description: 'How the image fits a width x height box.' },
      ...IMAGE_SHARED,
    ],
    crossCheck: (f) => (f.width === undefined && f.height === undefined
      ? { field: 'width', message: 'resize needs at least one of "width" and "height"; neither was sent' } : undefined),
    input: imageInput, price: { model: 'flat', rate: 5000 },
    output: { mediaType: 'image', description: 'The resized image (image/jpeg, image/png or image/webp).' },
    thirdParty: false, binaries: IMAGE_BINARIES, timeoutMs: IMAGE_TIMEOUT,
    work: () => import('../workers/image/transform.js').then((m) => m.resize),
  },
  {
    id: 'image.crop', path: '/v1/image/crop', tool: 'svc_image_crop', title: 'Crop an image',
    description: 'Cuts the exact rectangle (x, y, width, height) in pixels of the upright image. A rectangle reaching outside the image is refused with 422 naming the edge; it is never clamped.',
    category: 'image-processing',
    fields: [
      { name: 'width', type: 'integer', minimum: 1, maximum: 16384, required: true, description: 'Width of the rectangle in pixels.' },
      { name: 'height', type: 'integer', minimum: 1, maximum: 16384, required: true, description: 'Height of the rectangle in pixels.' },
      { name: 'x', type: 'integer', minimum: 0, maximum: 16383, default: 0, description: 'Left edge of the rectangle.' },
      { name: 'y', type: 'integer', minimum: 0, maximum: 16383, default: 0, description: 'Top edge of the rectangle.' },
      ...IMAGE_SHARED,
    ],
    input: imageInput, price: { model: 'flat', rate: 5000 },
    output: { mediaType: 'image', description: 'The cropped image (image/jpeg, image/png or image/webp).' },
    thirdParty: false, binaries: IMAGE_BINARIES, timeoutMs: IMAGE_TIMEOUT,
    work: () => import('../workers/image/transform.js').then((m) => m.crop),
  },
  {
    id: 'image.rotate', path: '/v1/image/rotate', tool: 'svc_image_rotate', title: 'Rotate an image',
    description: 'Rotates clockwise by 90, 180 or 270 degrees, moving pixels without resampling.',
    category: 'image-processing',
    fields: [
      { name: 'angle', type: 'integer', enum: [90, 180, 270], required: true, description: 'Clockwise angle in degrees.' },
      ...IMAGE_SHARED,
    ],
    input: imageInput, price: { model: 'flat', rate: 5000 },
    output: { mediaType: 'image', description: 'The rotated image (image/jpeg, image/png or image/webp).' },
    thirdParty: false, binaries: IMAGE_BINARIES, timeoutMs: IMAGE_TIMEOUT,
    work: () => import('../workers/image/transform.js').then((m) => m.rotate),
  },
  {
    id: 'image.flip', path: '/v1/image/flip', tool: 'svc_image_flip', title: 'Mirror an image',
    description: 'Mirrors the image horizontally (left-right) or vertically (top-bottom).',
    category: 'image-processing',
    fields: [
      { name: 'direction', type: 'string', enum: ['horizontal', 'vertical'], required: true, description: 'horizontal mirrors left-right; vertical mirrors top-bottom.' },
      ...IMAGE_SHARED,
    ],
    input: imageInput, price: { model: 'flat', rate: 5000 },
    output: { mediaType: 'image', description: 'The mirrored image (image/jpeg, image/png or image/webp).' },
    thirdParty: false, binaries: IMAGE_BINARIES, timeoutMs: IMAGE_TIMEOUT,
    work: () => import('../workers/image/transform.js').then((m) => m.flip),
  },
  {
    id: 'image.ocr', path: '/v1/image/ocr', tool: 'svc_image_ocr', title: 'Recognise text in an image',
    description: 'Returns the text in a JPEG, PNG or WebP image. Sent to the model provider unless the deployment runs the local OCR engine.',
    category: 'ocr', fields: [], input: imageInput, price: { model: 'flat', rate: 20000 },
    output: { mediaType: 'application/json', description: 'JSON { text }.', jsonSchema: TEXT_SCHEMA },
    thirdParty: true, binaries: [], timeoutMs: MODEL_TIMEOUT,
    work: () => import('../workers/model/ocr.js').then((m) => m.imageOcr),
  },
  // ---- PDFs ---------------------------------------------------------------------------
  {
    id: 'pdf.compress', path: '/v1/pdf/compress', tool: 'svc_pdf_compress', title: 'Compress a PDF',
    description: 'Makes a PDF smaller; never returns a file larger than the input. Links, outlines and searchable text are kept.',
    category: 'pdf-processing', fields: [LEVEL], input: pdfInput, price: { model: 'per-page', rate: 5000 },
    output: { mediaType: 'application/pdf', description: 'The compressed PDF.' },
    thirdParty: false, binaries: ['qpdf', 'gs'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/compress.js').then((m) => m.compress),
  },
  {
    id: 'pdf.merge', path: '/v1/pdf/merge', tool: 'svc_pdf_merge', title: 'Merge PDFs',
    description: 'Joins 2 to 20 PDFs in the order given, keeping their outlines.',
    category: 'pdf-processing', fields: [], input: mergeInput, price: { model: 'per-page', rate: 5000, note: 'Pages are summed over all inputs.' },
    output: { mediaType: 'application/pdf', description: 'One PDF with the inputs in order.' },
    thirdParty: false, binaries: ['qpdf'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/assemble.js').then((m) => m.merge),
  },
  {
    id: 'pdf.merge-compress', path: '/v1/pdf/merge-compress', tool: 'svc_pdf_merge_compress', title: 'Merge and compress PDFs',
    description: 'Joins 2 to 20 PDFs in order and compresses the result, at a bundle rate.',
    category: 'pdf-processing', fields: [LEVEL], input: mergeInput,
    price: { model: 'per-page', rate: 8000, note: 'Bundle rate; pages are summed over all inputs.' },
    output: { mediaType: 'application/pdf', description: 'One merged and compressed PDF.' },
    thirdParty: false, binaries: ['qpdf', 'gs'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/compress.js').then((m) => m.mergeCompress),
  },
  {
    id: 'pdf.pages', path: '/v1/pdf/pages', tool: 'svc_pdf_pages', title: 'Select, reorder, delete or rotate pages',
    description: 'Keeps the listed pages in the listed order (which deletes and reorders) and/or rotates the output pages clockwise. At least one of pages and rotate is required (422 otherwise).',
    category: 'pdf-processing',
    fields: [
      { name: 'pages', type: 'string', minLength: 1, maxLength: 4096, description: 'Page list such as "3,1-2,z": numbers, ranges a-b, z for the last page.' },
      { name: 'rotate', type: 'integer', enum: [90, 180, 270], description: 'Clockwise rotation applied to every output page.' },
    ],
    crossCheck: (f) => (f.pages === undefined && f.rotate === undefined
      ? { field: 'pages', message: 'pages needs at least one of "pages" and "rotate"; neither was sent' } : undefined),
    input: pdfInput, price: { model: 'per-page', rate: 5000 },
    output: { mediaType: 'application/pdf', description: 'The recomposed PDF.' },
    thirdParty: false, binaries: ['qpdf'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/assemble.js').then((m) => m.pages),
  },
  {
    id: 'pdf.split', path: '/v1/pdf/split', tool: 'svc_pdf_split', title: 'Split a PDF',
    description: 'One PDF per range, in a ZIP whose entries are named part-NN-pA-B.pdf (NN the range number from 01, A-B its first and last page).',
    category: 'pdf-processing',
    fields: [{ name: 'ranges', type: 'string', required: true, minLength: 1, maxLength: 4096, description: 'At most 50 comma-separated ranges such as "1-3,4-6,7-z".' }],
    input: pdfInput, price: { model: 'per-page', rate: 5000 },
    output: { mediaType: 'application/zip', description: 'ZIP with one PDF per range.' },
    thirdParty: false, binaries: ['qpdf'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/assemble.js').then((m) => m.split),
  },
  {
    id: 'pdf.protect', path: '/v1/pdf/protect', tool: 'svc_pdf_protect', title: 'Password-protect a PDF',
    description: 'Encrypts with AES-256; the password is both the user and the owner password.',
    category: 'pdf-processing',
    fields: [{ name: 'password', type: 'string', required: true, minLength: 1, maxLength: 256, secret: true, description: 'The password, 1 to 256 characters.' }],
    input: pdfInput, price: { model: 'per-page', rate: 5000 },
    output: { mediaType: 'application/pdf', description: 'The AES-256 encrypted PDF.' },
    thirdParty: false, binaries: ['qpdf'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/security.js').then((m) => m.protect),
  },
  {
    id: 'pdf.unlock', path: '/v1/pdf/unlock', tool: 'svc_pdf_unlock', title: 'Remove a PDF password',
    description: 'Decrypts a password-protected PDF with its current password. A PDF that is not encrypted, or a wrong password, is refused with 422 before payment.',
    category: 'pdf-processing',
    fields: [{ name: 'password', type: 'string', required: true, minLength: 1, maxLength: 1024, secret: true, description: 'The current password.' }],
    input: { ...pdfInput, acceptsEncrypted: true }, price: { model: 'flat', rate: 20000, note: 'Flat: an encrypted PDF cannot be page-counted before payment.' },
    output: { mediaType: 'application/pdf', description: 'The decrypted PDF.' },
    thirdParty: false, binaries: ['qpdf'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/security.js').then((m) => m.unlock),
  },
  {
    id: 'pdf.render', path: '/v1/pdf/render', tool: 'svc_pdf_render', title: 'Render pages to PNG',
    description: 'Renders every page (at most 50) to PNG at dpi; a page is bounded to 50 megapixels (larger pages are refused with 413 naming the page).',
    category: 'pdf-processing',
    fields: [{ name: 'dpi', type: 'integer', minimum: 36, maximum: 300, default: 150, description: 'Resolution in dots per inch.' }],
    input: { ...pdfInput, maxPages: 50 }, price: { model: 'per-page', rate: 10000, maxAmount: 500000 },
    output: { mediaType: 'application/zip', description: 'ZIP with page-NNNN.png per page, in page order.' },
    thirdParty: false, binaries: ['mutool'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/render.js').then((m) => m.render),
  },
  {
    id: 'pdf.images', path: '/v1/pdf/images', tool: 'svc_pdf_images', title: 'Extract embedded images',
    description: 'One PNG per embedded raster image (JPEG sources converted), in a ZIP named image-NNNN.png in the order found; 422 when there are none.',
    category: 'pdf-extraction', fields: [], input: pdfInput, price: { model: 'per-page', rate: 10000 },
    output: { mediaType: 'application/zip', description: 'ZIP with one PNG per embedded image.' },
    thirdParty: false, binaries: ['mutool'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/images.js').then((m) => m.images),
  },
  {
    id: 'pdf.extract', path: '/v1/pdf/extract', tool: 'svc_pdf_extract', title: 'Extract plain text',
    description: 'The text layer in reading order, the page count, and whether the PDF looks scanned (pages with images and almost no text).',
    category: 'pdf-extraction', fields: [], input: pdfInput, price: { model: 'per-page', rate: 10000 },
    output: {
      mediaType: 'application/json', description: 'JSON { text, pageCount, likelyScanned }.',
      jsonSchema: {
        type: 'object', required: ['text', 'pageCount', 'likelyScanned'], additionalProperties: false,
        properties: {
          text: { type: 'string', description: 'Text of all pages, pages separated by form feeds (U+000C).' },
          pageCount: { type: 'integer', minimum: 1 },
          likelyScanned: { type: 'boolean', description: 'True when the PDF has no usable text layer: use /v1/pdf/ocr.' },
        },
      },
    },
    thirdParty: false, binaries: ['pdftotext', 'mutool'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/extract.js').then((m) => m.extract),
  },
  {
    id: 'pdf.markdown', path: '/v1/pdf/markdown', tool: 'svc_pdf_markdown', title: 'Convert a PDF to Markdown',
    description: 'Markdown with headings, lists, tables, code, links and reading order recovered from the text layer, locally.',
    category: 'pdf-extraction', fields: [], input: pdfInput, price: { model: 'per-page', rate: 20000 },
    output: { mediaType: 'text/markdown; charset=utf-8', description: 'Markdown text.' },
    thirdParty: false, binaries: ['mutool'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/markdown/index.js').then((m) => m.markdown),
  },
  {
    id: 'pdf.from-markdown', path: '/v1/pdf/from-markdown', tool: 'svc_pdf_from_markdown', title: 'Typeset Markdown as a PDF',
    description: 'Typesets UTF-8 Markdown (CommonMark with tables and strikethrough) as an A4 PDF with embedded fonts, links, an outline and page numbers. Images are skipped and raw HTML is shown as text; nothing is ever fetched.',
    category: 'pdf-processing',
    fields: [{ name: 'title', type: 'string', maxLength: 1000, description: 'Document title metadata.' }],
    input: { kind: 'markdown', maxBytes: MARKDOWN_BYTES, count: { min: 1, max: 1 }, maxTotalBytes: MARKDOWN_BYTES },
    price: { model: 'flat', rate: 10000 },
    output: { mediaType: 'application/pdf', description: 'A typeset A4 PDF.' },
    thirdParty: false, binaries: ['python3', 'weasyprint'], timeoutMs: PDF_TIMEOUT,
    work: () => import('../workers/pdf/from-markdown.js').then((m) => m.fromMarkdown),
  },
  {
    id: 'pdf.ocr', path: '/v1/pdf/ocr', tool: 'svc_pdf_ocr', title: 'Recognise text in a PDF',
    description: 'Renders up to 30 pages and recognises their text, in page order.',
    category: 'ocr', fields: [], input: modelPdfInput, price: { model: 'per-page', rate: 30000, maxAmount: 900000 },
    output: { mediaType: 'application/json', description: 'JSON { text }.', jsonSchema: TEXT_SCHEMA },
    thirdParty: true, binaries: ['mutool'], timeoutMs: MODEL_TIMEOUT,
    work: () => import('../workers/model/ocr.js').then((m) => m.pdfOcr),
  },
  {
    id: 'pdf.tables', path: '/v1/pdf/tables', tool: 'svc_pdf_tables', title: 'Extract tables',
    description: 'Finds the tables on up to 30 pages and returns them as rows of strings.',
    category: 'pdf-extraction', fields: [], input: modelPdfInput, price: { model: 'per-page', rate: 30000, maxAmount: 900000 },
    output: {
      mediaType: 'application/json', description: 'JSON { tables: [ { page, title, headers, rows } ] }.',
      jsonSchema: {
        type: 'object', required: ['tables'], additionalProperties: false,
        properties: {
          tables: {
            type: 'array',
            items: {
              type: 'object', required: ['page', 'title', 'headers', 'rows'], additionalProperties: false,
              properties: {
                page: { type: 'integer', minimum: 1, description: '1-based page number.' },
                title: { type: ['string', 'null'], description: 'Caption or title, or null.' },
                headers: { type: 'array', items: { type: 'string' } },
                rows: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
              },
            },
          },
        },
      },
    },
    thirdParty: true, binaries: ['mutool'], timeoutMs: MODEL_TIMEOUT,
    work: () => import('../workers/model/tables.js').then((m) => m.pdfTables),
  },
  {
    id: 'pdf.structured', path: '/v1/pdf/structured', tool: 'svc_pdf_structured', title: 'Extract schema-shaped JSON',
    description: 'Extracts an object shaped by the given JSON Schema from up to 30 pages.',
    category: 'pdf-extraction',
    fields: [{ name: 'schema', type: 'string', required: true, minLength: 2, maxBytes: SCHEMA_BYTES, secret: true, description: 'A JSON Schema (as a string, at most 16 KB) of the object to extract.' }],
    input: modelPdfInput, price: { model: 'per-page', rate: 40000, maxAmount: 1200000 },
    output: {
      mediaType: 'application/json', description: 'JSON { data } where data matches the schema.',
      jsonSchema: { type: 'object', required: ['data'], properties: { data: { type: 'object' } } },
    },
    thirdParty: true, binaries: ['mutool'], timeoutMs: MODEL_TIMEOUT,
    work: () => import('../workers/model/structured.js').then((m) => m.pdfStructured),
  },
];

export function operationById(id: string): Operation {
  const op = operations.find((o) => o.id === id);
  if (!op) throw new Error(`unknown operation ${id}`);
  return op;
}

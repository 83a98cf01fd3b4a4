import { fail, megabytes } from '../../core/errors.js';
import { MAX_IMAGE_PIXELS } from '../../checks/image.js';
import { parsePageList } from '../../core/page-ranges.js';
import type { StampRequest } from '../../tools/engines/mupdf-js.js';
import { firstUnsupportedCharacter, STAMP_CHARACTERS, STAMP_MARGIN_PT, STAMP_POSITIONS } from '../../tools/engines/stamp-text.js';
import { defineOperation, MB } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

/** The longest stamp text, in characters: a line, not a page. */
export const STAMP_TEXT_MAX_CHARS = 500;
/** The stamp image's size limit. */
export const STAMP_IMAGE_MAX_BYTES = 10 * MB;

/** The job's parameters: the engine's request but for the image's file, which the work function writes. */
export type StampPlan = Omit<StampRequest, 'image'> & { image?: { orientation: number; width?: number } };

export const pdfStamp = defineOperation({
  id: 'pdf.stamp', title: 'Stamp text or an image on pages: watermarks, page numbers, Bates numbers',
  description: 'Draws a line of text (in Helvetica, selectable; {n} is the page number counted from start, {total} the page count) '
    + 'or a PNG or JPEG image on every page or the pages listed, over the content or under it, at one of nine positions of the page '
    + 'as displayed, with a colour, opacity and rotation. Watermarks ("CONFIDENTIAL" at 45 degrees, opacity 0.2), page numbers '
    + '("Page {n} of {total}" at the bottom) and Bates numbers ("ACME-{n}" with digits 6) are all this operation.',
  category: 'pdf-processing',
  fields: [
    { name: 'text', type: 'string', minLength: 1, maxLength: STAMP_TEXT_MAX_CHARS, description: `The text to stamp, one line: {n} is the page's number (counted from start), {total} the document's page count. Characters: ${STAMP_CHARACTERS}. Either text or image.` },
    { name: 'position', type: 'string', enum: STAMP_POSITIONS, default: 'center', description: `Where on the page as displayed (after its rotation); every position but center keeps ${STAMP_MARGIN_PT} points from the edges it is placed against.` },
    { name: 'font_size', type: 'number', minimum: 1, maximum: 500, default: 12, description: 'The text\'s size in points.' },
    { name: 'color', type: 'string', pattern: { regex: '^#[0-9A-Fa-f]{6}$', means: 'a colour as #rrggbb (six hexadecimal digits)' }, default: '#000000', description: 'The text\'s colour, #rrggbb.' },
    { name: 'opacity', type: 'number', minimum: 0, maximum: 1, default: 1, description: 'From 0 (invisible) to 1 (opaque), for text and image.' },
    { name: 'rotation', type: 'number', minimum: -360, maximum: 360, default: 0, description: 'Degrees counter-clockwise about the stamp\'s centre (45 rises from bottom-left to top-right).' },
    { name: 'layer', type: 'string', enum: ['over', 'under'], default: 'over', description: 'over: drawn on top of the page; under: beneath its content (hidden where the page paints an opaque background).' },
    { name: 'pages', type: 'string', minLength: 1, maxLength: 4096, description: 'The pages to stamp, such as "1,3-5,z" (numbers, ranges a-b, z for the last page); all pages by default. The price counts every page of the document.' },
    { name: 'start', type: 'integer', minimum: 0, maximum: 999_999_999, default: 1, description: '{n} of the document\'s first page (Bates numbering continues a previous document with its next number).' },
    { name: 'digits', type: 'integer', minimum: 1, maximum: 12, description: '{n} is padded with zeros to this many digits (6: 000001).' },
    { name: 'image_width', type: 'number', minimum: 1, maximum: 14_400, description: 'The image\'s width on the page in points (its height follows); by default its own size at its resolution (96 dpi when it has none), made smaller to fit the page.' },
  ],
  input: {
    ...PDF_INPUT,
    namedFile: {
      name: 'image', kind: 'image', formats: ['png', 'jpeg'], maxBytes: STAMP_IMAGE_MAX_BYTES,
      description: `A PNG (transparency kept) or JPEG image to stamp instead of text, at most ${megabytes(STAMP_IMAGE_MAX_BYTES)} and ${MAX_IMAGE_PIXELS / 1e6} megapixels.`,
    },
  },
  price: { model: 'per-page', rate: 5000, note: 'Every page of the document counts, whichever pages are stamped.' },
  output: { mediaType: 'application/pdf', description: 'The stamped PDF.' },
  content: { local: true }, engines: [], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields, namedFile, pages }): StampPlan => {
    if (fields.text !== undefined && namedFile) fail('FIELD_INVALID', 'send either "text" or "image", not both', { field: 'text' });
    if (fields.text === undefined && !namedFile) fail('FIELD_INVALID', '/v1/pdf/stamp needs "text" or an "image" to stamp; neither was sent', { field: 'text' });
    if (fields.image_width !== undefined && !namedFile) fail('FIELD_INVALID', '"image_width" applies to an image stamp; this request stamps text', { field: 'image_width' });
    const unsupported = fields.text === undefined ? undefined : firstUnsupportedCharacter(fields.text);
    if (unsupported) {
      fail('FIELD_INVALID', `"text" holds ${unsupported}, which the stamp's font (Helvetica) cannot show; it shows ${STAMP_CHARACTERS}`, { field: 'text' });
    }
    const chosen = fields.pages === undefined ? undefined : [...new Set(parsePageList(fields.pages, pages, { field: 'pages' }))].sort((a, b) => a - b);
    const imageWidth = fields.image_width !== undefined ? { width: fields.image_width } : {};
    return {
      ...(fields.text !== undefined ? { text: fields.text } : {}),
      ...(namedFile ? { image: { orientation: namedFile.header.orientation, ...imageWidth } } : {}),
      numbering: { start: fields.start, ...(fields.digits !== undefined ? { digits: fields.digits } : {}) },
      position: fields.position, fontSize: fields.font_size, color: fields.color, opacity: fields.opacity,
      rotation: fields.rotation, layer: fields.layer,
      ...(chosen ? { pages: chosen } : {}),
    };
  },
});

import { MAX_IMAGE_PIXELS, PAGE_IMAGE_FORMAT_NAMES, type PageImageFormat } from '../../checks/image.js';
import { IMAGE_PAGE_SIZES, type ImagePageSize } from '../../tools/engines/mupdf-js.js';
import { defineOperation, MB } from '../define.js';
import { PDF_TIMEOUT_MS } from '../shared.js';

/** How many images one request takes: each is a page. */
const FROM_IMAGES_MAX_FILES = 100;

/** The job's parameters: what the work function needs of each image, in order, and the layout. */
export interface FromImagesPlan {
  images: Array<{ format: PageImageFormat; orientation: number }>;
  pageSize: ImagePageSize;
  marginMm: number;
}

export const pdfFromImages = defineOperation({
  id: 'pdf.from-images', title: 'Images to PDF',
  description: `Makes one PDF of 1 to ${FROM_IMAGES_MAX_FILES} images (${PAGE_IMAGE_FORMAT_NAMES}), a page each in the order given. `
    + 'JPEGs are embedded as they are (their bytes unchanged, never re-encoded); the others are stored losslessly. Each image stands '
    + 'as its EXIF orientation says. page_size fit makes each page the image\'s size at its resolution (96 dpi when it states none) '
    + 'plus the margins; a4 and letter are portrait pages where the image is scaled to fit inside the margins, aspect kept, centred.',
  category: 'pdf-processing',
  fields: [
    {
      name: 'page_size', type: 'string', enum: IMAGE_PAGE_SIZES, default: 'fit',
      description: 'fit: each page the image\'s size (at its resolution, or 96 dpi) plus the margins; '
        + 'a4 or letter: portrait paper, the image scaled to fit inside the margins and centred.',
    },
    {
      name: 'margin_mm', type: 'integer', minimum: 0, maximum: 50, default: 0,
      description: 'White space on every side of each page, in millimetres (0 to 50).',
    },
  ],
  input: {
    kind: 'page-image', maxBytes: 50 * MB, count: { min: 1, max: FROM_IMAGES_MAX_FILES }, maxTotalBytes: 95 * MB,
    // The price's bound: each image is a page.
    maxPages: FROM_IMAGES_MAX_FILES,
  },
  price: {
    model: 'per-page', rate: 5000,
    note: `Each image is a page: the price is per image (each at most ${MAX_IMAGE_PIXELS / 1e6} megapixels).`,
  },
  output: { mediaType: 'application/pdf', description: 'One PDF, a page per image in the order sent.' },
  content: { local: true }, engines: [], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields, files }): FromImagesPlan => ({
    images: files.map((file) => {
      if (file.kind !== 'page-image') throw new Error('from-images was given a file that is not an image');
      return { format: file.header.format, orientation: file.header.orientation };
    }),
    pageSize: fields.page_size,
    marginMm: fields.margin_mm,
  }),
});

import { fail } from '../../core/errors.js';
import { MAX_RENDER_PIXELS, renderPixels } from '../../checks/pdf.js';
import { MAX_OCR_LANGUAGES, OCR_LANGUAGE_PACKS, OCRMYPDF_VECTOR_DPI, type OcrLanguage } from '../../tools/engines/ocrmypdf.js';
import { defineOperation, type FieldSpec } from '../define.js';
import { PDF_INPUT } from '../shared.js';

const CODES = Object.keys(OCR_LANGUAGE_PACKS) as OcrLanguage[];

const LANGUAGES = {
  name: 'languages', type: 'string', default: 'eng', minLength: 3, maxLength: 64,
  description: `The languages of the text, as tesseract codes separated by commas (at most ${MAX_OCR_LANGUAGES}; each one read makes a page slower): `
    + `${CODES.map((code) => `${code} (${OCR_LANGUAGE_PACKS[code]})`).join(', ')}. Other codes are refused (422).`,
  example: 'eng,deu',
} as const satisfies FieldSpec;

/** The languages field as a list of installed packs, or the client's error naming the field. */
export function parseLanguages(value: string): OcrLanguage[] {
  const codes = value.split(',').map((code) => code.trim());
  const unknown = codes.filter((code) => !(CODES as string[]).includes(code));
  if (unknown.length > 0) {
    const shown = unknown.map((code) => (code === '' ? 'an empty code' : `"${code.slice(0, 16)}"`)).join(', ');
    fail('FIELD_INVALID', `"languages" holds ${shown}, not among the installed language packs: ${CODES.join(', ')} (separated by commas)`, { field: 'languages' });
  }
  if (new Set(codes).size !== codes.length) fail('FIELD_INVALID', '"languages" names a language twice', { field: 'languages' });
  if (codes.length > MAX_OCR_LANGUAGES) {
    fail('FIELD_INVALID', `"languages" names ${codes.length} languages; at most ${MAX_OCR_LANGUAGES} are read at once`, { field: 'languages' });
  }
  return codes as OcrLanguage[];
}

export interface PdfSearchablePlan {
  languages: OcrLanguage[];
}

/** 50 pages of about 2 s of CPU each, on one core, with room for OCRmyPDF's own start and assembly. */
const SEARCHABLE_TIMEOUT_MS = 240_000;

export const pdfSearchable = defineOperation({
  id: 'pdf.searchable', title: 'Make a scanned PDF searchable',
  description: 'Adds an invisible text layer, recognised on this server (OCRmyPDF with tesseract), over every page that has no text; '
    + 'the page images are kept as they are, and pages that already have text are left unchanged. Up to 50 pages.',
  category: 'ocr', fields: [LANGUAGES], input: { ...PDF_INPUT, maxPages: 50 }, price: { model: 'per-page', rate: 20000 },
  output: {
    mediaType: 'application/pdf', description: 'The same PDF with a text layer over its scanned pages.',
    unprocessable: 'Unsupported, corrupt or encrypted input, or an invalid field (an unknown language); or, after the work and uncharged, a PDF whose pages OCRmyPDF could not render.',
  },
  content: { local: true }, engines: ['ocrmypdf', 'tesseract', 'gs'], timeoutMs: SEARCHABLE_TIMEOUT_MS,
  checkFields: (fields) => { parseLanguages(fields.languages); },
  plan: async ({ fields, files, pageBoxes }): Promise<PdfSearchablePlan> => {
    const file = files[0];
    if (file?.kind === 'pdf' && file.encrypted) {
      fail('ENCRYPTED_PDF', 'the PDF is encrypted (it opens without a password, but restricts what may be done with it); OCRmyPDF does not add text to encrypted PDFs: remove the encryption first', { field: 'file' });
    }
    // OCRmyPDF draws a page holding vector content at 400 dpi before tesseract reads it: a page
    // too large for that is refused from its size before payment, not found by the job.
    for (const box of (await pageBoxes()) ?? []) {
      const { width, height, pixels } = renderPixels(box, OCRMYPDF_VECTOR_DPI);
      if (!Number.isFinite(pixels) || pixels > MAX_RENDER_PIXELS) {
        fail('LIMIT_EXCEEDED', `page ${box.page} is too large to read: at ${OCRMYPDF_VECTOR_DPI} dpi it is ${width} x ${height} pixels, more than the limit of 50 megapixels`, { field: 'file' });
      }
    }
    return { languages: parseLanguages(fields.languages) };
  },
});

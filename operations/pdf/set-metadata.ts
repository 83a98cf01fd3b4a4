import { fail } from '../../core/errors.js';
import { METADATA_KEYS, type MetadataRequest } from '../../tools/engines/mupdf-js.js';
import { defineOperation, type FieldSpec } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

/** Characters of one value: far more than any title or keyword list, far less than a document. */
export const METADATA_VALUE_CHARS = 4096;

const field = <Name extends string>(name: Name, description: string) => ({
  name, type: 'string', maxLength: METADATA_VALUE_CHARS, emptyIsValue: true, description: `${description} An empty string removes it; absent keeps it.`,
}) as const satisfies FieldSpec;

export const pdfSetMetadata = defineOperation({
  id: 'pdf.set-metadata', title: 'Write a PDF\'s metadata',
  description: 'Sets or removes the title, author, subject, keywords and creator, in the Info dictionary and in the XMP packet alike (the packet is updated where it exists and written where it does not); the modification dates become the time of the call. At least one field is required.',
  category: 'pdf-processing',
  fields: [
    field('title', 'The title (Info Title, XMP dc:title).'),
    field('author', 'The author (Info Author, XMP dc:creator).'),
    field('subject', 'The subject (Info Subject, XMP dc:description).'),
    field('keywords', 'The keywords (Info Keywords, XMP pdf:Keywords).'),
    field('creator', 'The application that made the original (Info Creator, XMP xmp:CreatorTool).'),
  ],
  checkFields: (fields) => {
    if (METADATA_KEYS.every((key) => fields[key] === undefined)) {
      fail('FIELD_INVALID', `set-metadata needs at least one of ${METADATA_KEYS.join(', ')}; none was sent`, { field: 'title' });
    }
  },
  input: PDF_INPUT, price: { model: 'flat', rate: 5000 },
  output: { mediaType: 'application/pdf', description: 'The PDF with its metadata written.' },
  content: { local: true }, engines: [], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields }): MetadataRequest =>
    Object.fromEntries(METADATA_KEYS.flatMap((key) => (fields[key] === undefined ? [] : [[key, fields[key]]]))),
});

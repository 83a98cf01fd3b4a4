import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

const TEXT = (description: string) => ({ type: ['string', 'null'], description });
const DATE = (description: string) => ({ type: ['string', 'null'], description: `${description}, ISO 8601 with the time zone the file gives (none when it gives none).` });

export const METADATA_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['title', 'author', 'subject', 'keywords', 'creator', 'producer', 'created', 'modified', 'pageCount', 'version', 'encrypted', 'pdfa', 'xmp'],
  properties: {
    title: TEXT('The Info dictionary\'s Title'), author: TEXT('Author'), subject: TEXT('Subject'), keywords: TEXT('Keywords'),
    creator: TEXT('Creator: the application that made the original'), producer: TEXT('Producer: the application that wrote the PDF'),
    created: DATE('CreationDate'), modified: DATE('ModDate'),
    pageCount: { type: 'integer', minimum: 1 },
    version: { type: 'string', description: 'The PDF version, "1.7" or "2.0" (the catalog\'s /Version when later than the header\'s).' },
    encrypted: { type: 'boolean', description: 'true for a file that opens without a password but is encrypted (an owner password restricting its use).' },
    pdfa: { type: ['string', 'null'], description: 'The PDF/A part and conformance the XMP packet claims ("2B"), or null; a claim, not a validation.' },
    xmp: { type: ['string', 'null'], description: 'The XMP metadata packet as text, or null.' },
  },
};

export const pdfMetadata = defineOperation({
  id: 'pdf.metadata', title: 'Read a PDF\'s metadata',
  description: 'The document information (title, author, subject, keywords, creator, producer, dates), page count, PDF version, whether it is encrypted, the PDF/A level it claims and its XMP packet. Files that need a password to open are refused (422); files that open without one are read.',
  category: 'pdf-extraction', fields: [], input: PDF_INPUT, price: { model: 'flat', rate: 5000 },
  output: { mediaType: 'application/json', description: 'JSON { title, author, subject, keywords, creator, producer, created, modified, pageCount, version, encrypted, pdfa, xmp }.', jsonSchema: METADATA_SCHEMA },
  content: { local: true }, engines: [], timeoutMs: PDF_TIMEOUT_MS,
  plan: () => ({}),
});

import { parseRedaction, REDACTION_BOUNDS, REGEX_SUBSET } from '../../checks/redaction.js';
import { ATTACHMENT_MODES, type RedactionRequest } from '../../tools/engines/mupdf-js.js';
import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

const { texts, textChars, patterns, patternChars, areas, fieldChars } = REDACTION_BOUNDS;

/** The redactions per page travel in a response header: a page bound keeps it a few KB. */
const MAX_PAGES = 1000;

export const pdfRedact = defineOperation({
  id: 'pdf.redact', title: 'Redact text and areas from a PDF',
  description: 'Removes from the file, not just covers, every match of the given strings and patterns and everything'
    + ' inside the given areas: the text, image pixels and vector drawing beneath, each marked with a black'
    + ' box. Text is found as MuPDF and poppler (pdftotext) both extract it. Copies elsewhere (metadata, '
    + 'outline, annotations, form values) are cut; embedded files are redacted or removed (attachments). At'
    + ' least one of text, regex and areas; no match is count 0. Other lines keep their place.',
  category: 'pdf-processing',
  fields: [
    { name: 'text', type: 'string', minLength: 2, maxLength: fieldChars, description: `A JSON array of literal strings to remove wherever they occur (up to ${texts}, each up to ${textChars} characters): case-sensitive, and any run of white space in a string matches any run of white space (a line break among them).`, example: '["Jane Doe","555-0142"]' },
    { name: 'regex', type: 'string', minLength: 2, maxLength: fieldChars, description: `A JSON array of regular expressions whose matches are removed (up to ${patterns}, each up to ${patternChars} characters): ${REGEX_SUBSET}. Anything else is refused (422) before payment. Matched within a page's text, lines separated by a line break.`, example: '["\\\\d{3}-\\\\d{2}-\\\\d{4}"]' },
    { name: 'areas', type: 'string', minLength: 2, maxLength: fieldChars, description: `A JSON array of rectangles to clear (up to ${areas}): {"page", "x", "y", "width", "height"} in PDF points (1/72 inch) from the top-left corner of the page as displayed; each must lie on its page. Text and image pixels inside are removed; a vector path that reaches into an area is removed whole.`, example: '[{"page":1,"x":72,"y":90,"width":200,"height":40}]' },
    {
      name: 'attachments', type: 'string', enum: ATTACHMENT_MODES, default: 'redact',
      description: 'What happens to files embedded in the PDF. redact: embedded PDFs are redacted as the document is, '
        + 'plain text and Office files (DOCX, XLSX, PPTX, OpenDocument) have every match cut from their text, '
        + 'and any file that cannot be searched (images, archives, encrypted or damaged files, a match split '
        + 'across differently formatted runs) is removed. remove: every embedded file is removed. Either way no'
        + ' match is left; the report counts both.',
    },
  ],
  checkFields: (fields) => { parseRedaction(fields, null); },
  input: { ...PDF_INPUT, maxPages: MAX_PAGES }, price: { model: 'per-page', rate: 10000 },
  output: {
    mediaType: 'application/pdf', description: 'The redacted PDF.',
    report: {
      name: 'redactions', header: 'Paydoc-Redactions',
      description: 'What was redacted: the areas (matches either reader found, and given areas) per page and in all, how many strings elsewhere in the file (metadata, outline, annotations, form values) held a match and were cut, and what happened to embedded files.',
      jsonSchema: {
        type: 'object', required: ['total', 'pages', 'elsewhere', 'attachments'], additionalProperties: false,
        properties: {
          total: { type: 'integer', minimum: 0, description: 'Redacted areas in the whole document.' },
          pages: { type: 'array', items: { type: 'integer', minimum: 0 }, description: 'Redacted areas per page, page 1 first, one number for every page.' },
          elsewhere: { type: 'integer', minimum: 0, description: 'Strings outside the page content that held a match and were cut.' },
          attachments: {
            type: 'object', required: ['redacted', 'removed'], additionalProperties: false,
            description: 'Embedded files.',
            properties: {
              redacted: { type: 'integer', minimum: 0, description: 'Matches cut from embedded files (within an embedded PDF, everything its own redaction counts).' },
              removed: { type: 'integer', minimum: 0, description: 'Embedded files removed whole.' },
            },
          },
        },
      },
    },
  },
  content: { local: true }, engines: ['pdftotext'], timeoutMs: PDF_TIMEOUT_MS,
  // Areas are placed on the pages as mutool measures them (rotation and UserUnit applied, as MuPDF draws them).
  plan: async ({ fields, pageBoxes }): Promise<RedactionRequest> =>
    parseRedaction(fields, fields.areas === undefined ? null : await pageBoxes()),
});

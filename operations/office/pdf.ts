import type { OfficeFormat } from '../../tools/engines/libreoffice.js';
import { defineOperation, MB } from '../define.js';

/**
 * The most pages a conversion may return: the PDF's pages are counted after the conversion, and
 * a longer one is refused (413, nothing charged). A flat price pays for a bounded amount of work.
 */
export const OFFICE_MAX_PAGES = 300;

/**
 * LibreOffice's start with a fresh profile takes about 2 s; a 300-page report or a workbook of
 * several thousand rows lays out in well under a minute on one core.
 */
export const OFFICE_TIMEOUT_MS = 120_000;

export interface OfficePdfPlan {
  /** The format the bytes were found to be, before payment; LibreOffice reads the file as that or not at all. */
  format: OfficeFormat;
}

export const officePdf = defineOperation({
  id: 'office.pdf', title: 'Convert an Office document to PDF',
  description: 'Converts a Word (DOCX, DOC), Excel (XLSX, XLS), PowerPoint (PPTX, PPT), OpenDocument (ODT, ODS, ODP) or RTF document to PDF with LibreOffice, on this server. '
    + 'The format is read from the bytes before payment (a file whose name or declared type says otherwise is refused); macros never run, linked content is never fetched, and metric-compatible fonts (Liberation, Carlito, Caladea) stand in for Office\'s own. '
    + `Password-protected documents are refused. At most ${OFFICE_MAX_PAGES} pages of PDF and ${OFFICE_TIMEOUT_MS / 1000} s of conversion.`,
  category: 'office-conversion', fields: [],
  input: { kind: 'office', maxBytes: 50 * MB, count: { min: 1, max: 1 }, maxTotalBytes: 50 * MB },
  price: { model: 'flat', rate: 20000, note: 'Flat: the page count is only known after the conversion.' },
  output: {
    mediaType: 'application/pdf', description: 'The document as PDF.',
    unprocessable: `Not an Office document, one whose name or declared type disagrees with its bytes, a password-protected one, or a damaged one; or, after the work and uncharged, a document LibreOffice cannot read. A PDF of more than ${OFFICE_MAX_PAGES} pages is refused (413), uncharged.`,
  },
  content: { local: true }, engines: ['soffice', 'qpdf'], timeoutMs: OFFICE_TIMEOUT_MS,
  plan: ({ files }): OfficePdfPlan => {
    const file = files[0];
    if (file?.kind !== 'office') throw new Error('office.pdf planned without an inspected Office file');
    return { format: file.format };
  },
});

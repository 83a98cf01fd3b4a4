// The PDF inspector: the upload is written to the job directory (qpdf and mutool read files)
// while its digest is computed, inspected (or its quote's inspection found in the cache),
// rewritten by qpdf where it needs it, and on the quote read page by page by MuPDF where the
// operation's work does.
import { fail } from '../../core/errors.js';
import type { InspectionCache } from '../cache.js';
import { checkMupdfReadsPages, inspectPdf, normalisePdf, readPageBoxes, type PageBox, type PdfInspection } from '../pdf.js';
import type { InspectedAs, Inspector } from './inspector.js';

interface CachedPdfInspection extends PdfInspection {
  /** True when a quote inspected it, deep check included where cheap; false after a paid retry's lighter pass. */
  quoted: boolean;
}

interface Inspection {
  file: string;
  digest: string;
  password: string | undefined;
  acceptsEncrypted: boolean;
  paid: boolean;
}

/** A PDF upload's inspection, from the cache when a quote (or an earlier retry) already ran it on these bytes. */
async function inspectUploadedPdf(upload: Inspection, inspections: InspectionCache): Promise<PdfInspection> {
  const { file, digest, password, acceptsEncrypted, paid } = upload;
  const key = `${acceptsEncrypted ? 'pdf-unlock' : 'pdf'}:${digest}`;
  const cached = inspections.get<CachedPdfInspection>(key);
  // A quote wants the deep check where cheap, which a paid retry's pass skipped.
  if (cached && (paid || cached.quoted)) return cached;
  const inspected = await inspectPdf(file, {
    acceptsEncrypted,
    ...(password !== undefined ? { password } : {}),
    ...(paid ? { deep: false } : {}),
  });
  inspections.set(key, { ...inspected, quoted: !paid });
  return inspected;
}

/** Page sizes for the pre-payment render check, cached like the inspection; undefined when mutool cannot list them. */
async function renderPageBoxes(file: string, digest: string, inspections: InspectionCache): Promise<PageBox[] | undefined> {
  const key = `page-boxes:${digest}`;
  const cached = inspections.get<PageBox[]>(key);
  if (cached) return cached;
  const boxes = await readPageBoxes(file);
  if (boxes) inspections.set(key, boxes);
  return boxes;
}

export const inspectPdfUpload: Inspector<InspectedAs<'pdf'>> = async (bytes, context) => {
  const { op, fields, index, paid, jobDir, inspections } = context;
  const written = jobDir.write(`input-${index + 1}.pdf`, bytes).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOSPC') {
      fail('UNAVAILABLE', 'the service has no temporary space left for the upload; retry in a moment; nothing was charged',
        { retryAfterSeconds: 10 });
    }
    throw err;
  });
  // A large upload's digest is computed on this thread while libuv writes the file.
  const acceptsEncrypted = op.input.acceptsEncrypted === true;
  const password = op.input.acceptsEncrypted ? String(fields.password ?? '') : undefined;
  const digest = inspections.digest(bytes, password);
  const file = await written;
  const info = await inspectUploadedPdf({ file, digest, password, acceptsEncrypted, paid }, inspections);
  // Every engine after the count reads what was counted: a repaired or prefixed upload is
  // replaced by qpdf's rewrite of it (the same on the quote and on the paid retry).
  const work = info.needsRewrite ? await normalisePdf(file, info.pages, password) : bytes;
  // Like the deep check, on the quote only: a paid retry's job fails uncharged instead.
  if (op.input.pagesReadByMupdf && !paid) await checkMupdfReadsPages(file, info.pages, op.path);
  return {
    inspected: { kind: 'pdf', bytes: work, path: file, pages: info.pages, encrypted: info.encrypted },
    job: { bytes: work, path: file, pages: info.pages },
    pages: info.pages,
    pageBoxes: () => renderPageBoxes(file, digest, inspections),
  };
};

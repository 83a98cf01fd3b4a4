// The operation table: every operation in the order they are listed everywhere. Each is
// declared whole in its own module; everything public is derived from these declarations.
import type { Operation } from './define.js';
import { imageCompress } from './image/compress.js';
import { imageResize } from './image/resize.js';
import { imageCrop } from './image/crop.js';
import { imageRotate } from './image/rotate.js';
import { imageFlip } from './image/flip.js';
import { imageOcr } from './image/ocr.js';
import { pdfCompress } from './pdf/compress.js';
import { pdfMerge } from './pdf/merge.js';
import { pdfMergeCompress } from './pdf/merge-compress.js';
import { pdfPages } from './pdf/pages.js';
import { pdfSplit } from './pdf/split.js';
import { pdfProtect } from './pdf/protect.js';
import { pdfUnlock } from './pdf/unlock.js';
import { pdfRedact } from './pdf/redact.js';
import { pdfSanitize } from './pdf/sanitize.js';
import { pdfRender } from './pdf/render.js';
import { pdfImages } from './pdf/images.js';
import { pdfExtract } from './pdf/extract.js';
import { pdfMarkdown } from './pdf/markdown.js';
import { pdfBlocks } from './pdf/blocks.js';
import { pdfFromMarkdown } from './pdf/from-markdown.js';
import { pdfOcr } from './pdf/ocr.js';
import { pdfTables } from './pdf/tables.js';
import { pdfStructured } from './pdf/structured.js';
import { pdfFromHtml } from './pdf/from-html.js';
import { pdfFromUrl } from './pdf/from-url.js';
import { pdfSearchable } from './pdf/searchable.js';
import { pdfStamp } from './pdf/stamp.js';
import { pdfFormFields } from './pdf/form-fields.js';
import { pdfFormFill } from './pdf/form-fill.js';
import { pdfFlatten } from './pdf/flatten.js';
import { pdfMetadata } from './pdf/metadata.js';
import { pdfSetMetadata } from './pdf/set-metadata.js';
import { pdfFromImages } from './pdf/from-images.js';
import { officePdf } from './office/pdf.js';

const table = [
  imageCompress, imageResize, imageCrop, imageRotate, imageFlip, imageOcr,
  pdfCompress, pdfMerge, pdfMergeCompress, pdfPages, pdfSplit, pdfProtect, pdfUnlock, pdfRedact, pdfSanitize, pdfRender,
  pdfImages, pdfExtract, pdfMarkdown, pdfBlocks, pdfFromMarkdown, pdfOcr, pdfSearchable, pdfTables, pdfStructured,
  pdfFromHtml,
  pdfFromUrl,
  pdfStamp,
  pdfFormFields, pdfFormFill, pdfFlatten, pdfMetadata, pdfSetMetadata,
  pdfFromImages,
  officePdf,
] as const;

export type OperationTable = typeof table;
export type OperationId = OperationTable[number]['id'];
/** The job parameters of one operation, as its plan returns them and its work function takes them. */
export type PlanOf<Id extends OperationId> = Awaited<ReturnType<Extract<OperationTable[number], { id: Id }>['plan']>>;

export const operations: readonly Operation[] = table as unknown as readonly Operation[];

export function operationById(id: string): Operation {
  const op = operations.find((o) => o.id === id);
  if (!op) throw new Error(`unknown operation ${id}`);
  return op;
}

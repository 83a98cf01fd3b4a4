// Declarations several operations share: input kinds, deadlines, the image encoding fields and
// the PDF compression level.
import { MB, type FieldSpec, type InputSpec } from './define.js';

const FILE_BYTES = 50 * MB;

export const IMAGE_INPUT: InputSpec = { kind: 'image', maxBytes: FILE_BYTES, count: { min: 1, max: 1 }, maxTotalBytes: FILE_BYTES };
export const PDF_INPUT: InputSpec = { kind: 'pdf', maxBytes: FILE_BYTES, count: { min: 1, max: 1 }, maxTotalBytes: FILE_BYTES };
export const MERGE_INPUT: InputSpec = { kind: 'pdf', maxBytes: FILE_BYTES, count: { min: 2, max: 20 }, maxTotalBytes: 95 * MB };
/** The model operations send pages drawn by MuPDF (or read by local engines from those drawings). */
export const MODEL_PDF_INPUT: InputSpec = { ...PDF_INPUT, maxPages: 30, pagesReadByMupdf: true };

export const IMAGE_TIMEOUT_MS = 30_000;
export const PDF_TIMEOUT_MS = 120_000;
export const MODEL_TIMEOUT_MS = 240_000;

export const LEVEL = {
  name: 'level', type: 'string', enum: ['lossless', 'balanced', 'max'], default: 'balanced',
  description: 'lossless: restructure and recompress streams only; balanced: images re-encoded at ebook quality; max: smallest file.',
} as const satisfies FieldSpec;
export type CompressionLevel = (typeof LEVEL.enum)[number];

/** Bounds of target_kb (compress to a size): 1 KB to about 1 GB, in KB of 1024 bytes. */
export const TARGET_KB_BOUNDS = { minimum: 1, maximum: 1_000_000 } as const;
export const KB = 1024;

/** What a 422 from an operation that takes target_kb can mean, beside bad input (OpenAPI). */
export const TARGET_UNPROCESSABLE = 'Unsupported or corrupt input, or an invalid field; or TARGET_UNREACHABLE after the work: target_kb could not be reached, the message names the smallest size reached, and nothing is charged.';

export const TEXT_SCHEMA = {
  type: 'object', required: ['text'], additionalProperties: false,
  properties: { text: { type: 'string', description: 'The recognised text, pages separated by form feeds (U+000C) for PDFs.' } },
};

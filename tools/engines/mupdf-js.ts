// MuPDF 1.28 (the npm `mupdf` package, WebAssembly) for redaction, sanitizing, stamps, forms, metadata
// and images to PDF. It runs in a child process of its own (./mupdf-js-process.ts), started like any
// other engine: the job's deadline kills it, and the WebAssembly heap it grows on a large document
// is returned to the system when it exits instead of staying with a pool thread. Debian's MuPDF
// 1.21 is not used for this: when a redaction removes a whole text object it moves the next line
// off the page.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTool } from '../process/run-tool.js';
import { fail } from '../../core/errors.js';
import { asToolError, damaged } from '../process/tool-errors.js';
import type { Numbering, StampPosition } from './stamp-text.js';

/** A rectangle on one page, in PDF points from the page's top-left corner as it is displayed. */
export interface RedactionArea {
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface RedactionRequest {
  /** Literal strings, matched case-sensitively; any run of white space matches any other. */
  text: string[];
  /** Patterns for V8's linear-time engine (the `l` flag): checked before payment. */
  regex: string[];
  areas: RedactionArea[];
  /** Embedded files: searched and redacted where they hold text, the others removed ("redact"); or all removed ("remove"). */
  attachments: AttachmentMode;
}

export const ATTACHMENT_MODES = ['redact', 'remove'] as const;
export type AttachmentMode = typeof ATTACHMENT_MODES[number];

export interface RedactionReport {
  /** Redacted areas (matches and given areas) over the whole document. */
  total: number;
  /** Redacted areas per page, page 1 first: one number for every page. */
  pages: number[];
  /** Strings outside the pages' content (metadata, outline, annotations, form values) that held a match and were cut. */
  elsewhere: number;
  /** Embedded files: matches cut from their text (within embedded PDFs: everything their own report counts), and files removed whole. */
  attachments: { redacted: number; removed: number };
}

export interface SanitizeRequest {
  /** Keep URI actions (web links); false removes them too. */
  keepLinks: boolean;
}

/** What sanitizing removed, by kind; kinds it did not find are absent. */
export type RemovedCounts = Partial<Record<RemovedKind, number>>;

export const REMOVED_KINDS = [
  'javascript', 'open_action', 'additional_actions', 'launch', 'import_data', 'submit_form', 'remote_goto',
  'other_actions', 'uri', 'embedded_files', 'file_attachments', 'xfa', 'info', 'xmp',
] as const;
export type RemovedKind = typeof REMOVED_KINDS[number];

/** A stamp: text (with {n} and {total}) or an image, drawn on the chosen pages. */
export interface StampRequest {
  /** The text's template; absent when the stamp is an image. */
  text?: string;
  numbering: Numbering;
  /**
   * The image (a PNG or JPEG file in the job's directory), its EXIF orientation, its resolution
   * (pixels per inch, as the file states it, else 96), and its width on the page in points when given.
   */
  image?: { file: string; orientation: number; dpi: number; width?: number };
  position: StampPosition;
  /** Points. */
  fontSize: number;
  /** #rrggbb. */
  color: string;
  opacity: number;
  /** Degrees, counter-clockwise, about the stamp's centre. */
  rotation: number;
  layer: 'over' | 'under';
  /** Page numbers from 1, each once, in order; every page when absent. */
  pages?: number[];
}

/** The page sizes /v1/pdf/from-images makes: each image's own size (plus margins), or a paper size. */
export const IMAGE_PAGE_SIZES = ['fit', 'a4', 'letter'] as const;
export type ImagePageSize = typeof IMAGE_PAGE_SIZES[number];
/** The largest page side readers open (Acrobat's 200 inches): a larger fitted page is made smaller, aspect kept. */
export const MAX_PAGE_POINTS = 14_400;

/** Images to PDF pages, one page per image in order. */
export interface ImagesRequest {
  /**
   * Each image (a JPEG, kept as it is, or a PNG, in the job's directory), its EXIF orientation (the
   * page shows it upright), and its resolution (pixels per inch, as the file states it, else 96).
   */
  images: Array<{ file: string; orientation: number; dpi: number }>;
  pageSize: ImagePageSize;
  /** Millimetres of white on every side. */
  marginMm: number;
}

/** The kinds of form field /v1/pdf/form-fields reports, as PDF's field types and flags make them. */
export const FORM_FIELD_TYPES = ['text', 'checkbox', 'radio', 'choice', 'signature', 'button'] as const;
export type FormFieldType = typeof FORM_FIELD_TYPES[number];

/** Where one widget of a field is drawn: `rect` is [x, y, width, height] in points from the top-left of the page as displayed. */
export interface FieldWidget {
  page: number;
  rect: [number, number, number, number];
  /** A radio button's option (its on state). */
  option?: string;
}

/** One terminal form field, as /v1/pdf/form-fields answers it. */
export interface FormField {
  /** The fully qualified name (parent names joined with dots): the key form-fill takes. */
  name: string;
  type: FormFieldType;
  /**
   * text and choice: the string (null when empty); checkbox: true or false; radio: the chosen option
   * or null; signature: whether it is signed; button: null.
   */
  value: string | boolean | null;
  /** choice: its options (export values); radio: its options; checkbox: its on state; [] otherwise. */
  options: string[];
  /** The first widget's page (1-based) and rectangle. */
  page: number;
  rect: [number, number, number, number];
  readOnly: boolean;
  /** text: the most characters it takes (/MaxLen); null when unbounded or not text. */
  maxLength: number | null;
  /** choice: whether a value outside the options is taken (an editable combo box). */
  editable: boolean;
  /** choice: the options as displayed, when they differ from the export values (form-fill takes either). */
  labels?: string[];
  /** Every widget of the field, when it has more than one (radio groups). */
  widgets?: FieldWidget[];
}

export interface FormReading {
  /** The form holds XFA (an XML form that readers draw themselves): refused. */
  xfa: boolean;
  fields: FormField[];
}

/** A value to fill: a string for text, radio and choice fields, true or false for checkboxes. */
export type FieldValue = string | boolean;

export interface FillRequest {
  values: Record<string, FieldValue>;
  flatten: boolean;
}

/** The Info keys /v1/pdf/set-metadata sets, as its fields name them. */
export const METADATA_KEYS = ['title', 'author', 'subject', 'keywords', 'creator'] as const;
export type MetadataKey = typeof METADATA_KEYS[number];
/** undefined keeps the value; '' removes it. */
export type MetadataRequest = Partial<Record<MetadataKey, string>>;

export interface PdfMetadata {
  title: string | null;
  author: string | null;
  subject: string | null;
  keywords: string | null;
  creator: string | null;
  producer: string | null;
  /** ISO 8601, from the Info dictionary's PDF date strings (with their time zone when they give one). */
  created: string | null;
  modified: string | null;
  pageCount: number;
  /** "1.7", "2.0": the header's version, or the catalog's /Version when later. */
  version: string;
  encrypted: boolean;
  /** The PDF/A part and conformance the XMP packet claims ("2B"), or null. */
  pdfa: string | null;
  /** The XMP packet as text, or null. */
  xmp: string | null;
}

/** What the child is asked to do; `deadline` (epoch milliseconds) bounds what it runs itself. */
export type MupdfJsCommand = (
  | { command: 'redact'; request: RedactionRequest } | { command: 'sanitize'; request: SanitizeRequest }
  | { command: 'stamp'; request: StampRequest } | { command: 'from-images'; request: ImagesRequest }
  | { command: 'form-fields' } | { command: 'form-fill'; request: FillRequest } | { command: 'flatten' }
  | { command: 'metadata' } | { command: 'set-metadata'; request: MetadataRequest; now: string }
) & { deadline: number };

/** Commands that write no file, only their report. */
const READ_ONLY_COMMANDS = new Set<MupdfJsCommand['command']>(['form-fields', 'metadata']);
/** Commands that make a new document rather than read one. */
const NEW_DOCUMENT_COMMANDS = new Set<MupdfJsCommand['command']>(['from-images']);

/** The engine's entry, compiled beside this module. */
export const MUPDF_JS_PROCESS = fileURLToPath(new URL('./mupdf-js-process.js', import.meta.url));

/**
 * The flag that gives the engine V8's linear-time regular expressions (`new RegExp(p, 'l')`),
 * so that no pattern can backtrack for long; the pre-payment check compiles patterns with it too.
 */
export const LINEAR_REGEXP_FLAG = '--enable-experimental-regexp-engine';

/**
 * The child's exit statuses: done (the report on stdout); a reader failed; MuPDF could not read or
 * write the file; a match either reader extracts was still there after the last pass.
 */
export const MUPDF_JS_EXIT = { ok: 0, failed: 1, damaged: 3, matchesRemain: 4 } as const;

/**
 * Runs one command on `input`, writing `output`, and returns its report. The request (the strings
 * to redact among it) goes in a 0600 file in the job's directory, never on a command line.
 */
async function runMupdfJs(command: MupdfJsRequest, input: string, output: string, options: RunOptions): Promise<unknown> {
  const requestFile = path.join(options.cwd, 'mupdf-request.json');
  writeFileSync(requestFile, JSON.stringify({ ...command, deadline: Date.now() + options.timeoutMs }), { mode: 0o600, flag: 'wx' });
  const what = COMMAND_NAMES[command.command];
  const args = [LINEAR_REGEXP_FLAG, MUPDF_JS_PROCESS, requestFile, input, output];
  const result = await runTool(process.execPath, args, { ...options, maxStdout: 1024 * 1024 })
    .catch((err: unknown) => { throw asToolError(err, what); });
  if (result.exitCode === MUPDF_JS_EXIT.damaged) damaged('MuPDF could not read or rewrite it (the file is damaged)');
  if (result.exitCode === MUPDF_JS_EXIT.matchesRemain) {
    fail('NO_CONTENT', 'the redaction could not remove every match: text that pdftotext or MuPDF extracts still held one after three passes, '
    + 'so no file is returned; nothing was charged');
  }
  if (result.exitCode !== MUPDF_JS_EXIT.ok) throw asToolError(new Error(`${what} exited ${result.exitCode}`), what);
  return JSON.parse(Buffer.from(result.stdout).toString('utf8')) as unknown;
}

/** Where a command runs (the job's directory) and for how long at most. */
interface RunOptions { cwd: string; timeoutMs: number }

/** A command as a caller gives it: the deadline is added from the timeout. */
export type MupdfJsRequest = MupdfJsCommand extends infer C ? C extends unknown ? Omit<C, 'deadline'> : never : never;

const COMMAND_NAMES: Record<MupdfJsCommand['command'], string> = {
  redact: 'redaction', sanitize: 'sanitizing', stamp: 'stamping', 'from-images': 'making a PDF of the images',
  'form-fields': 'reading the form', 'form-fill': 'filling the form',
  flatten: 'flattening', metadata: 'reading the metadata', 'set-metadata': 'writing the metadata',
};

export async function redactPdf(input: string, output: string, request: RedactionRequest, options: RunOptions): Promise<RedactionReport> {
  return await runMupdfJs({ command: 'redact', request }, input, output, options) as RedactionReport;
}

export async function sanitizePdf(input: string, output: string, request: SanitizeRequest, options: RunOptions): Promise<RemovedCounts> {
  const report = await runMupdfJs({ command: 'sanitize', request }, input, output, options) as { removed: RemovedCounts };
  return report.removed;
}

export async function stampPdf(input: string, output: string, request: StampRequest, options: RunOptions): Promise<void> {
  await runMupdfJs({ command: 'stamp', request }, input, output, options);
}
/** Writes `output`, a PDF of the images; the command reads no PDF. */
export async function imagesToPdf(output: string, request: ImagesRequest, options: RunOptions): Promise<void> {
  await runMupdfJs({ command: 'from-images', request }, NO_INPUT, output, options);
}

/** The form's fields, read before payment (form-fill checks its values against them) and as form-fields' answer. */
export async function readForm(input: string, options: RunOptions): Promise<FormReading> {
  return await runMupdfJs({ command: 'form-fields' }, input, READ_ONLY_OUTPUT, options) as FormReading;
}

export async function fillForm(input: string, output: string, request: FillRequest, options: RunOptions): Promise<void> {
  await runMupdfJs({ command: 'form-fill', request }, input, output, options);
}

export async function flattenPdf(input: string, output: string, options: RunOptions): Promise<void> {
  await runMupdfJs({ command: 'flatten' }, input, output, options);
}

export async function readMetadata(input: string, options: RunOptions): Promise<PdfMetadata> {
  return await runMupdfJs({ command: 'metadata' }, input, READ_ONLY_OUTPUT, options) as PdfMetadata;
}

/** `now` is the modification date written to Info and XMP. */
export async function writeMetadata(
  input: string, output: string, request: MetadataRequest, now: Date, options: RunOptions,
): Promise<void> {
  await runMupdfJs({ command: 'set-metadata', request, now: now.toISOString() }, input, output, options);
}

/** The output argument of a command that writes no file. */
const READ_ONLY_OUTPUT = '-';
/** The input argument of a command that makes a new document. */
const NO_INPUT = '-';
export const isReadOnlyCommand = (command: MupdfJsCommand['command']): boolean => READ_ONLY_COMMANDS.has(command);
export const makesNewDocument = (command: MupdfJsCommand['command']): boolean => NEW_DOCUMENT_COMMANDS.has(command);

// MuPDF 1.28 (the npm `mupdf` package, WebAssembly) for redaction, sanitizing and stamps. It runs in a
// child process of its own (./mupdf-js-process.ts), started like any other tool: the job's deadline
// kills it, and the WebAssembly heap it grows on a large document is returned to the system
// when it exits instead of staying with a pool thread. Debian's MuPDF 1.21 is not used for
// this: when a redaction removes a whole text object it moves the next line off the page.
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

/** What the child is asked to do; `deadline` (epoch milliseconds) bounds the tools it runs itself. */
type Command = { command: 'redact'; request: RedactionRequest } | { command: 'sanitize'; request: SanitizeRequest }
  | { command: 'stamp'; request: StampRequest };
export type EngineCommand = Command & { deadline: number };

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
async function runMupdfJs(
  command: Omit<EngineCommand, 'deadline'>, input: string, output: string, options: { cwd: string; timeoutMs: number },
): Promise<unknown> {
  const requestFile = path.join(options.cwd, 'mupdf-request.json');
  writeFileSync(requestFile, JSON.stringify({ ...command, deadline: Date.now() + options.timeoutMs }), { mode: 0o600, flag: 'wx' });
  const what = { redact: 'redaction', sanitize: 'sanitizing', stamp: 'stamping' }[command.command];
  const result = await runTool(process.execPath, [LINEAR_REGEXP_FLAG, MUPDF_JS_PROCESS, requestFile, input, output], { ...options, maxStdout: 1024 * 1024 })
    .catch((err: unknown) => { throw asToolError(err, what); });
  if (result.exitCode === MUPDF_JS_EXIT.damaged) damaged('MuPDF could not read or rewrite it (the file is damaged)');
  if (result.exitCode === MUPDF_JS_EXIT.matchesRemain) {
    fail('NO_CONTENT', 'the redaction could not remove every match: text that pdftotext or MuPDF extracts still held one after three passes, '
    + 'so no file is returned; nothing was charged');
  }
  if (result.exitCode !== MUPDF_JS_EXIT.ok) throw asToolError(new Error(`${what} exited ${result.exitCode}`), what);
  return JSON.parse(Buffer.from(result.stdout).toString('utf8')) as unknown;
}

export async function redactPdf(input: string, output: string, request: RedactionRequest, options: { cwd: string; timeoutMs: number }): Promise<RedactionReport> {
  return await runMupdfJs({ command: 'redact', request }, input, output, options) as RedactionReport;
}

export async function sanitizePdf(input: string, output: string, request: SanitizeRequest, options: { cwd: string; timeoutMs: number }): Promise<RemovedCounts> {
  return (await runMupdfJs({ command: 'sanitize', request }, input, output, options) as { removed: RemovedCounts }).removed;
}

export async function stampPdf(input: string, output: string, request: StampRequest, options: { cwd: string; timeoutMs: number }): Promise<void> {
  await runMupdfJs({ command: 'stamp', request }, input, output, options);
}

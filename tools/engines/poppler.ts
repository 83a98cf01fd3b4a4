// Poppler's command-line tools: pdftotext (the text layer in reading order, for extract) and
// pdfimages (which pages draw images, for extract's scanned-or-not verdict). Their command lines
// are built here; a run that did not complete maps to the catalog through asToolError.
import { runTool, type RunOptions, type RunResult } from '../process/run-tool.js';
import { asToolError } from '../process/tool-errors.js';
import { declareEngine } from './declare.js';

export const POPPLER = declareEngine({ name: 'Poppler', commands: ['pdftotext', 'pdfimages'], package: 'poppler-utils' });

/** Both tools exit 0 on success; 1 when the file cannot be opened, 3 on a permissions error, 99 otherwise. */
export const POPPLER_EXIT = { ok: 0 } as const;

async function runPoppler(command: typeof POPPLER.commands[number], args: readonly string[], options: RunOptions): Promise<RunResult> {
  try {
    return await runTool(command, args, options);
  } catch (err) {
    throw asToolError(err, command);
  }
}

/** The text layer, every page ended by a form feed; undefined when pdftotext could not read it. */
export async function pdfText(file: string, options: RunOptions): Promise<string | undefined> {
  // -enc UTF-8: whatever the locale; -q: no messages on stderr; "-": the text on stdout.
  const result = await runPoppler('pdftotext', ['-enc', 'UTF-8', '-q', file, '-'], { maxStdout: 256 * 1024 * 1024, ...options });
  return result.exitCode === POPPLER_EXIT.ok ? Buffer.from(result.stdout).toString('utf8') : undefined;
}

/** `pdfimages -list`: one line per image drawn (page, number, type, ...); no image is decoded. */
export async function pdfImageList(file: string, options: RunOptions): Promise<string> {
  // -q: no messages on stderr.
  const result = await runPoppler('pdfimages', ['-list', '-q', file], { maxStdout: 64 * 1024 * 1024, ...options });
  return Buffer.from(result.stdout).toString('utf8');
}

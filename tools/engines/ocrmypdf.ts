// OCRmyPDF: adds an invisible text layer, recognised by tesseract, over the pages of a PDF that
// have no text, and leaves everything else as it was. Its command line, the language packs it may
// be asked for and what its exit statuses mean to a client are here.
import { fail } from '../../core/errors.js';
import { runTool, type RunResult } from '../process/run-tool.js';
import { toolFailure } from '../process/tool-errors.js';
import { declareEngine } from './declare.js';

/** OCRmyPDF is Python; it runs the tesseract and Ghostscript of their own engines (./tesseract.ts, ./gs.ts). */
export const OCRMYPDF = declareEngine({ name: 'OCRmyPDF', commands: ['ocrmypdf'], package: 'ocrmypdf' });

/**
 * The tesseract language packs the service installs (system-packages.txt lists tesseract-ocr-<code>
 * for each): English and the five most used Western European languages, 1 to 4 MB each.
 */
export const OCR_LANGUAGE_PACKS = {
  eng: 'English', deu: 'German', fra: 'French', spa: 'Spanish', ita: 'Italian', por: 'Portuguese',
} as const;
export type OcrLanguage = keyof typeof OCR_LANGUAGE_PACKS;

/** tesseract reads a page once per language: more than three makes a page several times slower for little gain. */
export const MAX_OCR_LANGUAGES = 3;

/**
 * The resolution OCRmyPDF rasterises a page at when it holds vector drawing (its VECTOR_PAGE_DPI);
 * a scanned page is rasterised at its image's own resolution.
 */
export const OCRMYPDF_VECTOR_DPI = 400;

/** OCRmyPDF's exit statuses (ocrmypdf.exceptions.ExitCode). */
export const OCRMYPDF_EXIT = {
  ok: 0, badArgs: 1, inputFile: 2, missingDependency: 3, invalidOutputPdf: 4, fileAccess: 5,
  alreadyDoneOcr: 6, childProcess: 7, encryptedPdf: 8, invalidConfig: 9, otherError: 15,
} as const;

export interface SearchableRun {
  input: string;
  output: string;
  languages: readonly OcrLanguage[];
  /** The scratch directory inside the job directory: OCRmyPDF's temporary files (TMPDIR) and HOME. */
  cwd: string;
  timeoutMs: number;
}

/** The command line, each option for a reason. */
export function ocrmypdfArgs(run: Pick<SearchableRun, 'input' | 'output' | 'languages'>): string[] {
  return [
    // Errors only: no progress bar, no per-page chatter on stderr.
    '--quiet',
    // Pages with text are copied as they are (neither rasterised nor read again), and the
    // document is not refused for having them (PriorOcrFoundError).
    '--skip-text',
    // A plain PDF: PDF/A (the default) passes the whole file through Ghostscript, which re-encodes
    // every image. With this, the text layer is grafted onto the original page objects.
    '--output-type', 'pdf',
    // No optimisation: it would recompress JPEGs and quantise PNGs.
    '--optimize', '0',
    // One page at a time: the pool runs jobs side by side, one core each.
    '--jobs', '1',
    '--language', run.languages.join('+'),
    run.input, run.output,
  ];
}

/** What one failed OCRmyPDF run means to the client; never its stderr, which may quote the file. */
function explain(result: RunResult): never {
  const { exitCode, stderr } = result;
  if (exitCode === OCRMYPDF_EXIT.encryptedPdf) {
    fail('ENCRYPTED_PDF', 'the PDF is encrypted; OCRmyPDF does not add text to encrypted PDFs: remove the encryption first; nothing was charged', { field: 'file' });
  }
  if (exitCode === OCRMYPDF_EXIT.inputFile && /dynamic XFA/i.test(stderr)) {
    fail('UNSUPPORTED_TYPE', 'the PDF is a dynamic XFA form, whose pages only Adobe Reader draws: there is nothing on them to recognise; nothing was charged', { field: 'file' });
  }
  if (/Failed loading language|Error opening data file/i.test(stderr)) {
    fail('UNAVAILABLE', 'a requested language pack is not installed on this deployment; nothing was charged');
  }
  if (exitCode === OCRMYPDF_EXIT.missingDependency || exitCode === OCRMYPDF_EXIT.invalidConfig || exitCode === OCRMYPDF_EXIT.badArgs) {
    fail('UNAVAILABLE', 'the text recognition engine is not fully installed on this deployment; nothing was charged');
  }
  // Unreadable to pikepdf, a page Ghostscript cannot draw, an image too large to read (a
  // decompression bomb), an output that does not validate: the input passed the checks before
  // payment, but its pages could not be processed.
  fail('CORRUPT_INPUT', 'the PDF cannot be processed: its pages could not be rendered for text recognition; nothing was charged', { field: 'file' });
}

/** Runs OCRmyPDF on one PDF, killed at the deadline; the output file is written on success. */
export async function runOcrmypdf(run: SearchableRun): Promise<void> {
  let result: RunResult;
  try {
    result = await runTool(OCRMYPDF.commands[0], ocrmypdfArgs(run), {
      cwd: run.cwd,
      timeoutMs: run.timeoutMs,
      // One tesseract thread: OpenMP's threads fought over the shared cores (see the tesseract engine).
      env: { OMP_THREAD_LIMIT: '1' },
      maxStdout: 64 * 1024,
    });
  } catch (err) {
    toolFailure(err, 'text recognition');
  }
  if (result.exitCode !== OCRMYPDF_EXIT.ok) explain(result);
}

// tesseract, the local OCR engine: nothing leaves the server. One tesseract run per image,
// single-threaded (OpenMP threads made it 3 to 4 times slower on 2 shared cores), killed at the
// job's deadline. Its command line, its languages setting and what its failures mean are here.
import { fail } from '../../core/errors.js';
import { timeLeft, type Job } from '../../core/job.js';
import { runTool } from '../process/run-tool.js';
import { toolFailure } from '../process/tool-errors.js';
import { declareEngine } from './declare.js';

/** The English model is in the package list beside the engine (tesseract-ocr-eng); more languages are the deployment's to add. */
export const TESSERACT = declareEngine({ name: 'tesseract', commands: ['tesseract'], package: 'tesseract-ocr' });

/** tesseract's exit statuses: 0 when it read the image; anything else when it could not (the message on stderr says why). */
export const TESSERACT_EXIT = { ok: 0 } as const;

export const DEFAULT_OCR_LANGUAGES = 'eng';

/** 'eng', 'eng+deu', 'chi_sim': tesseract's own syntax; anything else is a configuration mistake. */
export function ocrLanguages(configured: string | undefined): string {
  const languages = (configured ?? '').trim() || DEFAULT_OCR_LANGUAGES;
  if (!/^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$/.test(languages)) {
    fail('UNAVAILABLE', 'the local OCR engine is misconfigured (OCR_LANGUAGES)');
  }
  return languages;
}

export interface TesseractOptions {
  /** The resolution the image was rendered at, when known (PDF pages). */
  dpi?: number;
  signal?: AbortSignal;
}

async function runTesseract(input: Job, image: Uint8Array, options: TesseractOptions, output: string[]): Promise<string> {
  const args = [
    // The image on stdin, the text on stdout: nothing is written to disk.
    'stdin', 'stdout',
    '-l', ocrLanguages(input.settings.ocrLanguages),
    // The resolution when known: tesseract otherwise guesses it from the image, badly for rendered pages.
    ...(options.dpi ? ['--dpi', String(options.dpi)] : []),
    // Output configs (hocr): boxes and sizes besides the text.
    ...output,
  ];
  let result;
  try {
    result = await runTool(TESSERACT.commands[0], args, {
      input: image,
      timeoutMs: timeLeft(input),
      cwd: input.jobDir,
      // One thread: the pool gives the parallelism, and OpenMP's threads fought over the cores.
      env: { OMP_THREAD_LIMIT: '1' },
      signal: options.signal,
      maxStdout: 16 * 1024 * 1024,
    });
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    toolFailure(err, 'text recognition');
  }
  if (result.exitCode !== TESSERACT_EXIT.ok) {
    // A missing traineddata file is the deployment's fault, not the client's.
    if (/Failed loading language|Error opening data file/i.test(result.stderr)) {
      fail('UNAVAILABLE', 'the local OCR engine lacks a configured language (OCR_LANGUAGES)');
    }
    fail('CORRUPT_INPUT', 'the image cannot be read by the OCR engine');
  }
  return Buffer.from(result.stdout).toString('utf8');
}

export async function tesseractText(input: Job, image: Uint8Array, options: TesseractOptions = {}): Promise<string> {
  // tesseract ends every page with a form feed; pages are joined by the caller.
  return (await runTesseract(input, image, options, [])).replace(/[\s\f]+$/u, '');
}

/** The page as hOCR: lines with their boxes and tesseract's estimate of their type size (x_size). */
export function tesseractHocr(input: Job, image: Uint8Array, options: TesseractOptions = {}): Promise<string> {
  return runTesseract(input, image, options, ['hocr']);
}

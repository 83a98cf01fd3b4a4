// WeasyPrint: typesets HTML as PDF (from-markdown). It runs as python3 with ./weasyprint/render.py,
// which gives WeasyPrint a URL fetcher that refuses everything (the `weasyprint` command cannot
// be given one), allows only the DejaVu fonts, and caps its own address space. build-assets
// copies the script beside the compiled module, so it is found in sources, dist/ and the image.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fail } from '../../core/errors.js';
import { runTool } from '../process/run-tool.js';
import { declareEngine } from './declare.js';

/** python3 runs the script; the `weasyprint` command is not run, but its presence shows the Python package is installed. */
export const WEASYPRINT = declareEngine({ name: 'WeasyPrint', commands: ['python3', 'weasyprint'], package: 'weasyprint' });

/** render.py's exit statuses: 0 with the PDF on stdout; 3 when it reached its address-space cap; anything else a failure. */
export const WEASYPRINT_EXIT = { ok: 0, outOfMemory: 3 } as const;

/** The script, beside this module in sources and in dist/ (copied there by bin/build-assets.ts). */
export function rendererScript(): string {
  const file = fileURLToPath(new URL('./weasyprint/render.py', import.meta.url));
  if (!existsSync(file)) throw new Error(`weasyprint/render.py is missing beside ${fileURLToPath(import.meta.url)}: run the build (bin/build-assets.ts copies it)`);
  return file;
}

/**
 * HTML to PDF with the fetch-refusing WeasyPrint script. workDir must be private: the script
 * writes its fontconfig file there.
 */
export async function renderHtmlToPdf(html: string, options: { workDir: string; timeoutMs: number }): Promise<Uint8Array> {
  // -I: isolated mode, so no PYTHON* variable, user site-packages or script directory on sys.path can change what runs.
  const result = await runTool(WEASYPRINT.commands[0], ['-I', rendererScript()], {
    input: new TextEncoder().encode(html),
    cwd: options.workDir,
    timeoutMs: options.timeoutMs,
  });
  if (result.exitCode === WEASYPRINT_EXIT.outOfMemory) {
    fail('LIMIT_EXCEEDED', 'the document needs more memory to typeset than one job may use (1.5 GiB); split it, or its largest tables, into smaller documents');
  }
  const pdf = result.stdout;
  const isPdf = pdf.length > 4 && pdf[0] === 0x25 && pdf[1] === 0x50 && pdf[2] === 0x44 && pdf[3] === 0x46;
  if (result.exitCode !== WEASYPRINT_EXIT.ok || !isPdf) {
    throw new Error(`weasyprint/render.py exited with ${result.exitCode} and ${pdf.length} bytes of output`);
  }
  return pdf;
}

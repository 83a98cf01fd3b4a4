// /v1/pdf/from-markdown: Markdown -> HTML (markdown-html.ts: markdown-it, raw HTML escaped, images
// dropped, only http/https/mailto links, long runs given break opportunities) -> PDF (WeasyPrint
// through workers/pdf/weasy_render.py, which refuses every URL fetch itself, so the HTML step is
// not the only thing keeping the network and the file system out of reach).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from '../../core/errors.js';
import { decodeMarkdown } from '../../checks/markdown.js';
import { timeLeft, type JobOutput, type WorkFunction } from '../../core/job.js';
import { runTool } from '../../tools/process/run-tool.js';
import { renderMarkdownHtml } from './markdown-html.js';

export { renderMarkdownHtml };

const RENDERER_SCRIPT = 'workers/pdf/weasy_render.py';
/** weasy_render.py's exit status when it reached its address-space cap. */
const RENDERER_OUT_OF_MEMORY = 3;

let rendererScript: string | undefined;

// The script is not compiled, so it is not under dist/: look for it upwards from this module,
// which runs as workers/pdf/ (sources) or dist/workers/pdf/ (compiled).
function findRendererScript(): string {
  if (rendererScript) return rendererScript;
  let directory = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(directory, RENDERER_SCRIPT);
    if (existsSync(candidate)) return (rendererScript = candidate);
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error(`${RENDERER_SCRIPT} not found above ${path.dirname(fileURLToPath(import.meta.url))}`);
    directory = parent;
  }
}

/**
 * HTML to PDF with the fetch-refusing WeasyPrint script. workDir must be private: the script
 * writes its fontconfig file there.
 */
export async function renderHtmlToPdf(html: string, options: { workDir: string; timeoutMs: number }): Promise<Uint8Array> {
  const result = await runTool('python3', ['-I', findRendererScript()], {
    input: new TextEncoder().encode(html),
    cwd: options.workDir,
    timeoutMs: options.timeoutMs,
  });
  if (result.exitCode === RENDERER_OUT_OF_MEMORY) {
    fail('LIMIT_EXCEEDED', 'the document needs more memory to typeset than one job may use (1.5 GiB); split it, or its largest tables, into smaller documents');
  }
  const pdf = result.stdout;
  const isPdf = pdf.length > 4 && pdf[0] === 0x25 && pdf[1] === 0x50 && pdf[2] === 0x44 && pdf[3] === 0x46;
  if (result.exitCode !== 0 || !isPdf) {
    throw new Error(`weasy_render.py exited with ${result.exitCode} and ${pdf.length} bytes of output`);
  }
  return pdf;
}

export const fromMarkdown: WorkFunction<{ title?: string }> = async (input): Promise<JobOutput> => {
  const file = input.files[0];
  if (!file) throw new Error('from-markdown received no file');
  const markdown = decodeMarkdown(file.bytes);
  const { title } = input.params;
  const body = await renderHtmlToPdf(renderMarkdownHtml(markdown, title), { workDir: input.jobDir, timeoutMs: timeLeft(input) });
  return { body, mediaType: 'application/pdf' };
};

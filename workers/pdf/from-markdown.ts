// /v1/pdf/from-markdown: Markdown -> HTML (markdown-html.ts: markdown-it, raw HTML escaped, images
// dropped, only http/https/mailto links, long runs given break opportunities) -> PDF
// (tools/engines/weasyprint.ts, whose WeasyPrint script refuses every URL fetch
// itself, so the HTML step is not the only thing keeping the network and the file system out of reach).
import { decodeMarkdown } from '../../checks/markdown.js';
import { timeLeft, type JobOutput, type WorkFunction } from '../../core/job.js';
import { renderHtmlToPdf } from '../../tools/engines/weasyprint.js';
import { renderMarkdownHtml } from './markdown-html.js';

export { renderHtmlToPdf, renderMarkdownHtml };

export const fromMarkdown: WorkFunction<{ title?: string }> = async (input): Promise<JobOutput> => {
  const file = input.files[0];
  if (!file) throw new Error('from-markdown received no file');
  const markdown = decodeMarkdown(file.bytes);
  const { title } = input.params;
  const body = await renderHtmlToPdf(renderMarkdownHtml(markdown, title), { workDir: input.jobDir, timeoutMs: timeLeft(input) });
  return { body, mediaType: 'application/pdf' };
};

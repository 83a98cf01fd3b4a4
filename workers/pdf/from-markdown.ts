// /v1/pdf/from-markdown: Markdown -> HTML (markdown-it, raw HTML escaped, images dropped, only
// http/https/mailto links) -> PDF (WeasyPrint through workers/pdf/weasy_render.py, which refuses
// every URL fetch itself, so the HTML step is not the only thing keeping the network and the
// file system out of reach).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import MarkdownIt from 'markdown-it';
import type { StateCore, Token } from 'markdown-it';
import { fail } from '../../core/errors.js';
import { decodeMarkdown } from '../../checks/markdown.js';
import { timeLeft, type JobOutput, type WorkFunction } from '../../core/job.js';
import { runTool } from '../../tools/runner.js';

const RENDERER_SCRIPT = 'workers/pdf/weasy_render.py';
/** weasy_render.py's exit status when it reached its address-space cap. */
const RENDERER_OUT_OF_MEMORY = 3;

// Fonts are the DejaVu faces weasy_render.py allows; nothing here names another family.
const PRINT_STYLESHEET = `
@page {
  size: A4;
  margin: 20mm 18mm 22mm 18mm;
  @bottom-center {
    content: counter(page) " / " counter(pages);
    font-family: "DejaVu Sans"; font-size: 8.5pt; color: #555;
  }
}
html { font-family: "DejaVu Sans"; font-size: 10pt; line-height: 1.45; color: #111; }
body { margin: 0; overflow-wrap: anywhere; }
h1, h2, h3, h4, h5, h6 { line-height: 1.2; margin: 1.1em 0 0.45em; break-after: avoid; }
h1 { font-size: 20pt; } h2 { font-size: 16pt; } h3 { font-size: 13pt; }
h4 { font-size: 11pt; } h5 { font-size: 10pt; } h6 { font-size: 10pt; color: #444; }
p { margin: 0 0 0.6em; }
ul, ol { margin: 0 0 0.6em; padding-left: 1.6em; }
li > ul, li > ol { margin-bottom: 0; }
code, pre { font-family: "DejaVu Sans Mono"; font-size: 8.5pt; }
code { background: #f2f2f2; padding: 0 0.15em; }
pre {
  background: #f5f5f5; border: 0.5pt solid #d8d8d8; padding: 5pt 7pt; margin: 0 0 0.8em;
  white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.35;
}
pre code { background: none; padding: 0; }
blockquote { margin: 0 0 0.8em; padding: 0.1em 0 0.1em 10pt; border-left: 2.5pt solid #c8c8c8; color: #333; }
table { border-collapse: collapse; margin: 0 0 0.8em; width: 100%; table-layout: fixed; }
thead { display: table-header-group; }
tr { break-inside: avoid; }
th, td { border: 0.5pt solid #999; padding: 2.5pt 5pt; vertical-align: top; text-align: left; overflow-wrap: anywhere; }
th { background: #ececec; }
a { color: #0645ad; }
hr { border: 0; border-top: 0.5pt solid #999; margin: 1em 0; }
.skipped-image { color: #666; font-style: italic; }
`;

const ALLOWED_LINK = /^(?:https?:\/\/|mailto:)/i;

// Links can't nest in CommonMark, so a link_close always belongs to the last link_open.
function unwrapDisallowedLinks(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const kept: Token[] = [];
    let unwrapping = false;
    for (const token of block.children) {
      if (token.type === 'link_open' && !ALLOWED_LINK.test(token.attrGet('href') ?? '')) { unwrapping = true; continue; }
      if (token.type === 'link_close' && unwrapping) { unwrapping = false; continue; }
      kept.push(token);
    }
    block.children = kept;
  }
}

// WeasyPrint's automatic table layout measures every cell again on each page: a 200-row table
// took 13 s. Fixed layout takes its widths from <col> elements, which are sized here from the
// longest cell of each column (clamped, so one long cell cannot squeeze the others to nothing).
const MIN_COLUMN_WEIGHT = 4;
const MAX_COLUMN_WEIGHT = 40;

function sizeTableColumns(state: StateCore): void {
  let table: Token | undefined;
  let weights: number[] = [];
  let column = 0;
  for (const token of state.tokens) {
    if (token.type === 'table_open') { table = token; weights = []; }
    else if (token.type === 'tr_open') column = 0;
    else if (token.type === 'th_close' || token.type === 'td_close') column += 1;
    else if (token.type === 'inline' && table) {
      const length = Math.min(Math.max([...token.content].length, MIN_COLUMN_WEIGHT), MAX_COLUMN_WEIGHT);
      weights[column] = Math.max(weights[column] ?? MIN_COLUMN_WEIGHT, length);
    } else if (token.type === 'table_close' && table) {
      table.meta = { columnWeights: weights };
      table = undefined;
    }
  }
}

function renderTableOpen(tokens: Token[], index: number): string {
  const weights = (tokens[index]!.meta as { columnWeights?: number[] } | null)?.columnWeights ?? [];
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const columns = weights.map((weight) => `<col style="width: ${((100 * weight) / total).toFixed(2)}%">`).join('');
  return `<table>\n<colgroup>${columns}</colgroup>\n`;
}

function createMarkdownParser(): MarkdownIt {
  // 'default' is CommonMark plus GitHub tables and strikethrough. html: false escapes raw HTML,
  // so it is shown as text; linkify stays off so bare text never becomes a link.
  const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false });
  // Accept every destination while parsing, so a file: or javascript: link still shows its text;
  // unwrapDisallowedLinks then keeps the text and drops the link.
  md.validateLink = () => true;
  md.core.ruler.push('unwrap_disallowed_links', unwrapDisallowedLinks);
  md.core.ruler.push('size_table_columns', sizeTableColumns);
  md.renderer.rules.table_open = renderTableOpen;
  md.renderer.rules.image = (tokens, index, options, env, renderer) => {
    const alt = renderer.renderInlineAsText(tokens[index]!.children ?? [], options, env).trim();
    return alt === '' ? '' : `<span class="skipped-image">[${md.utils.escapeHtml(alt)}]</span>`;
  };
  return md;
}

const markdownParser = createMarkdownParser();

/** The complete HTML document WeasyPrint typesets: print stylesheet inline, title in <head>. */
export function renderMarkdownHtml(markdown: string, title?: string): string {
  const body = markdownParser.render(markdown);
  const titleElement = title !== undefined && title.trim() !== ''
    ? `<title>${markdownParser.utils.escapeHtml(title)}</title>` : '';
  return `<!DOCTYPE html>\n<html><head><meta charset="utf-8">${titleElement}<style>${PRINT_STYLESHEET}</style></head>\n<body>\n${body}</body></html>\n`;
}

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

// Markdown -> the HTML that WeasyPrint typesets for /v1/pdf/from-markdown.
//
// What WeasyPrint 57 makes slow, and what is done about it here (docs/operations/from-markdown.md):
// - A run of characters without a space is laid out again for every line it fills: one 40 KB
//   word took 14 s, and a run that crosses inline elements (`ab**cd**ab**cd**…`) was worse (20 KB
//   past a minute). Every run longer than RUN_LIMIT characters gets an invisible break opportunity
//   (U+200B) after its RUN_LIMIT-th character and every RUN_STEP characters from there.
// - A text longer than fits on a line is laid out whole for each line when its first ~120
//   characters fit on one line (narrow letters such as `i i i …`, combining marks): 80 KB of
//   `i ` took 14 s. Past BOX_LIMIT characters, an empty <wbr> element starts a new text node at
//   the next space or break opportunity.
// - Tabs in code blocks took several times as long as spaces (1 MB of `abc<tab>`: 28 s), and
//   WeasyPrint's text layer garbles the characters around them (`echo<tab>done` copied out as
//   `e<tab>cho don<tab>e`): they are expanded to the spaces they stand for.
// - Everything else costs about the same per element and per line of output (and about 20 KB
//   of memory each): checks/markdown-estimate.ts bounds their number before payment.
import MarkdownIt from 'markdown-it';
import type { StateCore, Token } from 'markdown-it';
import { fail } from '../../core/errors.js';
import { BOX_LIMIT, MARKDOWN_PAGE, RUN_LIMIT, RUN_STEP } from '../../checks/markdown-page.js';

const { marginMm: margin, codePaddingPt: codePadding, cellPaddingPt: cellPadding, ruleWidthPt: rule } = MARKDOWN_PAGE;
// Fonts are the DejaVu faces tools/engines/weasyprint/render.py allows; nothing here names another family.
// The figures the layout estimate reads (page, margins, type sizes, paddings, rules) come from MARKDOWN_PAGE.
export const PRINT_STYLESHEET = `
@page {
  size: ${MARKDOWN_PAGE.size};
  margin: ${margin.top}mm ${margin.side}mm ${margin.bottom}mm ${margin.side}mm;
  @bottom-center {
    content: counter(page) " / " counter(pages);
    font-family: "DejaVu Sans"; font-size: 8.5pt; color: #555;
  }
}
html { font-family: "DejaVu Sans"; font-size: ${MARKDOWN_PAGE.bodyFontPt}pt; line-height: 1.45; color: #111; }
body { margin: 0; overflow-wrap: anywhere; }
h1, h2, h3, h4, h5, h6 { line-height: 1.2; margin: 1.1em 0 0.45em; break-after: avoid; }
h1 { font-size: 20pt; } h2 { font-size: 16pt; } h3 { font-size: 13pt; }
h4 { font-size: 11pt; } h5 { font-size: 10pt; } h6 { font-size: 10pt; color: #444; }
p { margin: 0 0 0.6em; }
ul, ol { margin: 0 0 0.6em; padding-left: 1.6em; }
li > ul, li > ol { margin-bottom: 0; }
.deep { padding-left: 0; border-left: 0; }
code, pre { font-family: "DejaVu Sans Mono"; font-size: ${MARKDOWN_PAGE.codeFontPt}pt; }
code { background: #f2f2f2; padding: 0 0.15em; }
pre {
  background: #f5f5f5; border: ${rule}pt solid #d8d8d8; padding: ${codePadding.vertical}pt ${codePadding.horizontal}pt; margin: 0 0 0.8em;
  white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.35;
}
pre code { background: none; padding: 0; }
blockquote { margin: 0 0 0.8em; padding: 0.1em 0 0.1em 10pt; border-left: 2.5pt solid #c8c8c8; color: #333; }
table { border-collapse: collapse; margin: 0 0 0.8em; width: 100%; table-layout: fixed; }
thead { display: table-header-group; }
tr { break-inside: avoid; }
th, td { border: ${rule}pt solid #999; padding: ${cellPadding.vertical}pt ${cellPadding.horizontal}pt; vertical-align: top; text-align: left; overflow-wrap: anywhere; }
th { background: #ececec; }
a { color: #0645ad; }
hr { border: 0; border-top: 0.5pt solid #999; margin: 1em 0; }
.skipped-image { color: #666; font-style: italic; }
`;

/** Lists and quotes nested deeper than this are not indented further. */
export const INDENTED_LEVELS = 8;
/** A link whose destination is longer than this stays text: the PDF repeats it for every line the link is on. */
export const LINK_LIMIT = 2048;

const BREAK = '\u200b';
const ZWJ = '\u200d';
const NEW_TEXT_NODE = '<wbr>';
// Spaces where a line may break and WeasyPrint's word search stops. (In running text, tabs and
// line feeds collapse into spaces; in code blocks they end a line or are a break opportunity.)
const SPACE = /[ \t\n\r]/;
// Characters that belong to the character before them: no break opportunity before these.
// (Variation selectors are marks too.)
const CONTINUES = /\p{M}|\p{Emoji_Modifier}|\u200d/u;

/**
 * Where the renderer is in a paragraph: characters since the last space or break opportunity,
 * whether the current run already has one, and characters since the last new text node.
 */
interface WrapState { run: number; broken: boolean; box: number }
interface RenderEnv { wrap?: WrapState }

const freshState = (): WrapState => ({ run: 0, broken: false, box: 0 });

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (char) => HTML_ESCAPES[char]!);

/**
 * Escapes text for HTML, adding the break opportunities and new text nodes described above.
 * The state carries over from one piece of text to the next within a paragraph, so a run that
 * crosses inline elements counts as one run.
 */
function softWrap(text: string, state: WrapState): string {
  let html = '';
  let pending = '';
  let previous = '';
  for (const char of text) {
    const space = SPACE.test(char);
    if (space) {
      state.run = 0;
      state.broken = false;
    } else {
      const due = state.broken ? RUN_STEP : RUN_LIMIT;
      // Not inside a character sequence (a letter and its accents, an emoji with its modifiers),
      // unless the sequence is itself longer than a step.
      const inSequence = previous === ZWJ || CONTINUES.test(char);
      if (state.run >= due && (!inSequence || state.run >= due + RUN_STEP)) {
        pending += BREAK;
        state.run = 0;
        state.broken = true;
      }
      state.run += 1;
    }
    // A new text node starts before a space, or before the first character after a break opportunity.
    if ((space || state.run === 1) && state.box >= BOX_LIMIT) {
      html += escapeHtml(pending) + NEW_TEXT_NODE;
      pending = '';
      state.box = 0;
    }
    pending += char;
    state.box += 1;
    previous = char;
  }
  return html + escapeHtml(pending);
}

const TAB_SIZE = 8; // CSS's tab-size, which the stylesheet leaves alone

/** Code with its tabs replaced by spaces up to the next tab stop. */
function expandTabs(code: string): string {
  if (!code.includes('\t')) return code;
  let expanded = '';
  let column = 0;
  for (const char of code) {
    if (char === '\t') {
      const width = TAB_SIZE - (column % TAB_SIZE);
      expanded += ' '.repeat(width);
      column += width;
    } else {
      expanded += char;
      column = char === '\n' ? 0 : column + 1;
    }
  }
  return expanded;
}

const ALLOWED_LINK = /^(?:https?:\/\/|mailto:)/i;

// Links can't nest in CommonMark, so a link_close always belongs to the last link_open.
function unwrapDisallowedLinks(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const kept: Token[] = [];
    let unwrapping = false;
    for (const token of block.children) {
      if (token.type === 'link_open') {
        const href = token.attrGet('href') ?? '';
        if (!ALLOWED_LINK.test(href) || href.length > LINK_LIMIT) { unwrapping = true; continue; }
      }
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

const CONTAINER_OPEN = new Set(['bullet_list_open', 'ordered_list_open', 'blockquote_open']);
const CONTAINER_CLOSE = new Set(['bullet_list_close', 'ordered_list_close', 'blockquote_close']);

// Each level of a list or quote takes 12-16 pt off the line: 40 levels left no room at all, and
// the text was drawn off the page. Past INDENTED_LEVELS, levels are not indented further.
function markDeepContainers(state: StateCore): void {
  let depth = 0;
  for (const token of state.tokens) {
    if (CONTAINER_OPEN.has(token.type)) {
      depth += 1;
      if (depth > INDENTED_LEVELS) token.attrJoin('class', 'deep');
    } else if (CONTAINER_CLOSE.has(token.type)) depth -= 1;
  }
}

// markdown-it reads blocks 100 levels deep (a list level counts two) and silently drops what is
// deeper: a container opened at the last level it reads has lost its content.
const MAX_NESTING = 100;

function refuseDroppedContent(state: StateCore): void {
  for (const token of state.tokens) {
    if (token.level >= MAX_NESTING - 1 && (CONTAINER_OPEN.has(token.type) || token.type === 'list_item_open')) {
      fail('LIMIT_EXCEEDED', `the Markdown nests lists and quotes deeper than the ${MAX_NESTING} levels it is read to (a list level counts two), and what is deeper would be left out; nest them less deeply`);
    }
  }
}

function renderTableOpen(tokens: Token[], index: number): string {
  const weights = (tokens[index]!.meta as { columnWeights?: number[] } | null)?.columnWeights ?? [];
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const columns = weights.map((weight) => `<col style="width: ${((100 * weight) / total).toFixed(2)}%">`).join('');
  return `<table>\n<colgroup>${columns}</colgroup>\n`;
}

function wrapState(env: RenderEnv): WrapState {
  return (env.wrap ??= freshState());
}

/** The text of an inline element (code span, skipped image): a text node of its own. */
function elementText(text: string, env: RenderEnv): string {
  const state = wrapState(env);
  state.box = 0;
  const html = softWrap(text, state);
  state.box = 0;
  return html;
}

function createMarkdownParser(): MarkdownIt {
  // 'default' is CommonMark plus GitHub tables and strikethrough. html: false escapes raw HTML,
  // so it is shown as text; linkify stays off so bare text never becomes a link. The highlight
  // function only expands tabs and escapes the code (with break opportunities); the fence rule
  // wraps it.
  const md = new MarkdownIt('default', {
    html: false, linkify: false, typographer: false,
    highlight: (code) => softWrap(expandTabs(code), freshState()),
  });
  // Accept every destination while parsing, so a file: or javascript: link still shows its text;
  // unwrapDisallowedLinks then keeps the text and drops the link.
  md.validateLink = () => true;
  md.core.ruler.push('unwrap_disallowed_links', unwrapDisallowedLinks);
  md.core.ruler.push('size_table_columns', sizeTableColumns);
  md.core.ruler.push('mark_deep_containers', markDeepContainers);
  md.core.ruler.push('refuse_dropped_content', refuseDroppedContent);
  const rules = md.renderer.rules;
  rules.table_open = renderTableOpen;
  // Each paragraph, heading or cell starts with a fresh count.
  const renderInline = md.renderer.renderInline.bind(md.renderer);
  md.renderer.renderInline = (tokens, options, env: RenderEnv) => {
    env.wrap = freshState();
    return renderInline(tokens, options, env);
  };
  rules.text = (tokens, index, _options, env: RenderEnv) => softWrap(tokens[index]!.content, wrapState(env));
  rules.softbreak = (_tokens, _index, _options, env: RenderEnv) => softWrap('\n', wrapState(env));
  rules.hardbreak = (_tokens, _index, _options, env: RenderEnv) => {
    env.wrap = freshState();
    return '<br>\n';
  };
  rules.code_inline = (tokens, index, _options, env: RenderEnv, renderer) =>
    `<code${renderer.renderAttrs(tokens[index]!)}>${elementText(tokens[index]!.content, env)}</code>`;
  rules.code_block = (tokens, index) => `<pre><code>${softWrap(expandTabs(tokens[index]!.content), freshState())}</code></pre>\n`;
  rules.image = (tokens, index, options, env: RenderEnv, renderer) => {
    const alt = renderer.renderInlineAsText(tokens[index]!.children ?? [], options, env).trim();
    return alt === '' ? '' : `<span class="skipped-image">${elementText(`[${alt}]`, env)}</span>`;
  };
  return md;
}

const markdownParser = createMarkdownParser();

/** The complete HTML document WeasyPrint typesets: print stylesheet inline, title in <head>. */
export function renderMarkdownHtml(markdown: string, title?: string): string {
  const body = markdownParser.render(markdown, {});
  const titleElement = title !== undefined && title.trim() !== ''
    ? `<title>${escapeHtml(title)}</title>` : '';
  return `<!DOCTYPE html>\n<html><head><meta charset="utf-8">${titleElement}<style>${PRINT_STYLESHEET}</style></head>\n<body>\n${body}</body></html>\n`;
}

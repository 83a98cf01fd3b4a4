// Markdown text for blocks: inline bold, italic, code and links; pipe tables when no cell
// spans columns, HTML tables when one does; fenced code; nested list indentation.
import type { Block, Cell, Span } from './types.js';
import { greatestOf } from './rows.js';

function wrap(text: string, open: string, close = open): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(text)!;
  if (!m[2]) return text;
  return `${m[1]}${open}${m[2]}${close}${m[3]}`;
}

function codeSpan(text: string): string {
  const fence = text.includes('`') ? '``' : '`';
  return wrap(text, fence + (fence.length > 1 ? ' ' : ''), (fence.length > 1 ? ' ' : '') + fence);
}

/** Inline Markdown for spans; `plain` drops emphasis (headings, which are bold by nature). */
export function inline(spans: Span[], plain = false): string {
  let out = '';
  let k = 0;
  while (k < spans.length) {
    const s = spans[k]!;
    if (s.link) {
      let text = '';
      while (k < spans.length && spans[k]!.link === s.link) text += spans[k++]!.text;
      const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(text)!;
      out += `${m[1]}[${m[2]!.replace(/([[\]])/g, '\\$1')}](${s.link.replace(/[()\s]/g, encodeURIComponent)})${m[3]}`;
      continue;
    }
    let text = '';
    const sameStyle = (t: Span) => !t.link && t.bold === s.bold && t.italic === s.italic && t.mono === s.mono;
    while (k < spans.length && sameStyle(spans[k]!)) text += spans[k++]!.text;
    if (s.mono && !plain) out += codeSpan(text);
    else if (plain || (!s.bold && !s.italic)) out += text;
    else out += wrap(text, s.bold && s.italic ? '***' : s.bold ? '**' : '*');
  }
  return out.replace(/\s+/g, ' ').trim();
}

function escapeStart(text: string): string {
  return text.replace(/^(#{1,6}\s|[-+*]\s|>|[0-9]{1,9}[.)]\s)/, (m) => (/^[0-9]/.test(m) ? m.replace(/([.)])/, '\\$1') : `\\${m}`));
}

function cellText(cell: Cell): string {
  return inline(cell.spans).replace(/\|/g, '\\|');
}

function htmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function table(rows: Cell[][]): string {
  const spanning = rows.some((r) => r.some((c) => c.colspan > 1 || c.rowspan > 1));
  const width = greatestOf(rows, (r) => r.length);
  if (!spanning) {
    const lines = rows.map((r, index) => {
      // Header cells are bold by convention; the header row says so already.
      const cells = r.map((c) => (index === 0 ? inline(c.spans, true).replace(/\|/g, '\\|') : cellText(c)));
      while (cells.length < width) cells.push('');
      return `| ${cells.join(' | ')} |`;
    });
    lines.splice(1, 0, `|${' --- |'.repeat(width)}`);
    return lines.join('\n');
  }
  const body = rows.map((r) => `<tr>${r.map((c) => `<td${c.rowspan > 1 ? ` rowspan="${c.rowspan}"` : ''}${c.colspan > 1 ? ` colspan="${c.colspan}"` : ''}>${htmlEscape(inline(c.spans))}</td>`).join('')}</tr>`);
  return `<table>\n${body.join('\n')}\n</table>`;
}

export function emit(blocks: Block[]): string {
  const parts: string[] = [];
  let previous: Block | undefined;
  for (const b of blocks) {
    let text: string;
    switch (b.kind) {
      case 'heading': text = `${'#'.repeat(b.level || 1)} ${inline(b.spans, true)}`; break;
      case 'paragraph': text = escapeStart(inline(b.spans)); break;
      case 'code': {
        const fence = b.lines.some((l) => l.includes('```')) ? '~~~~' : '```';
        text = `${fence}\n${b.lines.join('\n')}\n${fence}`;
        break;
      }
      case 'table': text = table(b.rows); break;
      case 'item': {
        const pad = '    '.repeat(b.depth);
        const numbered = /^\(?([0-9]{1,9})([.)])$/.exec(b.marker);
        const marker = numbered ? `${numbered[1]}${numbered[2]}` : b.ordered ? `- ${b.marker}` : '-';
        text = `${pad}${marker} ${inline(b.spans)}`;
        break;
      }
    }
    if (!text.trim()) continue;
    const tight = previous?.kind === 'item' && b.kind === 'item' && (b.depth > 0 || previous.ordered === b.ordered);
    parts.push(parts.length ? (tight ? '\n' : '\n\n') : '', text);
    previous = b;
  }
  return parts.join('') + (parts.length ? '\n' : '');
}

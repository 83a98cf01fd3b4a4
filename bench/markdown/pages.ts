// The pages of the PDF-to-Markdown benchmark: the ground truth of ../shared/corpus/markdown-gt/
// and the styles each page is typeset in, by WeasyPrint or headless Chromium, cached by content
// in the temporary folder. Shared by the benchmark (run.ts) and the layout engine's
// before/after comparison (bench/layout-compare.ts).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import MarkdownIt from 'markdown-it';
import { runTool } from '../../tools/process/run-tool.js';
import { ROOT } from '../lib/common.js';

export const GT_DIR = path.resolve(ROOT, '../shared/corpus/markdown-gt');
export const CACHE = path.join(os.tmpdir(), 'paydoc-bench-markdown');

export interface Style {
  id: string;
  engine: 'weasyprint' | 'chromium';
  /**
   * Which set the style is in: what each set is for, and what may be read while changing a rule,
   * is STYLE_SETS_PROTOCOL. Once a rule is changed from reading an unseen style's pages, that style
   * becomes held-out, and a new unseen style is added.
   */
  set: 'tuning' | 'held-out' | 'unseen';
  columns: 1 | 2;
  description: string;
  css: string;
  /** Pages carry a bar chart whose labels and values are text (see withFigure). */
  figures?: boolean;
}

/** The protocol of the style sets and the targets away from tuning, as the reports state it. */
export const STYLE_SETS_PROTOCOL = 'The layout engine\'s rules are tuned on the tuning styles. The held-out styles (other fonts, sizes, gutters, table rules, headings across columns and wrapped titles, charts with text labels) are kept aside from tuning; their pages were read to find the shapes that fail, and each fix is a general rule with a small synthetic test, not a threshold fitted to them. '
  + 'The unseen styles were added after the last rule change and nobody has read their output while changing a rule: they show whether the rules hold on layouts nobody has looked at. '
  + 'Targets on the held-out and unseen styles: overall ≥ 0.97 in one column and ≥ 0.92 in two, tables (TEDS) ≥ 0.85 in two columns, headings (MHS) ≥ 0.98.';

const TABLE_RULED = 'table{border-collapse:collapse;margin:.6em 0} td,th{border:.75pt solid #333;padding:3pt 6pt;vertical-align:top;text-align:left}';
const TABLE_PLAIN = 'table{border-collapse:collapse;margin:.6em 0} td,th{border:none;padding:2pt 9pt 2pt 0;vertical-align:top;text-align:left}';
// Tables ruled only by a line under each row (no column rules, no frame), set smaller than the text.
const TABLE_UNDERLINED = 'table{border-collapse:collapse;margin:.6em 0;font-size:8pt} td,th{border:none;border-bottom:.5pt solid #444;padding:2pt 7pt 2pt 0;vertical-align:top;text-align:left}';

// Held-out: tables ruled only under each row, 8 pt; and the chart of withFigure.
const TABLE_ROW_RULES_8PT = 'table{border-collapse:collapse;margin:.5em 0;font-size:8pt} td,th{border:none;border-bottom:.4pt solid #222;padding:1.5pt 5pt 1.5pt 0;vertical-align:top;text-align:left} th{font-weight:bold}';
const FIGURE_CSS = 'figure.chart{margin:.6em 0;break-inside:avoid} figure.chart svg{display:block;width:100%;height:auto} figure.chart figcaption{font-size:.85em;font-style:italic;margin-top:.3em}';

export const STYLES: Style[] = [
  {
    id: 'weasy-serif-1col', engine: 'weasyprint', set: 'tuning', columns: 1,
    description: 'WeasyPrint, DejaVu Serif 11pt, one column, running header and centred page number, ruled tables',
    css: `@page{size:A4;margin:2.2cm 2cm;@top-center{content:"Quarterly Review of Regional Studies";font:9pt "DejaVu Serif";color:#555}@bottom-center{content:counter(page);font:9pt "DejaVu Serif"}}
      body{font:11pt/1.4 "DejaVu Serif"} h1{font-size:17pt} ${TABLE_RULED}`,
  },
  {
    id: 'weasy-sans-2col', engine: 'weasyprint', set: 'tuning', columns: 2,
    description: 'WeasyPrint, DejaVu Sans 9.5pt, two columns, header with title left and page number right, borderless tables',
    css: `@page{size:A4;margin:2cm 1.6cm;@top-left{content:"Journal of Worked Examples";font:8pt "DejaVu Sans"}@top-right{content:"p. " counter(page);font:8pt "DejaVu Sans"}}
      body{font:9.5pt/1.35 "DejaVu Sans";columns:2;column-gap:1cm} h1{font-size:14pt} ${TABLE_PLAIN}`,
  },
  {
    id: 'weasy-sans-2col-underlined', engine: 'weasyprint', set: 'tuning', columns: 2,
    description: 'WeasyPrint, Nimbus Sans 9.5pt, two columns, running header centred and page number at the foot, 8 pt tables ruled only by a line under each row',
    css: `@page{size:A4;margin:1.9cm 1.7cm 2.1cm;@top-center{content:"Proceedings of the Regional Working Group";font:8pt "Nimbus Sans"}@bottom-center{content:counter(page);font:8pt "Nimbus Sans"}}
      body{font:9.5pt/1.35 "Nimbus Sans";columns:2;column-gap:0.8cm} h1{font-size:14pt} ${TABLE_UNDERLINED}`,
  },
  {
    id: 'weasy-liberation-large', engine: 'weasyprint', set: 'tuning', columns: 1,
    description: 'WeasyPrint, Liberation Serif 13pt, one column, footer "Page N of M", borderless tables',
    css: `@page{size:Letter;margin:2.5cm;@bottom-right{content:"Page " counter(page) " of " counter(pages);font:9pt "Liberation Sans"}@bottom-left{content:"Internal report";font:9pt "Liberation Sans"}}
      body{font:13pt/1.45 "Liberation Serif"} h1{font:bold 18pt "Liberation Sans"} ${TABLE_PLAIN}`,
  },
  {
    id: 'chromium-sans-1col', engine: 'chromium', set: 'tuning', columns: 1,
    description: 'Chromium, Liberation Sans 11pt, one column, Chromium\'s own header (date, title) and footer (URL, page), ruled tables',
    css: `@page{size:A4;margin:1.8cm 1.6cm} body{font:11pt/1.4 "Liberation Sans"} h1{font-size:16pt} ${TABLE_RULED}`,
  },
  {
    id: 'chromium-serif-2col', engine: 'chromium', set: 'tuning', columns: 2,
    description: 'Chromium, Nimbus Roman 10pt, two columns, Chromium header and footer, borderless tables',
    css: `@page{size:A4;margin:1.8cm 1.5cm} body{font:10pt/1.35 "Nimbus Roman";columns:2;column-gap:0.9cm} h1{font-size:14pt} ${TABLE_PLAIN}`,
  },
  // Held out: fonts the tuning styles do not use (C059, P052, URW Gothic, Nimbus Sans Narrow),
  // body 8.5 to 12 pt, gutters from 0.5 to 1.5 cm, titles large enough to wrap, headings across
  // both columns, and charts whose labels and values are text.
  {
    id: 'heldout-c059-1col', engine: 'weasyprint', set: 'held-out', columns: 1, figures: true,
    description: 'WeasyPrint, C059 (Century Schoolbook) 10pt, one column, wide margins, header with title left and page number right, 24 pt titles that wrap, fully ruled tables, bar charts with text labels',
    css: `@page{size:A4;margin:2.6cm 3cm;@top-left{content:"Annals of Applied Survey Methods";font:italic 8.5pt C059}@top-right{content:counter(page);font:8.5pt C059}}
      body{font:10pt/1.4 C059} h1{font-size:24pt;line-height:1.15} h2{font-size:13pt} ${TABLE_RULED} ${FIGURE_CSS}`,
  },
  {
    id: 'heldout-gothic-2col-rowrules', engine: 'weasyprint', set: 'held-out', columns: 2, figures: true,
    description: 'WeasyPrint, URW Gothic 8.5pt, two columns, narrow 0.5 cm gutter, running header centred and page number at the foot, headings across both columns (20 pt, wrapping), 8 pt tables ruled only under each row, bar charts with text labels',
    css: `@page{size:A4;margin:1.7cm 1.5cm 2cm;@top-center{content:"Bulletin of the Coastal Monitoring Network";font:7.5pt "URW Gothic"}@bottom-center{content:counter(page);font:7.5pt "URW Gothic"}}
      body{font:8.5pt/1.35 "URW Gothic";columns:2;column-gap:0.5cm} h1{font-size:20pt;line-height:1.15;column-span:all} h2{font-size:11pt;column-span:all} ${TABLE_ROW_RULES_8PT} ${FIGURE_CSS}`,
  },
  {
    id: 'heldout-p052-2col-wide', engine: 'weasyprint', set: 'held-out', columns: 2, figures: true,
    description: 'WeasyPrint, P052 (Palatino) 10.5pt, two columns, wide 1.5 cm gutter, footer with title left and page number right, headings across both columns, tables without rules, bar charts with text labels',
    css: `@page{size:Letter;margin:2cm 1.8cm;@bottom-left{content:"Working Papers in Economic History";font:8pt P052}@bottom-right{content:"Page " counter(page);font:8pt P052}}
      body{font:10.5pt/1.4 P052;columns:2;column-gap:1.5cm} h1{font-size:18pt;column-span:all} ${TABLE_PLAIN} ${FIGURE_CSS}`,
  },
  {
    id: 'heldout-narrow-1col-12pt', engine: 'chromium', set: 'held-out', columns: 1,
    description: 'Chromium, Nimbus Sans Narrow 12pt, one column, Chromium\'s own header and footer, 8 pt tables ruled only under each row',
    css: `@page{size:A4;margin:2cm 2.4cm} body{font:12pt/1.45 "Nimbus Sans Narrow"} h1{font-size:20pt} ${TABLE_ROW_RULES_8PT}`,
  },
  // Unseen: fonts no other style uses (Carlito, Caladea), a running head with the page number at
  // the top right or a page number between dashes at the foot, headings of two sizes across both
  // columns.
  {
    id: 'unseen-carlito-2col', engine: 'weasyprint', set: 'unseen', columns: 2, figures: true,
    description: 'WeasyPrint, Carlito 10pt, two columns, 0.7 cm gutter, running title left and page number right at the top, headings across both columns (16 and 12 pt), 8 pt tables ruled only under each row, bar charts with text labels',
    css: `@page{size:A4;margin:1.8cm 1.6cm 2cm;@top-left{content:"Review of Applied Field Studies";font:8pt Carlito}@top-right{content:counter(page);font:8pt Carlito}}
      body{font:10pt/1.3 Carlito;columns:2;column-gap:0.7cm} h1{font-size:16pt;column-span:all} h2{font-size:12pt;column-span:all} ${TABLE_ROW_RULES_8PT} ${FIGURE_CSS}`,
  },
  {
    id: 'unseen-caladea-1col', engine: 'weasyprint', set: 'unseen', columns: 1, figures: true,
    description: 'WeasyPrint, Caladea 11pt, one column, Letter, page number between dashes centred at the foot, 20 pt titles that wrap, 8 pt tables ruled under each row, bar charts with text labels',
    css: `@page{size:Letter;margin:2.3cm 2.5cm;@bottom-center{content:"— " counter(page) " —";font:9pt Caladea}}
      body{font:11pt/1.4 Caladea} h1{font-size:20pt;line-height:1.1} h2{font-size:13pt} ${TABLE_UNDERLINED} ${FIGURE_CSS}`,
  },
];

interface ChartText { x: number; y: number; text: string; anchor: 'start' | 'middle' | 'end' }

/**
 * A bar chart for one page, drawn from its id: values down the left axis, years along the bottom,
 * each bar's value above it, as SVG text (so the PDF's text layer holds them); every other chart
 * has its bars and axes drawn, the others are labels alone. Returns the figure's HTML and its
 * text as the ground truth reads it: the chart's lines top to bottom (labels on one baseline, left
 * to right), then the caption.
 */
function chartFor(id: string): { html: string; text: string[] } {
  const bytes = createHash('sha256').update(id).digest();
  const years = 4 + (bytes[0]! % 3);
  const first = 2012 + (bytes[1]! % 8);
  const top = [40, 80, 100, 200][bytes[2]! % 4]!;
  const drawn = bytes[3]! % 2 === 0;
  const width = 300, height = 170, left = 34, bottom = 140, plotTop = 14;
  const y = (v: number) => bottom - (v / top) * (bottom - plotTop);
  const labels: ChartText[] = [];
  const shapes: string[] = [];
  for (let k = 0; k <= 4; k++) labels.push({ x: left - 5, y: y((top * k) / 4) + 3, text: String((top * k) / 4), anchor: 'end' });
  const step = (width - left - 10) / years;
  for (let k = 0; k < years; k++) {
    const value = Math.round(((bytes[4 + k]! % 90) + 8) * top / 100);
    const cx = left + step * (k + 0.5);
    labels.push({ x: cx, y: bottom + 13, text: String(first + k), anchor: 'middle' });
    labels.push({ x: cx, y: y(value) - 4, text: String(value), anchor: 'middle' });
    if (drawn) shapes.push(`<rect x="${(cx - step * 0.3).toFixed(1)}" y="${y(value).toFixed(1)}" width="${(step * 0.6).toFixed(1)}" height="${(bottom - y(value)).toFixed(1)}" fill="#9ab"/>`);
  }
  if (drawn) shapes.push(`<path d="M${left} ${plotTop} V${bottom} H${width - 6}" stroke="#333" fill="none" stroke-width=".8"/>`);
  const caption = `Figure ${1 + (bytes[10]! % 9)}. Annual totals by year, ${first} to ${first + years - 1}.`;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" font-family="inherit" font-size="9">`
    + shapes.join('') + labels.map((l) => `<text x="${l.x.toFixed(1)}" y="${l.y.toFixed(1)}" text-anchor="${l.anchor}">${l.text}</text>`).join('') + '</svg>';
  // Reading order of the labels: by baseline (rounded to a point), then left to right.
  const rows = new Map<number, ChartText[]>();
  for (const l of labels) rows.set(Math.round(l.y), [...(rows.get(Math.round(l.y)) ?? []), l]);
  const lines = [...rows.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row.sort((a, b) => a.x - b.x).map((l) => l.text).join(' '));
  return { html: `<figure class="chart">${svg}<figcaption>${caption}</figcaption></figure>`, text: [lines.join(' '), caption] };
}

/**
 * A page of a style with figures: every other page (by its id) gets a chart after its first
 * paragraph. Returns the Markdown to typeset (the chart as HTML) and the ground truth to score
 * against (the chart as its text: one paragraph of labels, one of caption).
 */
export function withFigure(style: Style, id: string, markdown: string): { source: string; truth: string } {
  if (!style.figures || (createHash('sha256').update(id).digest()[0]! & 1)) return { source: markdown, truth: markdown };
  const blocks = markdown.split(/\n{2,}/);
  const at = blocks.findIndex((b) => /^[A-Za-z"(]/.test(b.trim()) && !b.includes('<'));
  const chart = chartFor(id);
  const place = at < 0 ? blocks.length : at + 1;
  const join = (insert: string[]) => [...blocks.slice(0, place), ...insert, ...blocks.slice(place)].join('\n\n');
  return { source: join([chart.html]), truth: join(chart.text) };
}

function renderHtml(markdown: string, css: string): string {
  const md = new MarkdownIt({ html: true });
  // Images in the ground truth point nowhere; a renderer must not try to fetch them.
  const body = md.render(markdown).replace(/<img\b[^>]*>/gi, '');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Benchmark page</title><style>${css}</style></head><body>${body}</body></html>`;
}

export async function renderPdf(style: Style, id: string, markdown: string): Promise<string> {
  const html = renderHtml(markdown, style.css);
  const key = createHash('sha256').update(style.engine).update(html).digest('hex').slice(0, 16);
  const dir = path.join(CACHE, style.id);
  const out = path.join(dir, `${id}-${key}.pdf`);
  if (existsSync(out)) return out;
  await mkdir(dir, { recursive: true });
  const tmp = await mkdtemp(path.join(CACHE, 'render-'));
  try {
    if (style.engine === 'weasyprint') {
      const r = await runTool('weasyprint', ['-', 'out.pdf'], { cwd: tmp, input: new TextEncoder().encode(html), timeoutMs: 60_000 });
      if (r.exitCode !== 0) throw new Error(`weasyprint failed on ${id}`);
    } else {
      await writeFile(path.join(tmp, 'page.html'), html);
      const r = await runTool('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions',
        `--user-data-dir=${path.join(tmp, 'profile')}`, `--print-to-pdf=${path.join(tmp, 'out.pdf')}`, pathToFileURL(path.join(tmp, 'page.html')).href],
      { cwd: tmp, timeoutMs: 60_000 });
      if (!existsSync(path.join(tmp, 'out.pdf'))) throw new Error(`chromium failed on ${id}: exit ${r.exitCode}`);
    }
    await copyFile(path.join(tmp, 'out.pdf'), out);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return out;
}

/** A ground-truth page typeset in a style: its PDF, and the truth to score it against (withFigure). */
export async function stylePage(style: Style, id: string, markdown: string): Promise<{ pdf: string; truth: string }> {
  const { source, truth } = withFigure(style, id, markdown);
  return { pdf: await renderPdf(style, id, source), truth };
}

export async function pageCount(pdf: string): Promise<number> {
  const r = await runTool('pdfinfo', [pdf], { timeoutMs: 10_000 });
  return Number(/Pages:\s+(\d+)/.exec(Buffer.from(r.stdout).toString())?.[1] ?? 1);
}

/** The ground-truth pages, by id (the file name without .md), in name order. */
export async function groundTruth(): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  for (const f of (await readdir(GT_DIR)).filter((name) => name.endsWith('.md')).sort()) all.set(f.replace(/\.md$/, ''), await readFile(path.join(GT_DIR, f), 'utf8'));
  return all;
}

/** The pages of a PDF as a 200 dpi grey scan: one image per page, no text layer. Cached beside the PDF. */
export async function scanPdf(pdf: string): Promise<string> {
  const out = pdf.replace(/\.pdf$/, '-scan200.pdf');
  if (existsSync(out)) return out;
  const tmp = await mkdtemp(path.join(CACHE, 'scan-'));
  try {
    const draw = await runTool('mutool', ['draw', '-q', '-r', '200', '-c', 'gray', '-o', path.join(tmp, 'page-%d.png'), pdf], { cwd: tmp, timeoutMs: 120_000 });
    if (draw.exitCode !== 0) throw new Error(`mutool draw failed on ${path.basename(pdf)}`);
    const pngs = (await readdir(tmp)).filter((f) => f.endsWith('.png')).sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0]));
    // mutool sizes each page from the PNG's resolution (200 dpi): the original page size again.
    const wrap = await runTool('mutool', ['convert', '-o', path.join(tmp, 'out.pdf'), ...pngs], { cwd: tmp, timeoutMs: 120_000 });
    if (wrap.exitCode !== 0) throw new Error(`mutool convert failed on ${path.basename(pdf)}`);
    await copyFile(path.join(tmp, 'out.pdf'), out);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return out;
}

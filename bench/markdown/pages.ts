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
  description: string;
  css: string;
}

const TABLE_RULED = 'table{border-collapse:collapse;margin:.6em 0} td,th{border:.75pt solid #333;padding:3pt 6pt;vertical-align:top;text-align:left}';
const TABLE_PLAIN = 'table{border-collapse:collapse;margin:.6em 0} td,th{border:none;padding:2pt 9pt 2pt 0;vertical-align:top;text-align:left}';
// Tables ruled only by a line under each row (no column rules, no frame), set smaller than the text.
const TABLE_UNDERLINED = 'table{border-collapse:collapse;margin:.6em 0;font-size:8pt} td,th{border:none;border-bottom:.5pt solid #444;padding:2pt 7pt 2pt 0;vertical-align:top;text-align:left}';

export const STYLES: Style[] = [
  {
    id: 'weasy-serif-1col', engine: 'weasyprint',
    description: 'WeasyPrint, DejaVu Serif 11pt, one column, running header and centred page number, ruled tables',
    css: `@page{size:A4;margin:2.2cm 2cm;@top-center{content:"Quarterly Review of Regional Studies";font:9pt "DejaVu Serif";color:#555}@bottom-center{content:counter(page);font:9pt "DejaVu Serif"}}
      body{font:11pt/1.4 "DejaVu Serif"} h1{font-size:17pt} ${TABLE_RULED}`,
  },
  {
    id: 'weasy-sans-2col', engine: 'weasyprint',
    description: 'WeasyPrint, DejaVu Sans 9.5pt, two columns, header with title left and page number right, borderless tables',
    css: `@page{size:A4;margin:2cm 1.6cm;@top-left{content:"Journal of Worked Examples";font:8pt "DejaVu Sans"}@top-right{content:"p. " counter(page);font:8pt "DejaVu Sans"}}
      body{font:9.5pt/1.35 "DejaVu Sans";columns:2;column-gap:1cm} h1{font-size:14pt} ${TABLE_PLAIN}`,
  },
  {
    id: 'weasy-sans-2col-underlined', engine: 'weasyprint',
    description: 'WeasyPrint, Nimbus Sans 9.5pt, two columns, running header centred and page number at the foot, 8 pt tables ruled only by a line under each row',
    css: `@page{size:A4;margin:1.9cm 1.7cm 2.1cm;@top-center{content:"Proceedings of the Regional Working Group";font:8pt "Nimbus Sans"}@bottom-center{content:counter(page);font:8pt "Nimbus Sans"}}
      body{font:9.5pt/1.35 "Nimbus Sans";columns:2;column-gap:0.8cm} h1{font-size:14pt} ${TABLE_UNDERLINED}`,
  },
  {
    id: 'weasy-liberation-large', engine: 'weasyprint',
    description: 'WeasyPrint, Liberation Serif 13pt, one column, footer "Page N of M", borderless tables',
    css: `@page{size:Letter;margin:2.5cm;@bottom-right{content:"Page " counter(page) " of " counter(pages);font:9pt "Liberation Sans"}@bottom-left{content:"Internal report";font:9pt "Liberation Sans"}}
      body{font:13pt/1.45 "Liberation Serif"} h1{font:bold 18pt "Liberation Sans"} ${TABLE_PLAIN}`,
  },
  {
    id: 'chromium-sans-1col', engine: 'chromium',
    description: 'Chromium, Liberation Sans 11pt, one column, Chromium\'s own header (date, title) and footer (URL, page), ruled tables',
    css: `@page{size:A4;margin:1.8cm 1.6cm} body{font:11pt/1.4 "Liberation Sans"} h1{font-size:16pt} ${TABLE_RULED}`,
  },
  {
    id: 'chromium-serif-2col', engine: 'chromium',
    description: 'Chromium, Nimbus Roman 10pt, two columns, Chromium header and footer, borderless tables',
    css: `@page{size:A4;margin:1.8cm 1.5cm} body{font:10pt/1.35 "Nimbus Roman";columns:2;column-gap:0.9cm} h1{font-size:14pt} ${TABLE_PLAIN}`,
  },
];

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

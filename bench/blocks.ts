// /v1/pdf/blocks on the Markdown benchmark's ground truth: every page in every style (the PDFs of
// bench/markdown/pages.ts), converted by the Markdown work function and by the blocks work
// function, one job at a time. Scored twice against the ground truth:
// - the blocks' Markdown joined in order (headers, footers and figures left out, as the Markdown
//   leaves them out) with NID, TEDS and MHS (bench/markdown/metrics.ts), beside the Markdown's;
// - the blocks' plain text joined in order, by NID against the ground truth's text (its Markdown
//   rendered, tags dropped: test/support/word-recall.ts) and by word recall, beside the Markdown
//   rendered the same way.
// Also each work function's CPU time per page. Writes bench/results/blocks.json.
//
//   node dist/bench/blocks.js [--quick] [--limit=N]
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Job } from '../core/job.js';
import { warmLauncher } from '../tools/process/run-tool.js';
import { blocks, markdown } from '../workers/layout/index.js';
import { groundTruthText, wordRecall } from '../test/support/word-recall.js';
import { indelSimilarity, scorePage, type PageScores } from './markdown/metrics.js';
import { CACHE, groundTruth, pageCount, renderPdf, STYLES } from './markdown/pages.js';
import { ROOT } from './lib/common.js';

warmLauncher();
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const limit = Number(args.find((a) => a.startsWith('--limit='))?.split('=')[1] ?? (quick ? 10 : Infinity));

interface Block { kind: string; text: string; markdown: string }
const BODY = (b: Block) => b.kind !== 'header' && b.kind !== 'footer' && b.kind !== 'figure';

const normalize = (s: string) => s.replace(/\s+/g, ' ').trim();
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

function job<Params>(dir: string, pages: number, operation: string, params: Params): Job<Params> {
  return {
    operation, params, jobDir: dir, deadline: Date.now() + 120_000,
    files: [{ bytes: new Uint8Array(), path: path.join(dir, 'input.pdf'), pages }],
    settings: { modelConcurrency: 1, modelDpi: 150, ocrEngine: 'tesseract', ocrLanguages: 'eng', maxZipBytes: 0, markdownOcr: 'off' },
  };
}

const METRICS = ['nid', 'teds', 'mhs'] as const;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

const all = await groundTruth();
const ids = [...all.keys()].slice(0, limit);
await mkdir(CACHE, { recursive: true });
const work = await mkdtemp(path.join(os.tmpdir(), 'paydoc-bench-blocks-'));
const started = Date.now();
interface Row {
  style: string; id: string; markdown: PageScores; blocks: PageScores;
  textNid: { markdown: number; blocks: number }; recall: { markdown: number; blocks: number }; sameMarkdownScores: boolean;
}
const rows: Row[] = [];
const cpu = { markdown: 0, blocks: 0, pages: 0 };
try {
  for (const style of STYLES) {
    for (const id of ids) {
      const truth = all.get(id)!;
      const pdf = await renderPdf(style, id, truth);
      const pages = await pageCount(pdf);
      const dir = await mkdtemp(path.join(work, 'job-'));
      await copyFile(pdf, path.join(dir, 'input.pdf'));
      let at = cpuNow();
      const md = Buffer.from((await markdown(job(dir, pages, 'pdf.markdown', {}))).body).toString('utf8');
      cpu.markdown += cpuNow() - at;
      at = cpuNow();
      let found: Block[] = [];
      try {
        found = (JSON.parse(Buffer.from((await blocks(job(dir, pages, 'pdf.blocks', { chunkChars: null }))).body).toString('utf8')) as { blocks: Block[] }).blocks;
      } catch { /* no text: scored as empty, as the Markdown would be */ }
      cpu.blocks += cpuNow() - at;
      cpu.pages += pages;
      await rm(dir, { recursive: true, force: true });
      const body = found.filter(BODY);
      const joined = body.map((b) => b.markdown).join('\n\n');
      const text = body.map((b) => b.text).join('\n');
      const reference = normalize(groundTruthText(truth));
      const markdownScores = scorePage(truth, md), blockScores = scorePage(truth, joined);
      rows.push({
        style: style.id, id, markdown: markdownScores, blocks: blockScores,
        textNid: {
          markdown: indelSimilarity(reference, normalize(groundTruthText(md))), blocks: indelSimilarity(reference, normalize(text)),
        },
        recall: { markdown: wordRecall(groundTruthText(truth), groundTruthText(md)), blocks: wordRecall(groundTruthText(truth), text) },
        sameMarkdownScores: METRICS.every((m) => markdownScores[m] === blockScores[m]),
      });
    }
    process.stderr.write(`${style.id}: ${ids.length} pages\n`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

const metric = (side: 'markdown' | 'blocks', m: (typeof METRICS)[number]) => {
  const values = rows.map((r) => r[side][m]).filter((v): v is number => v !== null);
  return values.length ? Number(mean(values).toFixed(4)) : null;
};
const meanOf = (value: (row: Row) => number) => Number(mean(rows.map(value)).toFixed(4));
const summary = {
  markdown: Object.fromEntries(METRICS.map((m) => [m, metric('markdown', m)])),
  blocksMarkdown: Object.fromEntries(METRICS.map((m) => [m, metric('blocks', m)])),
  textNid: { markdown: meanOf((r) => r.textNid.markdown), blocks: meanOf((r) => r.textNid.blocks) },
  wordRecall: { markdown: meanOf((r) => r.recall.markdown), blocks: meanOf((r) => r.recall.blocks) },
  pagesWithTheSameMarkdownScores: rows.filter((r) => r.sameMarkdownScores).length,
  cpuMsPerPage: {
    markdown: Number((cpu.markdown / cpu.pages * 1000).toFixed(1)), blocks: Number((cpu.blocks / cpu.pages * 1000).toFixed(1)),
  },
};
const report = {
  generated: new Date().toISOString(), pages: rows.length, styles: STYLES.map((s) => s.id),
  method: 'Every ground-truth page of the Markdown benchmark in every style, converted by the pdf.markdown and pdf.blocks work functions (text layer, MARKDOWN_OCR off), one job at a time in this process. The blocks\' Markdown joined in reading order (headers, footers and figures left out, as the Markdown leaves them out) is scored with NID, TEDS and MHS beside the Markdown. The blocks\' plain text joined in order is scored by NID against the ground truth\'s text (its Markdown rendered, tags dropped) and by word recall, beside the Markdown rendered to text the same way. CPU: this process\'s own time per page (the layout engine and the answer), without the mutool runs, which are the same for both.',
  summary, wallSeconds: (Date.now() - started) / 1000, loadAverage: os.loadavg(), cpus: os.cpus().length,
  perPage: rows,
};
const out = path.join(ROOT, quick ? 'bench/quick' : 'bench/results');
await mkdir(out, { recursive: true });
await writeFile(path.join(out, 'blocks.json'), JSON.stringify(report, null, 1));
process.stdout.write(`${JSON.stringify(summary, null, 1)}\n`);

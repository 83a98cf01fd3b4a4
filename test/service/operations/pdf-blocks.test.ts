// /v1/pdf/blocks: every block's box is where mupdf's own structured text (`mutool draw -F stext`,
// run here on its own) draws the same text, on plain pages and on pages with a non-zero-origin
// MediaBox and CropBox, rotated pages (90, 180, 270) and a UserUnit of 2; on those the text was
// placed at known points of the displayed page, and the boxes are checked against those points
// too. Scans of the same pages, read by tesseract, come back with the same boxes. Tables carry
// their rows and cells with boxes; chunks never pass chunk_chars and never cut a table row; the
// hostile corpus gives no 5xx and every answer fits the declared schema; one paid call over HTTP
// and one over MCP on the local Base chain, balances read.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import { Ajv } from 'ajv';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { runTool } from '../../../tools/process/run-tool.js';
import { operationById } from '../../../operations/index.js';
import { charCount } from '../../../workers/layout/chunks.js';
import { plannedJob, runOperation } from '../../support/jobs.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../../shared/corpus');
const PAGE_RATE = 20_000n;
/** How far a box may be from mupdf's own reading of the same text, in points. */
const TOLERANCE_PT = 2;
/** How far the left and right edges of an OCR line's box (its ink) may be from the glyph boxes of the same line in the text layer. */
const OCR_TOLERANCE_PT = 4;

type Box = [number, number, number, number];
interface Cell { text: string; colspan: number; rowspan: number; bbox?: Box }
interface Row { page: number; bbox: Box; cells: Cell[] }
interface DocBlock {
  page: number; bbox: Box; kind: string; text: string; markdown: string; level?: number; marker?: string;
  rows?: Row[]; continued?: { page: number; bbox: Box }[];
}
interface Chunk {
  text: string; markdown: string; pages: number[]; boxes: { page: number; bbox: Box }[]; blocks: number[]; oversized?: boolean;
}
interface AnswerPage { page: number; width: number; height: number; read: string; note?: string }
interface Answer { pageCount: number; pages: AnswerPage[]; blocks: DocBlock[]; chunks?: Chunk[] }

let scratch: string;
before(async () => { scratch = await mkdtemp(path.join(os.tmpdir(), 'pdf-blocks-test-')); });
after(async () => { await rm(scratch, { recursive: true, force: true }); });

async function blocksOf(pdf: Uint8Array, fields: Record<string, string> = {}, ocr = false): Promise<Answer> {
  const planned = await plannedJob('pdf.blocks', [pdf], fields, { root: scratch, timeoutMs: 120_000, settings: { markdownOcr: ocr ? 'tesseract' : 'off' } });
  const out = await planned.run().finally(() => planned.jobDir.remove());
  expect(out.mediaType).to.equal('application/json');
  const answer = JSON.parse(Buffer.from(out.body).toString('utf8')) as Answer;
  expect(validAnswer(answer), JSON.stringify(validAnswer.errors)).to.be.true();
  return answer;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validAnswer = ajv.compile(operationById('pdf.blocks').output.jsonSchema!);

async function tool(name: string, args: string[], input?: Uint8Array): Promise<Buffer> {
  const r = await runTool(name, args, { cwd: scratch, timeoutMs: 60_000, maxStdout: 64 * 1024 * 1024, ...(input ? { input } : {}) });
  expect(r.exitCode, `${name}: ${r.stderr}`).to.equal(0);
  return Buffer.from(r.stdout);
}

async function weasy(html: string): Promise<Uint8Array> {
  const name = `w${Math.random().toString(36).slice(2)}.pdf`;
  await tool('weasyprint', ['-', name], new TextEncoder().encode(html));
  return new Uint8Array(await readFile(path.join(scratch, name)));
}

// ---- Pages with any boxes, rotation and unit, their text placed on the page as displayed ------

type Rotation = 0 | 90 | 180 | 270;
/** A line of text: its start on its baseline, in points from the displayed page's top-left corner. */
interface Line { text: string; x: number; y: number; size: number }
interface BoxedPage {
  mediaBox: Box; cropBox?: Box; rotate?: Rotation; userUnit?: number;
  lines?: Line[];
  /** A grey image covering the whole displayed page, upright as displayed. */
  image?: { pixels: Buffer; width: number; height: number };
}

/** The displayed page's size in points. */
function displayedSize(p: BoxedPage): [number, number] {
  const [x0, y0, x1, y1] = p.cropBox ?? p.mediaBox;
  const u = p.userUnit ?? 1;
  const w = (x1 - x0) * u, h = (y1 - y0) * u;
  return p.rotate === 90 || p.rotate === 270 ? [h, w] : [w, h];
}

/** The PDF user-space point drawn at (X, Y) of the displayed page: PDF's rotation (clockwise), crop box and unit undone. */
function toUser(p: BoxedPage, X: number, Y: number): [number, number] {
  const [bx0, by0, bx1, by1] = p.cropBox ?? p.mediaBox;
  const u = p.userUnit ?? 1;
  switch (p.rotate ?? 0) {
    case 0: return [bx0 + X / u, by1 - Y / u];
    case 90: return [bx0 + Y / u, by0 + X / u];
    case 180: return [bx1 - X / u, by0 + Y / u];
    case 270: return [bx1 - Y / u, by1 - X / u];
  }
}

/**
 * The matrix mapping (1, 0) to a step of `right` along the displayed x axis and (0, 1) to `up`
 * points up the displayed page, from (X, Y).
 */
function matrixAt(p: BoxedPage, X: number, Y: number, right: number, up: number): number[] {
  const o = toUser(p, X, Y), r = toUser(p, X + right, Y), u = toUser(p, X, Y - up);
  return [r[0] - o[0], r[1] - o[1], u[0] - o[0], u[1] - o[1], o[0], o[1]];
}

const num = (v: number) => Number(v.toFixed(4)).toString();

function boxedPdf(pages: BoxedPage[]): Uint8Array {
  const objects: Buffer[] = [];
  const add = (body: string | Buffer) => { objects.push(Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1')); return objects.length; };
  add(''); add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const kids: number[] = [];
  for (const p of pages) {
    let content = '';
    let xobject = '';
    if (p.image) {
      const data = deflateSync(p.image.pixels);
      const image = add(Buffer.concat([Buffer.from(`<< /Type /XObject /Subtype /Image /Width ${p.image.width} /Height ${p.image.height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')]));
      xobject = ` /XObject << /Im1 ${image} 0 R >>`;
      const [w, h] = displayedSize(p);
      // The unit square's bottom-left corner at the displayed page's bottom-left, its top edge at the top.
      content += `q ${matrixAt(p, 0, h, w, h).map(num).join(' ')} cm /Im1 Do Q\n`;
    }
    for (const l of p.lines ?? []) content += `BT /F1 1 Tf ${matrixAt(p, l.x, l.y, l.size, l.size).map(num).join(' ')} Tm (${l.text.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj ET\n`;
    const stream = add(`<< /Length ${content.length} >>\nstream\n${content}endstream`);
    const box = (b: Box) => `[${b.join(' ')}]`;
    kids.push(add(`<< /Type /Page /Parent 2 0 R /MediaBox ${box(p.mediaBox)}${p.cropBox ? ` /CropBox ${box(p.cropBox)}` : ''}${p.rotate ? ` /Rotate ${p.rotate}` : ''}${p.userUnit ? ` /UserUnit ${p.userUnit}` : ''} /Resources << /Font << /F1 ${font} 0 R >>${xobject} >> /Contents ${stream} 0 R >>`));
  }
  objects[0] = Buffer.from('<< /Type /Catalog /Pages 2 0 R >>');
  objects[1] = Buffer.from(`<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`);
  const parts: Buffer[] = [Buffer.from('%PDF-1.6\n')];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(offset);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(chunk);
    offset += chunk.length;
  });
  parts.push(Buffer.from(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return new Uint8Array(Buffer.concat(parts));
}

/** A heading, two paragraphs and a two-column list of figures, each line's text naming its page. */
function pageLines(tag: string): Line[] {
  return [
    { text: `Section ${tag} overview`, x: 60, y: 110, size: 20 },
    { text: `The ${tag} survey counted birds along the ridge`, x: 60, y: 150, size: 11 },
    { text: `and recorded the ${tag} weather every morning`, x: 60, y: 164, size: 11 },
    { text: `before the volunteers walked the ${tag} transect.`, x: 60, y: 178, size: 11 },
    { text: `A second ${tag} paragraph follows after a gap`, x: 60, y: 230, size: 11 },
    { text: `and closes the ${tag} page with one more line.`, x: 60, y: 244, size: 11 },
  ];
}

const PAGES: BoxedPage[] = [
  { mediaBox: [0, 0, 595, 842], lines: pageLines('plain') },
  { mediaBox: [100, 200, 712, 992], cropBox: [130, 250, 690, 950], lines: pageLines('offset') },
  { mediaBox: [0, 0, 612, 792], rotate: 90, lines: pageLines('quarter') },
  { mediaBox: [-300, -400, 312, 392], rotate: 270, lines: pageLines('threequarter') },
  { mediaBox: [0, 0, 595, 842], cropBox: [20, 30, 575, 812], rotate: 180, lines: pageLines('upsidedown') },
  { mediaBox: [0, 0, 300, 400], userUnit: 2, lines: pageLines('doubleunit') },
];

// ---- mupdf's own structured text, read here -------------------------------------------------

interface StextLine { page: number; text: string; box: Box }

const unescape = (s: string) => s.replace(/&(amp|lt|gt|quot|apos|#x[0-9a-f]+|#[0-9]+);/gi, (_, e: string) => (
  e[0] === '#' ? String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)) : ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[e]!));

/** Each line mupdf reads, with the box of its visible characters, from `mutool draw -F stext`. */
async function stextLines(pdf: Uint8Array): Promise<{ lines: StextLine[]; sizes: [number, number][] }> {
  await writeFile(path.join(scratch, 'stext-in.pdf'), pdf);
  const xml = (await tool('mutool', ['draw', '-q', '-F', 'stext', '-o', '-', 'stext-in.pdf'])).toString('utf8');
  const lines: StextLine[] = [];
  const sizes: [number, number][] = [];
  xml.split('<page ').slice(1).forEach((pageXml, index) => {
    const size = /width="([\d.]+)" height="([\d.]+)"/.exec(pageXml)!;
    sizes.push([Number(size[1]), Number(size[2])]);
    for (const lineXml of pageXml.split('<line ').slice(1)) {
      let text = '';
      let box: Box | undefined;
      for (const m of lineXml.split('</line>')[0]!.matchAll(/<char quad="([^"]+)"[^>]* c="([^"]*)"/g)) {
        const c = unescape(m[2]!);
        text += c;
        if (!c.trim()) continue;
        const q = m[1]!.split(' ').map(Number);
        const xs = [q[0]!, q[2]!, q[4]!, q[6]!], ys = [q[1]!, q[3]!, q[5]!, q[7]!];
        const b: Box = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
        box = box ? [Math.min(box[0], b[0]), Math.min(box[1], b[1]), Math.max(box[2], b[2]), Math.max(box[3], b[3])] : b;
      }
      if (box && text.trim()) lines.push({ page: index + 1, text: text.replace(/\s+/g, ' ').trim(), box });
    }
  });
  return { lines, sizes };
}

/** The boxes of the images mupdf draws, from its trace device (`mutool draw -F trace`): each image's unit square through its transform. */
async function tracedImages(pdf: Uint8Array): Promise<{ page: number; box: Box }[]> {
  await writeFile(path.join(scratch, 'trace-in.pdf'), pdf);
  const xml = (await tool('mutool', ['draw', '-q', '-F', 'trace', '-o', '-', 'trace-in.pdf'])).toString('utf8');
  return xml.split(/<page\b/).slice(1).flatMap((pageXml, index) => [...pageXml.matchAll(/<fill_image [^>]*transform="([^"]+)"/g)].map((m) => {
    const [a, b, c, d, e, f] = m[1]!.split(' ').map(Number) as [number, number, number, number, number, number];
    const xs = [e, a + e, c + e, a + c + e], ys = [f, b + f, d + f, b + d + f];
    return { page: index + 1, box: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)] as Box };
  }));
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
const within = (inner: Box, outer: Box, tolerance: number) => inner[0] >= outer[0] - tolerance && inner[1] >= outer[1] - tolerance
  && inner[2] <= outer[2] + tolerance && inner[3] <= outer[3] + tolerance;
const near = (a: Box, b: Box, tolerance: number) => a.every((v, k) => Math.abs(v - b[k]!) <= tolerance);
const union = (boxes: Box[]): Box =>
  boxes.reduce((a, b) => [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])]);

/**
 * Checks an answer against mupdf's lines: each line of text belongs to the one block on its page
 * whose text holds it; each box of a block (its own, and those of its further pieces) is the
 * union of the boxes of the lines inside it, to TOLERANCE_PT (a ruled table's box is its grid:
 * it holds its lines); every line falls in a box of its block. Returns what is wrong.
 */
function compareWithStext(answer: Answer, lines: StextLine[]): { problems: string[]; matched: number } {
  const problems: string[] = [];
  const assigned = new Map<DocBlock, StextLine[]>();
  let matched = 0;
  for (const line of lines) {
    const onPage = answer.blocks.filter((b) => b.page === line.page || b.continued?.some((c) => c.page === line.page));
    const textOf = (b: DocBlock) => norm(`${b.marker ?? ''} ${b.text}`);
    let found = onPage.filter((b) => textOf(b).includes(line.text));
    if (found.length > 1) found = found.filter((b) => norm(b.text) === line.text || textOf(b) === line.text);
    // A list marker mupdf reads as a line of its own belongs to the item it marks.
    if (!found.length) found = onPage.filter((b) => b.marker === line.text && within(line.box, b.bbox, TOLERANCE_PT));
    if (found.length !== 1) { problems.push(`page ${line.page}: "${line.text}" is in ${found.length} blocks`); continue; }
    matched++;
    assigned.set(found[0]!, [...assigned.get(found[0]!) ?? [], line]);
  }
  for (const [block, own] of assigned) {
    const pieces = [{ page: block.page, bbox: block.bbox }, ...block.continued ?? []];
    for (const line of own) {
      if (!pieces.some((p) => p.page === line.page && within(line.box, p.bbox, TOLERANCE_PT))) problems.push(`page ${line.page}: "${line.text}" at ${line.box} is outside ${block.kind} ${JSON.stringify(pieces)}`);
    }
    for (const piece of pieces) {
      const inside = own.filter((l) => l.page === piece.page && within(l.box, piece.bbox, TOLERANCE_PT));
      if (!inside.length) { problems.push(`${block.kind} "${block.text.slice(0, 30)}": no line of it at ${piece.bbox}`); continue; }
      const drawn = union(inside.map((l) => l.box));
      const ruledGrid = block.kind === 'table' && !near(drawn, piece.bbox, TOLERANCE_PT) && within(drawn, piece.bbox, 0);
      if (!near(drawn, piece.bbox, TOLERANCE_PT) && !ruledGrid) problems.push(`${block.kind} "${block.text.slice(0, 30)}" on page ${piece.page}: box ${piece.bbox}, its lines at ${drawn}`);
    }
  }
  return { problems, matched };
}

const REPORT_CSS = `
  @page { size: A4; margin: 2.2cm 2cm;
    @top-center { content: "Confidential Draft Memo"; font: 9pt "DejaVu Sans"; }
    @bottom-center { content: counter(page); font: 9pt "DejaVu Sans"; } }
  body { font: 11pt/1.4 "DejaVu Serif"; }
  h1 { font-size: 24pt; } h2 { font-size: 18pt; }
  pre { font-family: "DejaVu Sans Mono"; font-size: 10pt; }
  table.ruled { border-collapse: collapse; } table.ruled td, table.ruled th { border: 1px solid black; padding: 3pt 8pt; }
  table.plain td, table.plain th { border: none; padding: 2pt 14pt 2pt 0; text-align: left; }
  .columns { columns: 2; column-gap: 1cm; }
  img { width: 160pt; height: 90pt; }
`;
/** Sentences that differ from one another, so each printed line of them is found in one place. */
const numbered = (tag: string, count: number) => `${Array.from({ length: count }, (_, i) => `the ${tag}${i} note on ${tag}${i} rows lists ${tag}${i} facts for ${tag}${i}`).join(', ')}.`;
const LOREM = 'The committee reviewed each submission against the published criteria and recorded its reasons in the minutes for later reference by all members';

async function redSquare(): Promise<string> {
  const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#c02020' } }).png().toBuffer();
  return `data:image/png;base64,${png.toString('base64')}`;
}

async function reportPdf(): Promise<Uint8Array> {
  return weasy(`<!doctype html><html><head><meta charset="utf-8"><style>${REPORT_CSS}</style></head><body>
<h1>Annual Field Report</h1>
<p>This report summarises the season. Read it <b>carefully</b> before the <i>next</i> meeting.</p>
<h2>Survey Results</h2>
<ul><li>Fruit<ul><li>Apple</li><li>Pear</li></ul></li><li>Vegetables</li></ul>
<table class="ruled"><tr><th>Site</th><th>Samples</th><th>Share</th></tr>
<tr><td>North ridge</td><td>120</td><td>40%</td></tr><tr><td>South valley</td><td>95</td><td>32%</td></tr><tr><td>Lake shore</td><td>84</td><td>28%</td></tr></table>
<p>The counts below use no rules at all.</p>
<table class="plain"><tr><th>Month</th><th>Rain</th><th>Sun</th></tr>
<tr><td>March</td><td>41</td><td>150</td></tr><tr><td>April</td><td>38</td><td>171</td></tr><tr><td>May</td><td>22</td><td>204</td></tr></table>
<img src="${await redSquare()}">
<p>Figure 1: The survey area drawn as a red square.</p>
<pre>def tally(rows):
    return sum(rows)</pre>
<h2 style="break-before: page">Discussion</h2>
<div class="columns">
<p>Alpha paragraph opens the left column: ${numbered('left', 24)}</p>
<p>Omega paragraph closes the right column: ${numbered('right', 4)}</p>
</div>
</body></html>`);
}

describe('block boxes against mupdf\'s structured text', () => {
  it('a typeset report: every kind of block, header and footer, a figure, a paragraph across two columns', { timeout: 60_000 }, async () => {
    const pdf = await reportPdf();
    const answer = await blocksOf(pdf);
    const kinds = answer.blocks.map((b) => b.kind);
    expect(kinds).to.include(['header', 'footer', 'heading', 'paragraph', 'list_item', 'table', 'figure', 'caption', 'code']);
    expect(answer.blocks.filter((b) => b.kind === 'heading').map((b) => [b.text, b.level])).to.equal([['Annual Field Report', 1], ['Survey Results', 2], ['Discussion', 2]]);
    expect(answer.blocks.filter((b) => b.kind === 'header').map((b) => [b.page, b.text])).to.equal([[1, 'Confidential Draft Memo'], [2, 'Confidential Draft Memo']]);
    expect(answer.blocks.filter((b) => b.kind === 'footer').map((b) => [b.page, b.text])).to.equal([[1, '1'], [2, '2']]);
    // Reading order: a page's header first and its footer last; the figure before its caption.
    expect(kinds[0]).to.equal('header');
    expect(kinds.indexOf('caption')).to.equal(kinds.indexOf('figure') + 1);
    const { lines, sizes } = await stextLines(pdf);
    const images = await tracedImages(pdf);
    expect(answer.pages.map((p) => [p.width, p.height])).to.equal(sizes.map(([w, h]) => [Number(w.toFixed(2)), Number(h.toFixed(2))]));
    const { problems, matched } = compareWithStext(answer, lines);
    expect(problems).to.equal([]);
    expect(matched).to.equal(lines.length);
    // The two-column text is one paragraph read down the left column and on in the right one.
    const across = answer.blocks.find((b) => b.text.startsWith('Omega'))!;
    expect(answer.blocks.find((b) => b.text.startsWith('Alpha'))!.continued ?? across.continued).to.exist();
    // The figure is the drawn image, where mupdf places it.
    const figure = answer.blocks.find((b) => b.kind === 'figure')!;
    expect(images.some((i) => i.page === figure.page && near(i.box, figure.bbox, TOLERANCE_PT))).to.be.true();
  });

  it('pages with a non-zero-origin MediaBox and CropBox, rotated 90, 180 and 270 degrees, and a UserUnit of 2', { timeout: 60_000 }, async () => {
    const pdf = boxedPdf(PAGES);
    const answer = await blocksOf(pdf);
    expect(answer.pages.map((p) => [p.width, p.height])).to.equal(PAGES.map(displayedSize));
    const { lines } = await stextLines(pdf);
    const { problems, matched } = compareWithStext(answer, lines);
    expect(problems).to.equal([]);
    expect(matched).to.equal(lines.length);
    // Where the text was put: each block starts at its first line's x, above its first baseline,
    // and ends a little below its last baseline, on every page.
    PAGES.forEach((page, index) => {
      const own = answer.blocks.filter((b) => b.page === index + 1);
      expect(own.map((b) => b.kind)).to.equal(['heading', 'paragraph', 'paragraph']);
      for (const block of own) {
        const lines = page.lines!.filter((l) => norm(block.text).includes(l.text));
        const first = lines[0]!, last = lines[lines.length - 1]!;
        expect(Math.abs(block.bbox[0] - first.x), `${block.text}: ${block.bbox}`).to.be.at.most(1);
        expect(block.bbox[1], block.text).to.be.below(first.y - first.size * 0.5);
        expect(block.bbox[3], block.text).to.be.above(last.y);
        expect(block.bbox[3] - last.y, block.text).to.be.below(last.size * 0.5);
      }
    });
    expect(answer.blocks.filter((b) => b.kind === 'heading').length).to.equal(PAGES.length);
  });

  it('scans of those pages, read by tesseract, have the boxes of the text layer', { timeout: 180_000 }, async () => {
    const original = await blocksOf(boxedPdf(PAGES));
    const scans: BoxedPage[] = [];
    for (const [index, page] of PAGES.entries()) {
      // The page as displayed, drawn at 200 dpi in grey, then put back upright on a page with the same boxes, rotation and unit.
      await writeFile(path.join(scratch, 'page.pdf'), boxedPdf([page]));
      await tool('mutool', ['draw', '-q', '-r', '200', '-c', 'gray', '-o', `scan-${index}.png`, 'page.pdf', '1']);
      const { data, info } = await sharp(path.join(scratch, `scan-${index}.png`)).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
      scans.push({ ...page, lines: [], image: { pixels: data, width: info.width, height: info.height } });
    }
    const read = await blocksOf(boxedPdf(scans), {}, true);
    expect(read.pages.map((p) => p.read)).to.equal(PAGES.map(() => 'ocr'));
    const words = (s: string) => new Set(s.toLowerCase().split(/[^a-z]+/).filter((w) => w.length > 2));
    let compared = 0;
    for (const block of original.blocks) {
      const mine = words(block.text);
      const sharesMostWords = (b: DocBlock) => [...words(b.text)].filter((w) => mine.has(w)).length >= mine.size * 0.7;
      const twin = read.blocks.filter((b) => b.page === block.page).find(sharesMostWords);
      expect(twin, `page ${block.page}: ${block.text}`).to.exist();
      // The same left and right edges; the ink inside the glyph boxes (the font's ascent to its
      // descent) and filling most of their height.
      const [a, b] = [twin!.bbox, block.bbox];
      const what = `page ${block.page} "${block.text.slice(0, 30)}": OCR ${a}, text layer ${b}`;
      expect(Math.abs(a[0] - b[0]) <= OCR_TOLERANCE_PT && Math.abs(a[2] - b[2]) <= OCR_TOLERANCE_PT, what).to.be.true();
      expect(a[1] >= b[1] - TOLERANCE_PT && a[3] <= b[3] + TOLERANCE_PT && a[3] - a[1] >= (b[3] - b[1]) * 0.5, what).to.be.true();
      compared++;
    }
    expect(compared).to.equal(PAGES.length * 3);
  });
});

describe('tables and chunks', () => {
  it('a table carries its rows and cells, each with its box; a table across a page break is one, its rows on both pages', { timeout: 60_000 }, async () => {
    const rows = Array.from({ length: 60 }, (_, i) => `<tr><td>Plot ${i + 1}</td><td>${(i * 37) % 101}</td><td>${['oak', 'ash', 'elm'][i % 3]}</td></tr>`).join('');
    const pdf = await weasy(`<!doctype html><html><head><meta charset="utf-8"><style>${REPORT_CSS}</style></head><body>
<h1>Plots</h1><p>${LOREM}.</p><p>${LOREM}.</p><p>${LOREM}.</p>
<table class="ruled"><tr><th>Plot</th><th>Trees</th><th>Kind</th></tr>${rows}</table></body></html>`);
    const answer = await blocksOf(pdf);
    const tables = answer.blocks.filter((b) => b.kind === 'table');
    expect(tables).to.have.length(1);
    const table = tables[0]!;
    expect(table.rows!.map((r) => r.cells.map((c) => c.text))).to.equal([['Plot', 'Trees', 'Kind'], ...Array.from({ length: 60 }, (_, i) => [`Plot ${i + 1}`, String((i * 37) % 101), ['oak', 'ash', 'elm'][i % 3]!])]);
    expect(table.text.split('\n')[1]).to.equal('Plot 1\t0\toak');
    expect(table.continued!.length).to.be.above(0);
    expect(new Set(table.rows!.map((r) => r.page))).to.equal(new Set([table.page, ...table.continued!.map((c) => c.page)]));
    expect(table.page).to.equal(1);
    const pieces = [{ page: table.page, bbox: table.bbox }, ...table.continued!];
    table.rows!.forEach((row, k) => {
      expect(pieces.some((p) => p.page === row.page && within(row.bbox, p.bbox, 0.01)), `row ${k}`).to.be.true();
      for (const cell of row.cells) expect(within(cell.bbox!, row.bbox, 0.01), `row ${k} ${cell.text}`).to.be.true();
      const before = table.rows![k - 1];
      if (before?.page === row.page) expect(row.bbox[1]).to.be.at.least(before.bbox[3] - 0.01);
    });
    const { lines } = await stextLines(pdf);
    // Each cell's text is drawn inside its cell.
    for (const row of table.rows!) for (const cell of row.cells) {
      const line = lines.find((l) => l.page === row.page && l.text === cell.text && within(l.box, cell.bbox!, TOLERANCE_PT));
      expect(line, `${cell.text} on page ${row.page}`).to.exist();
    }
  });

  it('chunks never pass chunk_chars and never cut a table row; a row longer than the limit is a chunk of its own, marked oversized', { timeout: 60_000 }, async () => {
    const limit = 300;
    const longCell = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    const rows = Array.from({ length: 30 }, (_, i) => `<tr><td>Plot ${i + 1}</td><td>${i === 12 ? longCell : `${(i * 37) % 101} trees`}</td></tr>`).join('');
    const sentences = Array.from({ length: 12 }, (_, i) => `Sentence ${i + 1} of the long paragraph says something about the ridge.`).join(' ');
    const code = Array.from({ length: 30 }, (_, i) => `total_${i} = compute(${i})`).join('\n');
    const pdf = await weasy(`<!doctype html><html><head><meta charset="utf-8"><style>${REPORT_CSS}</style></head><body>
<h1>Long Report</h1><p>${sentences}</p><p>A short paragraph.</p>
<table class="ruled"><tr><th>Plot</th><th>Count</th></tr>${rows}</table>
<pre>${code}</pre><p>The end of the report.</p></body></html>`);
    const answer = await blocksOf(pdf, { chunk_chars: String(limit) });
    const chunks = answer.chunks!;
    expect(chunks.length).to.be.above(5);
    const over = chunks.filter((c) => charCount(c.text) > limit || charCount(c.markdown) > limit);
    expect(over.every((c) => c.oversized)).to.be.true();
    expect(chunks.filter((c) => c.oversized)).to.have.length(1);
    expect(chunks.find((c) => c.oversized)!.text).to.equal(`Plot 13\t${longCell}`);
    // Every table row is whole in one chunk (the header row repeated in each piece of the table).
    const table = answer.blocks.find((b) => b.kind === 'table')!;
    const tableIndex = answer.blocks.indexOf(table);
    for (const row of table.text.split('\n')) expect(chunks.some((c) => c.text.split('\n').includes(row)), row).to.be.true();
    const tableChunks = chunks.filter((c) => c.blocks.includes(tableIndex));
    expect(tableChunks.length).to.be.above(2);
    for (const c of tableChunks.filter((t) => !t.oversized)) expect(c.text.split('\n\n').some((part) => part.startsWith('Plot\tCount'))).to.be.true();
    // A chunk holding only table rows has, on each page, the box of those rows.
    const tableOnly = tableChunks.filter((c) => c.blocks.length === 1);
    expect(tableOnly.length).to.be.above(1);
    for (const c of tableOnly) {
      const lines = c.text.split('\n');
      const rows = table.rows!.filter((r) => lines.includes(r.cells.map((cell) => cell.text).join('\t')));
      const pages = [...new Set(rows.map((r) => r.page))].sort((x, y) => x - y);
      expect(c.boxes.map((b) => b.page)).to.equal(pages);
      for (const b of c.boxes) expect(near(b.bbox, union(rows.filter((r) => r.page === b.page).map((r) => r.bbox)), 0.01)).to.be.true();
    }
    // The long paragraph is cut at sentence ends, and nothing of it is lost.
    const paragraph = answer.blocks.findIndex((b) => b.text.startsWith('Sentence 1 '));
    const parts = chunks.filter((c) => c.blocks.includes(paragraph)).map((c) => c.text.split('\n\n').find((p) => p.startsWith('Sentence'))!);
    expect(parts.length).to.be.above(1);
    for (const p of parts) expect(p).to.match(/ridge\.$/);
    expect(parts.join(' ')).to.equal(sentences);
    // The code (two blocks: a page break cuts it) is cut between lines.
    const codeParts = chunks.flatMap((c) => c.markdown.split('\n\n').filter((p) => p.startsWith('```')));
    expect(codeParts.length).to.be.above(2);
    expect(codeParts.map((p) => p.split('\n').slice(1, -1).join('\n')).join('\n')).to.equal(code);
    // Every chunk lists the pages of its boxes; every block's words come through in order.
    for (const c of chunks) expect(c.pages).to.equal([...new Set(c.boxes.map((b) => b.page))].sort((a, b) => a - b));
    const words = (s: string) => s.split(/\s+/).filter(Boolean);
    const all = words(chunks.map((c) => c.text).join(' '));
    let at = 0;
    for (const w of words(answer.blocks.map((b) => b.text).join(' '))) {
      while (at < all.length && all[at] !== w) at++;
      expect(at, w).to.be.below(all.length);
      at++;
    }
  });

  it('without chunk_chars there are no chunks; a scanned document without OCR is refused, uncharged work', async () => {
    const answer = await blocksOf(boxedPdf([PAGES[0]!]));
    expect(answer.chunks).to.be.undefined();
    const blank = boxedPdf([{ mediaBox: [0, 0, 200, 200], image: { pixels: Buffer.alloc(100 * 100, 255), width: 100, height: 100 } }]);
    const outcome = await runOperation('pdf.blocks', [blank], {});
    expect(outcome.error).to.include({ code: 'NO_CONTENT', status: 422 });
  });
});

describe('the hostile corpus', () => {
  it('the pdf.js robustness corpus and the sample files: no 5xx, every answer fits the declared schema', { timeout: 900_000 }, async () => {
    const dirs = [path.join(corpus, 'robustness'), ...(await readdir(path.join(corpus, 'sample-files'))).filter((d) => /^\d{3}-/.test(d)).map((d) => path.join(corpus, 'sample-files', d))];
    const files: string[] = [];
    for (const dir of dirs) for (const name of (await readdir(dir)).filter((n) => n.toLowerCase().endsWith('.pdf')).sort()) files.push(path.join(dir, name));
    const problems: string[] = [];
    let answered = 0, refused = 0;
    for (const file of files) {
      const name = path.relative(corpus, file);
      const { output, error } = await runOperation('pdf.blocks', [new Uint8Array(await readFile(file))], { chunk_chars: 1000 }, { timeoutMs: 60_000 });
      if (error) {
        if (error.status < 400 || error.status >= 500) problems.push(`${name}: ${error.code} ${error.message}`);
        refused++;
        continue;
      }
      const answer = JSON.parse(Buffer.from(output!.body).toString('utf8')) as Answer;
      if (!validAnswer(answer)) problems.push(`${name}: ${ajv.errorsText(validAnswer.errors)}`);
      const boxes = [...answer.blocks.map((b) => b.bbox), ...answer.chunks!.flatMap((c) => c.boxes.map((b) => b.bbox))];
      if (boxes.some((b) => !b.every(Number.isFinite) || b[0] > b[2] || b[1] > b[3])) problems.push(`${name}: a box that is not a box`);
      if (answer.chunks!.some((c) => !c.oversized && (charCount(c.text) > 1000 || charCount(c.markdown) > 1000))) problems.push(`${name}: a chunk over the limit`);
      answered++;
    }
    console.log(`\n  blocks on the corpus: ${answered} files answered, ${refused} refused with a 4xx`);
    expect(problems).to.equal([]);
    expect(answered).to.be.at.least(100);
  });
});

describe('blocks paid over HTTP on the local Base chain, and over MCP', () => {
  let t: TestService;
  let pdf: Uint8Array;
  before(async () => { t = await startTestService(); pdf = await reportPdf(); });
  after(async () => { await t?.stop(); });

  it('HTTP: charged 0.02 USD per page, the blocks and chunks as JSON', { timeout: 60_000 }, async () => {
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const res = await payFetch(`${t.url}/v1/pdf/blocks`, { method: 'POST', body: form([{ bytes: pdf, name: 'a.pdf' }], { chunk_chars: 500 }) });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('application/json');
    const answer = await res.json() as Answer;
    expect(answer.pageCount).to.equal(2);
    expect(answer.blocks.find((b) => b.kind === 'heading')!.text).to.equal('Annual Field Report');
    expect(answer.chunks!.every((c) => charCount(c.markdown) <= 500)).to.be.true();
    const charged = await balancesOf(t.evm);
    expect(before.payer - charged.payer).to.equal(2n * PAGE_RATE);
    expect(charged.payTo - before.payTo).to.equal(2n * PAGE_RATE);
  });

  it('MCP: svc_pdf_blocks returns the same JSON as structured content', { timeout: 60_000 }, async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const args = { file: { data: Buffer.from(pdf).toString('base64') } };
      const unpaid = await client.callTool({ name: 'svc_pdf_blocks', arguments: args }) as { structuredContent?: Record<string, unknown> };
      const quote = unpaid.structuredContent as unknown as PaymentRequired;
      expect(quote.accepts[0]!.amount).to.equal(String(2n * PAGE_RATE));
      const before = await balancesOf(t.evm);
      const paid = await client.callTool({ name: 'svc_pdf_blocks', arguments: args, _meta: { 'x402/payment': await signOnBase(quote, t.evm.payerKey) } }) as {
        isError?: boolean; structuredContent?: Answer;
      };
      expect(paid.isError).to.not.equal(true);
      expect(validAnswer(paid.structuredContent)).to.be.true();
      expect(paid.structuredContent!.blocks.map((b) => b.kind)).to.include(['table', 'figure', 'footer']);
      expect(paid.structuredContent!.chunks).to.be.undefined();
      const charged = await balancesOf(t.evm);
      expect(charged.payTo - before.payTo).to.equal(2n * PAGE_RATE);
    } finally {
      await client.close();
    }
  });
});

// /v1/pdf/stamp: page numbers, Bates numbers, watermarks and image stamps, read back by other
// readers: poppler's words with their boxes (pdftotext -bbox), pdf.js's text items (through unpdf,
// which the pdf2md peer brings), MuPDF's text, and pixels drawn by mutool and by pdftoppm. Paid
// over HTTP (the image as a second part) and MCP (the image as { data }) on the local Base chain.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { makePdf, textPages } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { tool, withFile } from '../../support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';
import { letPdfjsRunOnNode20 } from '../../support/pdfjs-on-node20.js';
import { STAMP_MARGIN_PT } from '../../../tools/engines/stamp-text.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

// pdf.js (a test reader only) leaves these globals behind.
after(() => {
  for (const name of ['DOMMatrix', 'pdfjsWorker', '_pdfjsTestingUtils', 'pdfjsLib']) delete (globalThis as Record<string, unknown>)[name];
});

/** Two A4 pages and a third turned 90 degrees (shown landscape). */
const threePages = () => makePdf([...textPages(2), { text: 'Rotated page', rotate: 90 }]);

interface Word { text: string; xMin: number; yMin: number; xMax: number; yMax: number }

/** Poppler's words per page, in points from the top-left corner of the page as displayed. */
async function popplerWords(pdf: Uint8Array): Promise<Word[][]> {
  const { out } = await withFile(pdf, 'pdf', (file) => tool('pdftotext', ['-bbox', file, '-']));
  return out.split('<page ').slice(1).map((page) => [...page.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)]
    .map((m) => ({ text: m[5], xMin: Number(m[1]), yMin: Number(m[2]), xMax: Number(m[3]), yMax: Number(m[4]) })));
}

/** The box around the words that `pick` chooses on one page, and their text. */
function lineBox(words: Word[], pick: (w: Word) => boolean): Word {
  const run = words.filter(pick);
  expect(run.length).to.be.above(0);
  return {
    text: run.map((w) => w.text).join(' '), xMin: Math.min(...run.map((w) => w.xMin)), yMin: Math.min(...run.map((w) => w.yMin)),
    xMax: Math.max(...run.map((w) => w.xMax)), yMax: Math.max(...run.map((w) => w.yMax)),
  };
}

/** pdf.js's text items per page: the string and its text matrix. */
async function pdfjsItems(pdf: Uint8Array): Promise<Array<Array<{ str: string; transform: number[] }>>> {
  letPdfjsRunOnNode20();
  const { getDocumentProxy } = await import('unpdf');
  const doc = await getDocumentProxy(new Uint8Array(pdf));
  const pages = [];
  for (let i = 1; i <= doc.numPages; i++) {
    const content = await (await doc.getPage(i)).getTextContent();
    pages.push((content.items as Array<{ str?: string; transform?: number[] }>).filter((item) => item.str?.trim())
      .map((item) => ({ str: item.str!, transform: item.transform! })));
  }
  await doc.destroy();
  return pages;
}

async function mupdfText(pdf: Uint8Array): Promise<string> {
  return (await withFile(pdf, 'pdf', (file) => tool('mutool', ['draw', '-q', '-F', 'txt', '-o', '-', file]))).out;
}

interface Raster { width: number; height: number; pixel(x: number, y: number): [number, number, number] }

/** One page drawn at 72 dpi (a pixel per point) by MuPDF or by poppler. */
async function render(pdf: Uint8Array, page: number, by: 'mutool' | 'pdftoppm' = 'mutool'): Promise<Raster> {
  const png = await withFile(pdf, 'pdf', async (file, dir) => {
    const out = path.join(dir, 'page.png');
    if (by === 'mutool') await tool('mutool', ['draw', '-q', '-r', '72', '-o', out, file, String(page)], dir);
    else await tool('pdftoppm', ['-r', '72', '-png', '-singlefile', '-f', String(page), '-l', String(page), file, path.join(dir, 'page')], dir);
    return readFile(out);
  });
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width, height: info.height,
    pixel: (x, y) => {
      const at = (Math.round(y) * info.width + Math.round(x)) * 3;
      return [data[at], data[at + 1], data[at + 2]];
    },
  };
}

/** Pixels of a region whose colour is near `rgb` (each channel within 40). */
function countNear(raster: Raster, rgb: [number, number, number], region: { x0: number; y0: number; x1: number; y1: number }): number {
  let n = 0;
  for (let y = region.y0; y < region.y1; y++) {
    for (let x = region.x0; x < region.x1; x++) {
      const p = raster.pixel(x, y);
      if (p.every((c, i) => Math.abs(c - rgb[i]) <= 40)) n++;
    }
  }
  return n;
}

/** A page drawn in raw PDF content, rewritten by qpdf (which writes the cross-reference table). */
async function rawPage(content: string, boxes: string): Promise<Uint8Array> {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R ${boxes} /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>`,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const raw = Buffer.from(`%PDF-1.7\n${objects.map((o, i) => `${i + 1} 0 obj\n${o}\nendobj\n`).join('')}trailer\n<< /Root 1 0 R /Size 6 >>\n%%EOF\n`, 'latin1');
  return withFile(raw, 'pdf', async (file, dir) => {
    await tool('qpdf', [file, path.join(dir, 'fixed.pdf')], dir);
    return new Uint8Array(await readFile(path.join(dir, 'fixed.pdf')));
  });
}

async function stamp(pdf: Uint8Array, fields: Record<string, string | number>, image?: Uint8Array): Promise<Uint8Array> {
  const { output, error } = await runOperation('pdf.stamp', [pdf], fields, image ? { namedFile: image } : {});
  expect(error, error?.message).to.not.exist();
  return output!.body;
}

/** 80 x 40 pixels: the left half opaque red, the right half transparent. */
const halfRedPng = () => sharp({ create: { width: 80, height: 40, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
  .composite([{ input: { create: { width: 40, height: 40, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } }, left: 0, top: 0 }])
  .png().toBuffer();

const near = (value: number, expected: number, tolerance = 1.5) => expect(Math.abs(value - expected), `${value} vs ${expected}`).to.be.at.most(tolerance);

describe('stamping text', () => {
  it('"Page {n} of {total}" at the bottom, centred on each page as displayed (the turned page too); all three readers read it', async () => {
    const out = await stamp(threePages(), { text: 'Page {n} of {total}', position: 'bottom' });
    const pages = await popplerWords(out);
    // Page 3 is shown landscape: 842 x 595 points.
    const displayed = [[595, 842], [595, 842], [842, 595]];
    for (const [i, words] of pages.entries()) {
      const [width, height] = displayed[i];
      // The stamp's words are the ones in the bottom tenth of the page.
      const line = lineBox(words, (w) => w.yMin > height * 0.9);
      expect(line.text).to.equal(`Page ${i + 1} of 3`);
      near((line.xMin + line.xMax) / 2, width / 2);
      near(line.yMax, height - STAMP_MARGIN_PT, 2.5);
    }
    const items = await pdfjsItems(out);
    expect(items.map((page) => page.map((item) => item.str).filter((s) => s.includes(' of ')))).to.equal([['Page 1 of 3'], ['Page 2 of 3'], ['Page 3 of 3']]);
    // pdf.js: upright on the turned page means the text runs along the page's y axis.
    const turned = items[2].find((item) => item.str === 'Page 3 of 3')!.transform;
    expect([turned[0], turned[1], turned[2], turned[3]]).to.equal([0, 12, -12, 0]);
    const mupdf = await mupdfText(out);
    for (const n of [1, 2, 3]) expect(mupdf).to.contain(`Page ${n} of 3`);
    // The page's own text is still there.
    expect(items[0].map((item) => item.str)).to.include('The quick brown fox jumps over the lazy dog.');
  });

  it('Bates numbers: "ACME-{n}" with digits 6 from start 41 at the bottom right, 24 points from both edges', async () => {
    const out = await stamp(threePages(), { text: 'ACME-{n}', digits: 6, start: 41, position: 'bottom-right', font_size: 10 });
    const pages = await popplerWords(out);
    expect(pages.map((words) => words.filter((w) => w.text.startsWith('ACME-')).map((w) => w.text))).to.equal([['ACME-000041'], ['ACME-000042'], ['ACME-000043']]);
    const word = pages[0].find((w) => w.text === 'ACME-000041')!;
    near(word.xMax, 595 - STAMP_MARGIN_PT);
    near(word.yMax, 842 - STAMP_MARGIN_PT, 2.5);
  });

  it('pages "2,z" stamps only those pages; the others are unchanged', async () => {
    const out = await stamp(threePages(), { text: 'Only here', pages: '2,z', position: 'top-left' });
    const pages = await popplerWords(out);
    expect(pages.map((words) => words.some((w) => w.text === 'here'))).to.equal([false, true, true]);
    const word = lineBox(pages[1], (w) => w.text === 'Only' || w.text === 'here');
    near(word.xMin, STAMP_MARGIN_PT);
    near(word.yMin, STAMP_MARGIN_PT, 3);
  });

  it('positions are on the crop box as displayed, not on the media box', async () => {
    const pdf = await rawPage('BT /F1 12 Tf 150 300 Td (Inside) Tj ET', '/MediaBox [0 0 600 800] /CropBox [100 100 400 500]');
    const out = await stamp(pdf, { text: 'Corner', position: 'top-right' });
    const [words] = await popplerWords(out);
    const word = words.find((w) => w.text === 'Corner')!;
    // pdftotext gives boxes on the media box: the crop box's top-right corner is at (400, 300) from its top-left.
    near(word.xMax, 400 - STAMP_MARGIN_PT);
    near(word.yMin, 300 + STAMP_MARGIN_PT, 3);
    // MuPDF draws it in the same corner of the 300 x 400 page.
    const drawn = await render(out, 1);
    expect([drawn.width, drawn.height]).to.equal([300, 400]);
    expect(countNear(drawn, [0, 0, 0], { x0: 200, y0: 20, x1: 280, y1: 40 })).to.be.above(20);
  });

  it('a watermark at 45 degrees and opacity 0.3: pale red over the page, hidden under an opaque area with layer=under; pdf.js reads it turned', async () => {
    // The top half of the page painted black, a line of text in the bottom half.
    const pdf = await rawPage('0 0 0 rg 0 421 595 421 re f BT /F1 12 Tf 56 100 Td (Body text) Tj ET', '/MediaBox [0 0 595 842]');
    const fields = { text: 'CONFIDENTIAL', font_size: 60, rotation: 45, opacity: 0.3, color: '#ff0000' };
    const over = await stamp(pdf, { ...fields, layer: 'over' });
    const under = await stamp(pdf, { ...fields, layer: 'under' });
    const top = { x0: 100, y0: 200, x1: 495, y1: 421 };
    const bottom = { x0: 100, y0: 421, x1: 495, y1: 640 };
    // Red at 0.3 over white is (255, 179, 179); over black, (77, 0, 0).
    for (const by of ['mutool', 'pdftoppm'] as const) {
      const drawnOver = await render(over, 1, by);
      expect(countNear(drawnOver, [255, 179, 179], bottom), by).to.be.above(1000);
      expect(countNear(drawnOver, [77, 0, 0], top), by).to.be.above(1000);
      const drawnUnder = await render(under, 1, by);
      expect(countNear(drawnUnder, [255, 179, 179], bottom), by).to.be.above(1000);
      expect(countNear(drawnUnder, [77, 0, 0], top), by).to.equal(0);
    }
    const [items] = await pdfjsItems(under);
    const mark = items.find((item) => item.str === 'CONFIDENTIAL')!;
    expect(mark.transform[0]).to.be.about(60 * Math.SQRT1_2, 0.01);
    expect(mark.transform[1]).to.be.about(60 * Math.SQRT1_2, 0.01);
    expect(items.map((item) => item.str)).to.include('Body text');
  });

  it('MuPDF and poppler draw a stamped page alike', async () => {
    const out = await stamp(threePages(), { text: 'DRAFT {n}/{total}', font_size: 48, rotation: 30, opacity: 0.5, color: '#0055aa' });
    for (const page of [1, 3]) {
      const [a, b] = [await render(out, page, 'mutool'), await render(out, page, 'pdftoppm')];
      expect([a.width, a.height]).to.equal([b.width, b.height]);
      let differing = 0;
      for (let y = 0; y < a.height; y += 2) {
        for (let x = 0; x < a.width; x += 2) if (a.pixel(x, y).some((c, i) => Math.abs(c - b.pixel(x, y)[i]) > 96)) differing++;
      }
      // Anti-aliased glyph edges differ; the stamp and the page do not.
      expect(differing / ((a.width * a.height) / 4), `page ${page}`).to.be.below(0.01);
      expect(countNear(a, [128, 170, 213], { x0: 0, y0: 0, x1: a.width, y1: a.height }), `page ${page}`).to.be.above(500);
    }
  });
});

describe('stamping an image', () => {
  it('a PNG keeps its transparency: at its size at 96 dpi in the top-left corner, red where it is opaque, the page where it is not', async () => {
    const out = await stamp(threePages(), { position: 'top-left' }, await halfRedPng());
    // 80 x 40 pixels at 96 dpi are 60 x 30 points.
    for (const by of ['mutool', 'pdftoppm'] as const) {
      const drawn = await render(out, 1, by);
      const margin = STAMP_MARGIN_PT;
      const red = countNear(drawn, [255, 0, 0], { x0: margin + 2, y0: margin + 2, x1: margin + 28, y1: margin + 28 });
      const white = countNear(drawn, [255, 255, 255], { x0: margin + 32, y0: margin + 2, x1: margin + 58, y1: margin + 28 });
      expect(red, by).to.equal(26 * 26);
      expect(white, by).to.equal(26 * 26);
      expect(countNear(drawn, [255, 0, 0], { x0: STAMP_MARGIN_PT + 62, y0: 0, x1: 595, y1: 842 }), by).to.equal(0);
    }
    const list = (await withFile(out, 'pdf', (file) => tool('pdfimages', ['-list', file]))).out;
    expect(list).to.match(/^\s+1\s+0\s+image\s+80\s+40\s+(rgb|icc)\s+3\s/m);
    expect(list).to.match(/^\s+1\s+1\s+smask\s+80\s+40\s+gray/m);
    // One image object, drawn on every page.
    expect(new Set([...list.matchAll(/^\s+\d+\s+\d+\s+image\s+.*?\s(\d+)\s+0\s+\d+\s+\d+\s/gm)].map((m) => m[1])).size).to.equal(1);
  });

  it('a JPEG is embedded as it is, at image_width points, turned with rotation, at the bottom right', async () => {
    const blue = { r: 0, g: 0, b: 255 };
    const jpeg = await sharp({ create: { width: 200, height: 100, channels: 3, background: blue } }).jpeg({ quality: 90 }).toBuffer();
    const out = await stamp(threePages(), { position: 'bottom-right', image_width: 100, rotation: 90, pages: '1' }, jpeg);
    const drawn = await render(out, 1);
    // Turned a quarter, the 100 x 50 point image stands 50 wide and 100 high in the corner.
    const right = 595 - STAMP_MARGIN_PT;
    const lower = 842 - STAMP_MARGIN_PT;
    expect(countNear(drawn, [0, 0, 255], { x0: right - 48, y0: lower - 98, x1: right - 2, y1: lower - 2 })).to.equal(46 * 96);
    expect(countNear(drawn, [0, 0, 255], { x0: right - 100, y0: lower - 98, x1: right - 54, y1: lower - 2 })).to.equal(0);
    const extracted = await withFile(out, 'pdf', async (file, dir) => {
      await tool('mutool', ['extract', file], dir);
      const name = (await import('node:fs')).readdirSync(dir).find((n) => n.endsWith('.jpg'));
      return name ? new Uint8Array(await readFile(path.join(dir, name))) : undefined;
    });
    expect(Buffer.compare(Buffer.from(extracted!), jpeg)).to.equal(0);
  });
});

describe('stamping paid over HTTP on the local Base chain, and over MCP', () => {
  let t: TestService;
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('HTTP: pages "1" of a 3-page PDF, with an image part, is charged for all 3 pages (15000)', async () => {
    const pdf = threePages();
    const body = () => {
      const f = form([{ bytes: pdf, name: 'a.pdf' }], { pages: '1', position: 'top-left' });
      f.append('image', new Blob([new Uint8Array(png)]), 'logo.png');
      return f;
    };
    const png = await halfRedPng();
    const quote = await fetch(`${t.url}/v1/pdf/stamp`, { method: 'POST', body: body() });
    expect(quote.status).to.equal(402);
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const res = await payFetch(`${t.url}/v1/pdf/stamp`, { method: 'POST', body: body() });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    const out = new Uint8Array(await res.arrayBuffer());
    const list = (await withFile(out, 'pdf', (file) => tool('pdfimages', ['-list', file]))).out;
    expect(list).to.match(/^\s+1\s+0\s+image\s+80\s+40\s/m);
    expect(list).to.not.match(/^\s+2\s+\d+\s+image/m);
    const charged = await balancesOf(t.evm);
    expect(before.payer - charged.payer).to.equal(15000n);
    expect(charged.payTo - before.payTo).to.equal(15000n);
  });

  it('MCP: the image as { data }, text refused beside it; a text stamp paid and read back', async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const file = { data: Buffer.from(threePages()).toString('base64') };
      const both = await client.callTool({ name: 'svc_pdf_stamp', arguments: { file, text: 'x', image: { data: (await halfRedPng()).toString('base64') } } }) as { isError?: boolean; content: Array<{ text?: string }> };
      expect(both.isError).to.equal(true);
      expect(JSON.stringify(both.content)).to.contain('FIELD_INVALID').and.to.contain('not both');
      const args = { file, text: 'Page {n} of {total}', position: 'bottom', opacity: 0.8, font_size: 9 };
      const unpaid = await client.callTool({ name: 'svc_pdf_stamp', arguments: args }) as { structuredContent?: Record<string, unknown> };
      const quote = unpaid.structuredContent as unknown as PaymentRequired;
      expect(quote.accepts[0].amount).to.equal('15000');
      const before = await balancesOf(t.evm);
      const paid = await client.callTool({ name: 'svc_pdf_stamp', arguments: args, _meta: { 'x402/payment': await signOnBase(quote, t.evm.payerKey) } }) as {
        isError?: boolean; content: Array<{ type: string; resource?: { blob?: string } }>;
      };
      expect(paid.isError).to.not.equal(true);
      const blob = paid.content.find((c) => c.type === 'resource')!.resource!.blob!;
      expect(await mupdfText(Buffer.from(blob, 'base64'))).to.contain('Page 2 of 3');
      const after = await balancesOf(t.evm);
      expect(before.payer - after.payer).to.equal(15000n);
    } finally {
      await client.close();
    }
  });
});

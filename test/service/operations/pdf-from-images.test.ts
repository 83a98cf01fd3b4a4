// /v1/pdf/from-images: images to one PDF, read back by other readers: pages drawn by poppler
// (pdftoppm) and MuPDF (mutool) compared pixel by pixel with the inputs as sharp decodes them,
// page sizes from pdfinfo, the JPEG's image stream from qpdf. Paid over HTTP and MCP on the local
// Base chain, with the balances read.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { runOperation } from '../../support/jobs.js';
import { poppler, tool, withFile } from '../../support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';
import { runTool } from '../../../tools/process/run-tool.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const QUADRANTS: Array<[number, number, number]> = [[220, 30, 30], [30, 180, 40], [30, 60, 220], [240, 210, 30]];

/**
 * An upright picture of width x height: red, green, blue and yellow quadrants (top-left, top-right,
 * bottom-left, bottom-right), raw RGB.
 */
function quadrants(width: number, height: number): Buffer {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const colour = QUADRANTS[(y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)];
      raw.set(colour, (y * width + x) * 3);
    }
  }
  return raw;
}

const picture = (width: number, height: number) => sharp(quadrants(width, height), { raw: { width, height, channels: 3 } });

/** The input as sharp shows it: upright, flattened on white, raw RGB. */
async function decoded(bytes: Uint8Array): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(bytes).autoOrient().flatten({ background: '#ffffff' }).toColourspace('srgb').removeAlpha().raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** One page drawn at `dpi` by poppler or MuPDF, raw RGB. */
async function render(pdf: Uint8Array, page: number, dpi: number, by: 'pdftoppm' | 'mutool' = 'pdftoppm'): Promise<{ data: Buffer; width: number; height: number }> {
  const png = await withFile(pdf, 'pdf', async (file, dir) => {
    const out = path.join(dir, 'page.png');
    if (by === 'mutool') await tool('mutool', ['draw', '-q', '-r', String(dpi), '-o', out, file, String(page)], dir);
    else await tool('pdftoppm', ['-r', String(dpi), '-png', '-singlefile', '-f', String(page), '-l', String(page), file, path.join(dir, 'page')], dir);
    return readFile(out);
  });
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** The mean absolute difference per channel of two pictures of the same size. */
function meanDifference(a: { data: Buffer; width: number; height: number }, b: { data: Buffer; width: number; height: number }): number {
  expect([a.width, a.height]).to.equal([b.width, b.height]);
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i] - b.data[i]);
  return sum / a.data.length;
}

interface RawPicture { data: Buffer; width: number; height: number }

/** The share of pixels where a channel differs by more than `by`. */
function differingShare(a: RawPicture, b: RawPicture, by: number): number {
  let n = 0;
  for (let i = 0; i < a.data.length; i += 3) {
    if ([0, 1, 2].some((c) => Math.abs(a.data[i + c] - b.data[i + c]) > by)) n++;
  }
  return n / (a.width * a.height);
}

/** Page sizes in points, as pdfinfo reads them. */
async function pageSizes(pdf: Uint8Array): Promise<Array<[number, number]>> {
  const info = await poppler('pdfinfo', pdf, '-f', '1', '-l', '1000');
  return [...info.matchAll(/^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts/gm)].map((m) => [Number(m[1]), Number(m[2])]);
}

/** The box of pixels that are not white on a rendered page: left, top, right, bottom (exclusive). */
function inkBox(page: { data: Buffer; width: number; height: number }): [number, number, number, number] {
  let [left, top, right, bottom] = [page.width, page.height, 0, 0];
  for (let y = 0; y < page.height; y++) {
    for (let x = 0; x < page.width; x++) {
      const at = (y * page.width + x) * 3;
      if (page.data[at] < 200 || page.data[at + 1] < 200 || page.data[at + 2] < 200) {
        left = Math.min(left, x); top = Math.min(top, y); right = Math.max(right, x + 1); bottom = Math.max(bottom, y + 1);
      }
    }
  }
  return [left, top, right, bottom];
}

async function fromImages(images: readonly Uint8Array[], fields: Record<string, string | number> = {}): Promise<Uint8Array> {
  const { output, error } = await runOperation('pdf.from-images', images, fields);
  expect(error, error?.message).to.not.exist();
  expect(output!.mediaType).to.equal('application/pdf');
  return output!.body;
}

/** The raw stream data of every image XObject, read by qpdf. */
async function imageStreams(pdf: Uint8Array): Promise<Array<{ filter: string; bytes: Buffer }>> {
  return withFile(pdf, 'pdf', async (file) => {
    const json = JSON.parse((await tool('qpdf', ['--json', '--json-key=qpdf', file])).out) as { qpdf: [unknown, Record<string, { stream?: { dict: Record<string, unknown> } }>] };
    const images = Object.entries(json.qpdf[1]).filter(([, o]) => o.stream?.dict['/Subtype'] === '/Image');
    const out = [];
    for (const [key, o] of images) {
      const id = /^obj:(\d+) 0 R$/.exec(key)![1];
      const raw = await runTool('qpdf', [`--show-object=${id}`, '--raw-stream-data', file], { timeoutMs: 60_000 });
      out.push({ filter: String(o.stream!.dict['/Filter']), bytes: Buffer.from(raw.stdout) });
    }
    return out;
  });
}

/** The eight dihedral turns of a picture, by sharp: each rotation, mirrored or not. */
async function turns(bytes: Buffer): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const angle of [0, 90, 180, 270]) {
    for (const flop of [false, true]) out.push(await sharp(bytes).rotate(angle).flop(flop).png().toBuffer());
  }
  return out;
}

/**
 * A JPEG whose stored pixels, turned as EXIF orientation `orientation` says, show `upright`: the
 * stored picture is the one of the eight turns that sharp stands upright under that orientation.
 */
async function jpegWithOrientation(upright: Buffer, orientation: number): Promise<Buffer> {
  const target = await decoded(upright);
  for (const turned of await turns(upright)) {
    const jpeg = await sharp(turned).jpeg({ quality: 100, chromaSubsampling: '4:4:4' }).withMetadata({ orientation }).toBuffer();
    const shown = await decoded(jpeg);
    if (shown.width === target.width && shown.height === target.height && meanDifference(shown, target) < 4) return jpeg;
  }
  throw new Error(`no stored picture shows upright under orientation ${orientation}`);
}

describe('images to PDF: pixels, orientation, bytes', () => {
  it('each of the eight EXIF orientations is shown upright, a page each in order, the page the upright size at 96 dpi', async () => {
    const upright = await picture(120, 80).png().toBuffer();
    const jpegs = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((o) => jpegWithOrientation(upright, o)));
    for (const [i, jpeg] of jpegs.entries()) expect((await sharp(jpeg).metadata()).orientation, `orientation ${i + 1}`).to.equal(i + 1);
    const pdf = await fromImages(jpegs);
    // 120 x 80 pixels at 96 dpi are 90 x 60 points, for every orientation (5 to 8 are stored 80 x 120).
    expect(await pageSizes(pdf)).to.equal(Array.from({ length: 8 }, () => [90, 60]));
    const expected = await decoded(upright);
    for (let page = 1; page <= 8; page++) {
      expect(meanDifference(await render(pdf, page, 96), expected), `orientation ${page}, poppler`).to.be.below(6);
      expect(meanDifference(await render(pdf, page, 96, 'mutool'), expected), `orientation ${page}, MuPDF`).to.be.below(6);
    }
  });

  it('a JPEG is embedded byte for byte (DCTDecode, never re-encoded); PNG, lossless WebP, AVIF and TIFF pages match their inputs', async () => {
    const jpeg = await picture(128, 96).jpeg({ quality: 80 }).toBuffer();
    const png = await sharp({ create: { width: 128, height: 96, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .composite([{ input: await picture(64, 96).png().toBuffer(), left: 0, top: 0 }]).png().toBuffer();
    const webp = await picture(128, 96).webp({ lossless: true }).toBuffer();
    const avif = await picture(128, 96).avif({ lossless: true }).toBuffer();
    const tiff = await picture(128, 96).tiff().toBuffer();
    const inputs = [jpeg, png, webp, avif, tiff];
    const pdf = await fromImages(inputs);
    const streams = await imageStreams(pdf);
    const dct = streams.filter((s) => s.filter === '/DCTDecode');
    expect(dct.length).to.equal(1);
    expect(Buffer.compare(dct[0].bytes, jpeg)).to.equal(0);
    for (const [i, input] of inputs.entries()) {
      const expected = await decoded(input);
      for (const by of ['pdftoppm', 'mutool'] as const) {
        const drawn = await render(pdf, i + 1, 96, by);
        // Other decoders than sharp's read the JPEG; the readers smooth the edges between colours (and the PNG's
        // transparent half, drawn white) over a row or two; everywhere else the lossless pages match their inputs.
        expect(meanDifference(drawn, expected), `page ${i + 1}, ${by}`).to.be.below(6);
        if (i > 0) expect(differingShare(drawn, expected, 24), `page ${i + 1}, ${by}`).to.be.below(0.06);
      }
    }
  });

  it('a CMYK JPEG (Adobe, inverted) is kept as it is and shows its colours, not their inverse', async () => {
    const cmyk = await picture(64, 48).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer();
    expect((await sharp(cmyk).metadata()).space).to.equal('cmyk');
    const pdf = await fromImages([cmyk]);
    const [stream] = await imageStreams(pdf);
    expect(Buffer.compare(stream.bytes, cmyk)).to.equal(0);
    for (const by of ['pdftoppm', 'mutool'] as const) {
      const drawn = await render(pdf, 1, 96, by);
      for (const [q, colour] of QUADRANTS.entries()) {
        const x = q % 2 === 0 ? 16 : 48;
        const y = q < 2 ? 12 : 36;
        const at = (y * 64 + x) * 3;
        const pixel = [drawn.data[at], drawn.data[at + 1], drawn.data[at + 2]];
        const distance = (to: number[]) => Math.hypot(...pixel.map((c, i) => c - to[i]));
        // Readers convert CMYK each their own way; each quadrant is near its colour and far from its inverse.
        expect(distance(colour), `${by}, quadrant ${q}: ${pixel.join(',')}`).to.be.below(110);
        expect(distance(colour), `${by}, quadrant ${q}`).to.be.below(distance(colour.map((c) => 255 - c)) / 2);
      }
    }
  });
});

describe('images to PDF: page sizes and margins', () => {
  it('fit: the image\'s own resolution (300 dpi JPEG, 150 dpi PNG), 96 dpi when it states none; margins added on every side', async () => {
    const at300 = await picture(600, 300).jpeg().withMetadata({ density: 300 }).toBuffer();
    const at150 = await picture(300, 150).png().withMetadata({ density: 150 }).toBuffer();
    const none = await picture(120, 80).png().toBuffer();
    expect((await sharp(none).metadata()).density).to.not.exist();
    expect(await pageSizes(await fromImages([at300, at150, none]))).to.equal([[144, 72], [144, 72], [90, 60]]);
    const margin = (10 * 72) / 25.4;
    const sizes = await pageSizes(await fromImages([none], { margin_mm: 10 }));
    expect(sizes[0][0]).to.be.about(90 + 2 * margin, 0.01);
    expect(sizes[0][1]).to.be.about(60 + 2 * margin, 0.01);
    const page = await render(await fromImages([none], { margin_mm: 10 }), 1, 96);
    // 10 mm are 37.8 pixels at 96 dpi: the image's edge falls within a pixel of it.
    const m = (10 / 25.4) * 96;
    inkBox(page).forEach((v, i) => expect(Math.abs(v - [m, m, m + 120, m + 80][i]), `side ${i}`).to.be.at.most(1));
  });

  it('a4 with 20 mm margins: a landscape image scaled to the width inside the margins, centred; letter: a tall image to the height', async () => {
    const wide = await picture(120, 80).png().toBuffer();
    const tall = await picture(80, 160).png().toBuffer();
    const a4 = await fromImages([wide], { page_size: 'a4', margin_mm: 20 });
    const [[w, h]] = await pageSizes(a4);
    expect(w).to.be.about(595.28, 0.01);
    expect(h).to.be.about(841.89, 0.01);
    // At 72 dpi: the image is 595.28 - 2 x 56.69 = 481.89 points wide and 321.26 high, centred.
    const margin = (20 * 72) / 25.4;
    const box = inkBox(await render(a4, 1, 72));
    const want = [margin, (841.89 - 321.26) / 2, 595.28 - margin, (841.89 + 321.26) / 2];
    box.forEach((v, i) => expect(Math.abs(v - want[i]), `side ${i}: ${box.join(',')}`).to.be.at.most(1.5));
    const letter = await fromImages([tall], { page_size: 'letter' });
    expect(await pageSizes(letter)).to.equal([[612, 792]]);
    // 80 x 160 pixels fill the 792-point height: 396 points wide, centred at 108.
    const drawn = await render(letter, 1, 72);
    const tallBox = inkBox(drawn);
    [108, 0, 504, 792].forEach((v, i) => expect(Math.abs(tallBox[i] - v), `side ${i}: ${tallBox.join(',')}`).to.be.at.most(1.5));
    // Scaled, the picture is still the picture: compare it with the input scaled by sharp to the drawn size.
    const crop = await sharp(drawn.data, { raw: { width: drawn.width, height: drawn.height, channels: 3 } })
      .extract({ left: 110, top: 2, width: 392, height: 788 }).raw().toBuffer({ resolveWithObject: true });
    const scaled = await sharp(tall).resize(396, 792, { kernel: 'nearest' }).extract({ left: 2, top: 2, width: 392, height: 788 }).removeAlpha().raw()
      .toBuffer({ resolveWithObject: true });
    expect(meanDifference({ data: crop.data, width: 392, height: 788 }, { data: scaled.data, width: 392, height: 788 })).to.be.below(4);
  });
});

describe('images to PDF paid over HTTP on the local Base chain, and over MCP', () => {
  let t: TestService;
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('HTTP: a JPEG, a PNG and a TIFF, in order, charged 0.005 USD per image (15000)', async () => {
    const jpeg = await picture(64, 48).jpeg().toBuffer();
    const png = await picture(48, 64).png().toBuffer();
    const tiff = await picture(32, 32).tiff().toBuffer();
    const body = () => form([{ bytes: jpeg, name: 'a.jpg' }, { bytes: png, name: 'b.png' }, { bytes: tiff, name: 'c.tif' }], { page_size: 'fit' });
    const quote = await fetch(`${t.url}/v1/pdf/from-images`, { method: 'POST', body: body() });
    expect(quote.status).to.equal(402);
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const res = await payFetch(`${t.url}/v1/pdf/from-images`, { method: 'POST', body: body() });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    const out = new Uint8Array(await res.arrayBuffer());
    expect(await pageSizes(out)).to.equal([[48, 36], [36, 48], [24, 24]]);
    const charged = await balancesOf(t.evm);
    expect(before.payer - charged.payer).to.equal(15000n);
    expect(charged.payTo - before.payTo).to.equal(15000n);
  });

  it('MCP: files as [{ data }, { data }], quoted 10000 and paid; a4 pages come back', async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const files = [await picture(64, 48).jpeg().toBuffer(), await picture(64, 48).webp().toBuffer()].map((b) => ({ data: b.toString('base64') }));
      const args = { files, page_size: 'a4', margin_mm: 15 };
      const unpaid = await client.callTool({ name: 'svc_pdf_from_images', arguments: args }) as { structuredContent?: Record<string, unknown> };
      const quote = unpaid.structuredContent as unknown as PaymentRequired;
      expect(quote.accepts[0].amount).to.equal('10000');
      const before = await balancesOf(t.evm);
      const paid = await client.callTool({ name: 'svc_pdf_from_images', arguments: args, _meta: { 'x402/payment': await signOnBase(quote, t.evm.payerKey) } }) as {
        isError?: boolean; content: Array<{ type: string; resource?: { blob?: string } }>;
      };
      expect(paid.isError).to.not.equal(true);
      const blob = paid.content.find((c) => c.type === 'resource')!.resource!.blob!;
      const sizes = await pageSizes(Buffer.from(blob, 'base64'));
      expect(sizes.length).to.equal(2);
      for (const [w, h] of sizes) { expect(w).to.be.about(595.28, 0.01); expect(h).to.be.about(841.89, 0.01); }
      const after = await balancesOf(t.evm);
      expect(before.payer - after.payer).to.equal(10000n);
    } finally {
      await client.close();
    }
  });
});

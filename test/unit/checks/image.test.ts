// checks/image.ts: the header check that runs before payment. It reads an image's format and
// upright size from its first bytes without decoding it, refuses a declared size over the limit at
// once, a damaged header as CORRUPT_INPUT, and GIF, animations and other types by name; damage that
// only decoding shows fails the job, after the check, with the same code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import zlib from 'node:zlib';
import sharp, { type TiffOptions } from 'sharp';
import { inspectPageImage } from '../../../checks/image.js';
import { FORMATS, W, H, run, failure, pngChunks, pngChunk, PNG_SIGNATURE, pngHeaderOnly, inspectImage, pictureFixtures, type ImageFormat } from '../../support/image-fixtures.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

let fixtures: Record<ImageFormat, Buffer>;
before(async () => {
  ({ files: fixtures } = await pictureFixtures());
});

describe('inspectImage', () => {
  const refusal = async (bytes: Uint8Array) => {
    const err = await failure(inspectImage(bytes));
    return { code: err.code, status: err.status, message: err.message };
  };

  it('reports format and upright size from the bytes, whatever the file was called', async () => {
    for (const format of FORMATS) expect(await inspectImage(fixtures[format])).to.equal({ format, width: W, height: H });
  });

  it('refuses a tiny file declaring 100000 x 100000 pixels in milliseconds', async () => {
    for (const bytes of [
      pngHeaderOnly(100_000, 100_000),
      Buffer.concat([pngHeaderOnly(100_000, 100_000), pngChunk('IDAT', zlib.deflateSync(Buffer.alloc(64))), pngChunk('IEND', Buffer.alloc(0))]),
    ]) {
      const started = performance.now();
      const result = await refusal(bytes);
      expect(performance.now() - started).to.be.below(50);
      expect(result.code).to.equal('LIMIT_EXCEEDED');
      expect(result.status).to.equal(413);
      expect(result.message).to.contain('100000 x 100000');
      expect(result.message).to.contain('40 megapixels');
    }
    // The same through a JPEG frame header and a WebP canvas header.
    const jpeg = Buffer.from(fixtures.jpeg);
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    jpeg.writeUInt16BE(60_000, sof + 5);
    jpeg.writeUInt16BE(60_000, sof + 7);
    expect((await refusal(jpeg)).code).to.equal('LIMIT_EXCEEDED');
    const webp = await sharp(fixtures.png).webp().withExif({ IFD0: { Artist: 'x' } }).toBuffer();
    expect(webp.toString('latin1', 12, 16)).to.equal('VP8X');
    webp.writeUIntLE(16_382, 24, 3);
    webp.writeUIntLE(16_382, 27, 3);
    expect((await refusal(webp)).code).to.equal('LIMIT_EXCEEDED');
  });

  it('refuses a file cut short or damaged in its header with CORRUPT_INPUT', async () => {
    for (const format of FORMATS) {
      const cut = fixtures[format].subarray(0, Math.floor(fixtures[format].length * 0.7));
      expect(await refusal(cut)).to.include({ code: 'CORRUPT_INPUT', status: 422 });
      expect((await refusal(fixtures[format].subarray(0, 24))).code).to.equal('CORRUPT_INPUT');
    }
    const garbled = Buffer.from(fixtures.png);
    garbled[24] = 7; // bit depth 7 does not exist
    garbled[25] = 5; // nor does colour type 5
    expect((await refusal(garbled)).code).to.equal('CORRUPT_INPUT');
  });

  it('fails the job with CORRUPT_INPUT when only decoding shows the damage', async () => {
    // Chunk structure intact (so inspection passes), compressed pixel data destroyed.
    const chunks = pngChunks(fixtures.png);
    const idat = Buffer.concat(chunks.get('IDAT') ?? []);
    const broken = Buffer.concat([
      PNG_SIGNATURE, pngChunk('IHDR', (chunks.get('IHDR') ?? [])[0]),
      pngChunk('IDAT', Buffer.concat([idat.subarray(0, 40), Buffer.alloc(idat.length - 40, 0xa5)])), pngChunk('IEND', Buffer.alloc(0)),
    ]);
    expect(await inspectImage(broken)).to.equal({ format: 'png', width: W, height: H });
    const err = await failure(run('compress', broken));
    expect([err.code, err.status]).to.equal(['CORRUPT_INPUT', 422]);
  });

  it('answers GIF and animated images with 501, other types with 422 naming them', async () => {
    const base = () => sharp({ create: { width: 16, height: 16, channels: 3, background: '#123456' } });
    const gif = await refusal(await base().gif().toBuffer());
    expect([gif.code, gif.status]).to.equal(['NOT_IMPLEMENTED', 501]);
    expect(gif.message).to.contain('GIF');

    const frames = Buffer.alloc(16 * 32 * 3, 90).fill(200, 16 * 16 * 3);
    const animatedWebp = await sharp(frames, { raw: { width: 16, height: 32, channels: 3, pageHeight: 16 } }).webp({ loop: 0 }).toBuffer();
    expect((await refusal(animatedWebp)).status).to.equal(501);

    const bmp = Buffer.alloc(58);
    bmp.write('BM', 0, 'latin1');
    const named: Array<[Uint8Array, string]> = [
      [await base().tiff().toBuffer(), 'TIFF'],
      // HEIC (HEVC in the HEIF container): this libvips decodes AVIF only.
      [Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypheic\0\0\0\0mif1heic', 'latin1'), Buffer.alloc(64)]), 'HEIC'],
      [bmp, 'BMP'],
      [Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'), 'SVG'],
      [Buffer.from('%PDF-1.7\n'), 'PDF'],
      [Buffer.from('just some text in a file called photo.jpg'), 'not an image'],
      [Buffer.alloc(0), 'empty'],
    ];
    for (const [bytes, name] of named) {
      const result = await refusal(bytes);
      expect([result.code, result.status]).to.equal(['UNSUPPORTED_TYPE', 422]);
      expect(result.message).to.contain(name);
    }
  });
});

/** A classic TIFF's first-directory entry `tag` set to `value` (SHORT or LONG, stored in the entry). */
function withTiffTag(tiff: Buffer, tag: number, value: number): Buffer {
  const out = Buffer.from(tiff);
  const little = out[0] === 0x49;
  const u16 = (at: number) => (little ? out.readUInt16LE(at) : out.readUInt16BE(at));
  const ifd = little ? out.readUInt32LE(4) : out.readUInt32BE(4);
  for (let i = 0; i < u16(ifd); i++) {
    const entry = ifd + 2 + i * 12;
    if (u16(entry) !== tag) continue;
    if (u16(entry + 2) === 3) { if (little) out.writeUInt16LE(value, entry + 8); else out.writeUInt16BE(value, entry + 8); }
    else if (little) out.writeUInt32LE(value, entry + 8); else out.writeUInt32BE(value, entry + 8);
    return out;
  }
  throw new Error(`the TIFF has no tag ${tag}`);
}

describe('inspectPageImage (images to PDF: the image formats and TIFF)', () => {
  const refusal = async (bytes: Uint8Array) => {
    const err = await failure(inspectPageImage(bytes));
    return { code: err.code, status: err.status, message: err.message };
  };
  const tiff = (options: TiffOptions = {}) => sharp({ create: { width: 40, height: 30, channels: 3, background: '#123456' } }).tiff(options).toBuffer();

  it('reads a TIFF\'s format, upright size and orientation without decoding; the other formats as inspectImage does', async () => {
    expect(await inspectPageImage(await tiff())).to.include({ format: 'tiff', width: 40, height: 30, orientation: 1 });
    const turned = withTiffTag(await tiff(), 274, 6);
    expect(await inspectPageImage(turned)).to.include({ format: 'tiff', width: 30, height: 40, orientation: 6 });
    expect(await inspectPageImage(fixtures.jpeg)).to.include({ format: 'jpeg', width: W, height: H });
  });

  it('refuses a TIFF declaring 65535 x 65535 pixels, one cut short (strips or tiles), and one of several pages', async () => {
    const huge = withTiffTag(withTiffTag(await tiff(), 256, 65_535), 257, 65_535);
    expect(await refusal(huge)).to.include({ code: 'LIMIT_EXCEEDED', status: 413 });
    expect((await refusal(huge)).message).to.contain('65535 x 65535 pixels');
    for (const options of [{}, { tile: true, tileWidth: 16, tileHeight: 16 }]) {
      const whole = await tiff({ ...options, compression: 'none' });
      const cut = await refusal(whole.subarray(0, 3000));
      expect([cut.code, cut.status], JSON.stringify(options)).to.equal(['CORRUPT_INPUT', 422]);
      expect(cut.message).to.match(/^The TIFF file is cut short/);
    }
    const pages = await sharp([await tiff(), await tiff()], { join: { animated: true } }).tiff().toBuffer();
    expect(await refusal(pages)).to.equal({
      code: 'NOT_IMPLEMENTED', status: 501, message: 'TIFF files holding several pages (2) are not supported yet; send each page as a file of its own',
    });
  });

  it('names TIFF among what it takes when it refuses another type', async () => {
    const bmp = Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)]);
    expect((await refusal(bmp)).message).to.equal('The file is a BMP image; this endpoint accepts JPEG, PNG, WebP, AVIF or TIFF images');
  });
});

// Image transforms and image inspection: what a client gets back (formats, sizes, pixels,
// palettes, stripped metadata) and the exact refusals, with fixtures generated here.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { ServiceError } from '../../../core/errors.js';
import { readImageHeader, type ImageFormat as AcceptedFormat } from '../../../checks/image.js';
import { imageCrop } from '../../../operations/image/crop.js';
import type { JobOutput } from '../../../core/job.js';
import type { OperationId } from '../../../operations/index.js';
import { plannedJob } from '../../support/jobs.js';

/** The formats this file covers; AVIF has its own file (test/service/operations/image-avif.test.ts). */
type ImageFormat = Exclude<AcceptedFormat, 'avif'>;

/** What the pre-payment check reports: the accepted format and the upright size. */
async function inspectImage(bytes: Uint8Array): Promise<{ format: AcceptedFormat; width: number; height: number }> {
  const { format, width, height } = await readImageHeader(bytes);
  return { format, width, height };
}

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const FORMATS: readonly ImageFormat[] = ['jpeg', 'png', 'webp'];
const MEDIA: Record<ImageFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };
const W = 96;
const H = 64;

let jobDir: string;
const fixtures = {} as Record<ImageFormat, Buffer>;
/** The decoded pixels of each fixture (RGB, 8 bits), as sharp decodes them. */
const decoded = {} as Record<ImageFormat, Buffer>;

/** A smooth picture with some detail, every pixel different, so moved pixels are detectable. */
function pictureRaw(width: number, height: number): Buffer {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const i = (y * width + x) * 3;
      raw[i] = Math.round((x * 255) / (width - 1));
      raw[i + 1] = Math.round((y * 255) / (height - 1));
      raw[i + 2] = (x * 7 + y * 13) % 256;
    }
  }
  return raw;
}

async function encodeAs(raw: Buffer, width: number, height: number, format: ImageFormat, quality = 95): Promise<Buffer> {
  const image = sharp(raw, { raw: { width, height, channels: 3 } });
  if (format === 'jpeg') return image.jpeg({ quality, chromaSubsampling: '4:4:4' }).toBuffer();
  if (format === 'webp') return image.webp({ quality }).toBuffer();
  return image.png().toBuffer();
}

type Fields = Record<string, string | number>;

/** Runs the transform as the service does: the checks and plan on the bytes, then the work function. */
async function run(operation: string, bytes: Uint8Array, fields: Fields = {}): Promise<JobOutput> {
  const planned = await plannedJob(`image.${operation}` as OperationId, [bytes], fields, { root: jobDir, timeoutMs: 30_000 });
  return planned.run().finally(() => planned.jobDir.remove());
}

async function rawOf(bytes: Uint8Array): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(bytes).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Pixels moved by hand: (x, y) of the result reads (sx, sy) of the source. */
function remap(source: Buffer, width: number, height: number, outWidth: number, outHeight: number,
  from: (x: number, y: number) => [number, number]): Buffer {
  const out = Buffer.alloc(outWidth * outHeight * 3);
  for (let y = 0; y < outHeight; y += 1) {
    for (let x = 0; x < outWidth; x += 1) {
      const [sx, sy] = from(x, y);
      source.copy(out, (y * outWidth + x) * 3, (sy * width + sx) * 3, (sy * width + sx) * 3 + 3);
    }
  }
  return out;
}

const rotated = (angle: number, src: Buffer, w: number, h: number): Buffer => {
  if (angle === 90) return remap(src, w, h, h, w, (x, y) => [y, h - 1 - x]);
  if (angle === 180) return remap(src, w, h, w, h, (x, y) => [w - 1 - x, h - 1 - y]);
  return remap(src, w, h, h, w, (x, y) => [w - 1 - y, x]);
};
const mirrored = (direction: string, src: Buffer, w: number, h: number): Buffer => (direction === 'horizontal'
  ? remap(src, w, h, w, h, (x, y) => [w - 1 - x, y])
  : remap(src, w, h, w, h, (x, y) => [x, h - 1 - y]));

function maxDifference(a: Buffer, b: Buffer): number {
  expect(a.length).to.equal(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i += 1) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await expect(promise).to.reject();
  expect(err).to.be.an.instanceof(ServiceError);
  return err as ServiceError;
}

/** PNG chunks by type, read from the file itself. */
function pngChunks(bytes: Uint8Array): Map<string, Buffer[]> {
  const buf = Buffer.from(bytes);
  const chunks = new Map<string, Buffer[]>();
  for (let offset = 8; offset + 12 <= buf.length;) {
    const length = buf.readUInt32BE(offset);
    const type = buf.toString('latin1', offset + 4, offset + 8);
    chunks.set(type, [...(chunks.get(type) ?? []), buf.subarray(offset + 8, offset + 8 + length)]);
    offset += 12 + length;
  }
  return chunks;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngHeaderOnly(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr)]);
}

/** Inserts a JPEG comment (COM) segment right after the start-of-image marker. */
function withJpegComment(jpeg: Buffer, text: string): Buffer {
  const body = Buffer.from(text, 'latin1');
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xfffe, 0);
  segment.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), segment, body, jpeg.subarray(2)]);
}

/** Inserts a tEXt comment chunk right after IHDR. */
function withPngComment(png: Buffer, text: string): Buffer {
  const ihdrEnd = 8 + 12 + 13;
  return Buffer.concat([png.subarray(0, ihdrEnd), pngChunk('tEXt', Buffer.from(`Comment\0${text}`, 'latin1')), png.subarray(ihdrEnd)]);
}

before(async () => {
  jobDir = await fs.mkdtemp(path.join(os.tmpdir(), 'image-test-'));
  const raw = pictureRaw(W, H);
  for (const format of FORMATS) {
    fixtures[format] = await encodeAs(raw, W, H, format);
    decoded[format] = (await rawOf(fixtures[format])).data;
  }
});

after(async () => {
  await fs.rm(jobDir, { recursive: true, force: true });
});

describe('image operations on every input and output format', () => {
  const cases: Array<{ operation: string; fields: Fields; width: number; height: number }> = [
    { operation: 'compress', fields: {}, width: W, height: H },
    { operation: 'resize', fields: { width: 40, fit: 'contain' }, width: 40, height: 27 },
    { operation: 'crop', fields: { x: 10, y: 5, width: 30, height: 20 }, width: 30, height: 20 },
    { operation: 'rotate', fields: { angle: 90 }, width: H, height: W },
    { operation: 'flip', fields: { direction: 'horizontal' }, width: W, height: H },
  ];
  for (const { operation, fields, width, height } of cases) {
    it(`${operation}: each input to each output, with the real media type and exact size`, async () => {
      for (const input of FORMATS) {
        for (const output of [undefined, ...FORMATS]) {
          const result = await run(operation, fixtures[input], { ...fields, ...(output ? { format: output } : {}) });
          const expected = output ?? input;
          expect(result.mediaType).to.equal(MEDIA[expected]);
          const metadata = await sharp(result.body).metadata();
          expect(metadata.format).to.equal(expected);
          expect([metadata.width, metadata.height]).to.equal([width, height]);
        }
      }
    });
  }
});

describe('pixels', () => {
  it('crop returns exactly the source rectangle (PNG output)', async () => {
    const rect = { x: 17, y: 9, width: 41, height: 33 };
    for (const input of FORMATS) {
      const result = await run('crop', fixtures[input], { ...rect, format: 'png' });
      const out = await rawOf(result.body);
      const expected = remap(decoded[input], W, H, rect.width, rect.height, (x, y) => [rect.x + x, rect.y + y]);
      expect(out.data.equals(expected)).to.be.true();
    }
  });

  it('rotate moves pixels exactly for a lossless output', async () => {
    for (const input of FORMATS) {
      for (const angle of [90, 180, 270]) {
        const out = await rawOf((await run('rotate', fixtures[input], { angle, format: 'png' })).body);
        expect(out.data.equals(rotated(angle, decoded[input], W, H))).to.be.true();
      }
    }
  });

  it('flip mirrors pixels exactly for a lossless output', async () => {
    for (const input of FORMATS) {
      for (const direction of ['horizontal', 'vertical']) {
        const out = await rawOf((await run('flip', fixtures[input], { direction, format: 'png' })).body);
        expect(out.data.equals(mirrored(direction, decoded[input], W, H))).to.be.true();
      }
    }
  });

  it('keeps 16-bit PNGs at 16 bits and greyscale PNGs grey, pixel for pixel', async () => {
    const deep = new Uint16Array(W * H * 3).map((_, i) => (i * 977) % 65536);
    const png16 = await sharp(deep, { raw: { width: W, height: H, channels: 3 } }).toColourspace('rgb16').png().toBuffer();
    const out = (await run('flip', png16, { direction: 'vertical' })).body;
    expect((await sharp(out).metadata()).depth).to.equal('ushort');
    const read16 = async (bytes: Uint8Array) => sharp(bytes).toColourspace('rgb16').raw({ depth: 'ushort' }).toBuffer();
    const source = await read16(png16);
    const rowBytes = W * 3 * 2;
    const expected = Buffer.concat(Array.from({ length: H }, (_, y) => source.subarray((H - 1 - y) * rowBytes, (H - y) * rowBytes)));
    expect((await read16(out)).equals(expected)).to.be.true();

    const grey = await sharp(pictureRaw(W, H), { raw: { width: W, height: H, channels: 3 } }).toColourspace('b-w').png().toBuffer();
    const greyOut = await sharp((await run('rotate', grey, { angle: 180 })).body).metadata();
    expect([greyOut.channels, greyOut.space]).to.equal([1, 'b-w']);
  });

  it('keeps an RGB ICC profile and the stored pixel values', async () => {
    const p3 = await sharp(pictureRaw(W, H), { raw: { width: W, height: H, channels: 3 } }).withIccProfile('p3').png().toBuffer();
    const out = (await run('rotate', p3, { angle: 180 })).body;
    expect((await sharp(out).metadata()).hasProfile).to.be.true();
    const stored = async (bytes: Uint8Array) => sharp(bytes, { ignoreIcc: true }).raw().toBuffer();
    expect((await stored(out)).equals(rotated(180, await stored(p3), W, H))).to.be.true();
  });

  it('flattens transparency onto white for JPEG output', async () => {
    const transparent = await sharp({ create: { width: 8, height: 8, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
    const out = await rawOf((await run('compress', transparent, { format: 'jpeg' })).body);
    expect(Math.min(...out.data)).to.be.above(250);
  });
});

describe('encoding', () => {
  const chunkSize = (png: Uint8Array, type: string) => (pngChunks(png).get(type) ?? []).reduce((n, c) => n + c.length, 0);

  it('compress makes a palette PNG of at most `colors` entries', async () => {
    // 2, 4, 16 and 256 are PNG bit depths that libvips quantises to; other counts go through pngquant.
    for (const colors of [256, 100, 16, 8, 3, 2]) {
      const out = (await run('compress', fixtures.png, { colors })).body;
      const entries = chunkSize(out, 'PLTE') / 3;
      expect(entries).to.be.above(0);
      expect(entries).to.be.at.most(colors);
      expect((await sharp(out).metadata()).isPalette).to.be.true();
      const { data } = await sharp(out).raw().toBuffer({ resolveWithObject: true });
      const distinct = new Set<number>();
      for (let i = 0; i < data.length; i += 3) distinct.add(data.readUIntBE(i, 3));
      expect(distinct.size).to.be.at.most(colors);
    }
  });

  it('other operations make a palette PNG only when colors was sent', async () => {
    const trueColour = (await run('resize', fixtures.jpeg, { width: 48, format: 'png' })).body;
    expect(chunkSize(trueColour, 'PLTE')).to.equal(0);
    expect((await sharp(trueColour).metadata()).isPalette).to.be.false();
    const palette = (await run('resize', fixtures.jpeg, { width: 48, format: 'png', colors: 8 })).body;
    expect(chunkSize(palette, 'PLTE') / 3).to.be.within(1, 8);
    // Sending the default value is still sending it.
    const sentDefault = (await run('resize', fixtures.jpeg, { width: 48, format: 'png', colors: 256 })).body;
    expect((await sharp(sentDefault).metadata()).isPalette).to.be.true();
  });

  it('a lower quality gives a smaller JPEG and WebP', async () => {
    for (const format of ['jpeg', 'webp'] as const) {
      const high = (await run('compress', fixtures.png, { format, quality: 90 })).body;
      const low = (await run('compress', fixtures.png, { format, quality: 30 })).body;
      expect(low.length).to.be.below(high.length);
    }
  });
});

describe('privacy and orientation', () => {
  const secrets = ['Jane Roe', 'GPS', 'at home in Utrecht', 'dc:creator'];

  async function expectNoMetadata(bytes: Uint8Array): Promise<void> {
    const metadata = await sharp(bytes).metadata();
    expect(metadata.exif).to.not.exist();
    expect(metadata.xmp).to.not.exist();
    expect(metadata.iptc).to.not.exist();
    expect(metadata.comments).to.not.exist();
    const text = Buffer.from(bytes).toString('latin1');
    for (const secret of secrets) expect(text).to.not.contain(secret);
  }

  it('strips EXIF, GPS, XMP and comments from every output', async () => {
    const exif = { IFD0: { Artist: 'Jane Roe', Copyright: 'Jane Roe' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '52/1 5/1 0/1' } };
    const xmp = '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
      + '<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>Jane Roe</dc:creator></rdf:Description></rdf:RDF></x:xmpmeta>';
    const base = () => sharp(pictureRaw(W, H), { raw: { width: W, height: H, channels: 3 } });
    const tagged: Record<ImageFormat, Buffer> = {
      jpeg: withJpegComment(await base().jpeg({ quality: 95 }).withExif(exif).withXmp(xmp).toBuffer(), 'at home in Utrecht'),
      png: withPngComment(await base().png().withExif(exif).withXmp(xmp).toBuffer(), 'at home in Utrecht'),
      webp: await base().webp().withExif(exif).withXmp(xmp).toBuffer(),
    };
    // The fixtures really carry what must be removed.
    expect(Buffer.from(tagged.jpeg).toString('latin1')).to.contain('at home in Utrecht');
    for (const format of FORMATS) expect((await sharp(tagged[format]).metadata()).exif).to.exist();

    for (const input of FORMATS) {
      for (const output of FORMATS) {
        await expectNoMetadata((await run('compress', tagged[input], { format: output })).body);
        await expectNoMetadata((await run('rotate', tagged[input], { angle: 90, format: output })).body);
      }
    }
    // JPEG to JPEG rotate and flip take the lossless path, which must strip too.
    await expectNoMetadata((await run('flip', tagged.jpeg, { direction: 'vertical' })).body);
  });

  it('applies the EXIF orientation before the operation', async () => {
    for (const format of FORMATS) {
      const stored = await sharp(pictureRaw(W, H), { raw: { width: W, height: H, channels: 3 } })
        .toFormat(format, format === 'png' ? {} : { quality: 95 }).withMetadata({ orientation: 6 }).toBuffer();
      const upright = (await rawOf(await sharp(stored).autoOrient().png().toBuffer())).data;
      // Orientation 6 shows the stored picture turned a quarter clockwise: H wide, W high.
      expect((await inspectImage(stored))).to.equal({ format, width: H, height: W });

      const compressed = (await run('compress', stored, { format: 'png', colors: 256 })).body;
      expect([(await sharp(compressed).metadata()).width, (await sharp(compressed).metadata()).height]).to.equal([H, W]);
      expect((await sharp(compressed).metadata()).orientation).to.not.exist();

      const cropped = await rawOf((await run('crop', stored, { x: 0, y: 70, width: 64, height: 26, format: 'png' })).body);
      expect(cropped.data.equals(remap(upright, H, W, 64, 26, (x, y) => [x, 70 + y]))).to.be.true();

      const turned = await rawOf((await run('rotate', stored, { angle: 90, format: 'png' })).body);
      expect(turned.data.equals(rotated(90, upright, H, W))).to.be.true();
      const flipped = await rawOf((await run('flip', stored, { direction: 'vertical', format: 'png' })).body);
      expect(flipped.data.equals(mirrored('vertical', upright, H, W))).to.be.true();

      const error = await failure(run('crop', stored, { x: 0, y: 0, width: 65, height: 10 }));
      expect(error.message).to.equal('the crop reaches past the right edge: x + width = 65 but the image is 64 pixels wide');
    }
  });
});

describe('lossless JPEG rotate and flip', () => {
  it('rotating a quarter turn four times gives back the very same pixels', async () => {
    let bytes: Uint8Array = fixtures.jpeg;
    for (let i = 0; i < 4; i += 1) bytes = (await run('rotate', bytes, { angle: 90 })).body;
    expect((await rawOf(bytes)).data.equals(decoded.jpeg)).to.be.true();
    const twice = (await run('flip', (await run('flip', fixtures.jpeg, { direction: 'horizontal' })).body, { direction: 'horizontal' })).body;
    expect((await rawOf(twice)).data.equals(decoded.jpeg)).to.be.true();
    // A re-encode at the same quality would drift: the lossless path is what keeps it exact.
    let reencoded: Uint8Array = fixtures.jpeg;
    for (let i = 0; i < 4; i += 1) reencoded = (await run('rotate', reencoded, { angle: 90, quality: 89 })).body;
    expect((await rawOf(reencoded)).data.equals(decoded.jpeg)).to.be.false();
  });

  it('a single rotation matches the decoded pixels turned', async () => {
    const once = await rawOf((await run('rotate', fixtures.jpeg, { angle: 270 })).body);
    // The transform works on DCT blocks, so only the decoder's rounding differs (a few levels).
    expect(maxDifference(once.data, rotated(270, decoded.jpeg, W, H))).to.be.at.most(3);
  });

  it('composes the EXIF orientation with the requested transform', async () => {
    for (const orientation of [2, 3, 5, 6, 7, 8]) {
      const stored = await sharp(fixtures.jpeg).jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).withMetadata({ orientation }).toBuffer();
      const upright = await rawOf(await sharp(stored).autoOrient().png().toBuffer());
      const out = await rawOf((await run('rotate', stored, { angle: 90 })).body);
      expect([out.width, out.height]).to.equal([upright.height, upright.width]);
      expect(maxDifference(out.data, rotated(90, upright.data, upright.width, upright.height))).to.be.at.most(3);
      expect((await sharp((await run('rotate', stored, { angle: 90 })).body).metadata()).orientation).to.not.exist();
    }
  });

  it('falls back to a re-encode when the edge blocks are partial or a lower quality is asked', async () => {
    const odd = await encodeAs(pictureRaw(101, 59), 101, 59, 'jpeg');
    const out = (await run('rotate', odd, { angle: 90 })).body;
    expect([(await sharp(out).metadata()).width, (await sharp(out).metadata()).height]).to.equal([59, 101]);
    const lossless = (await run('rotate', fixtures.jpeg, { angle: 90 })).body;
    const smaller = (await run('rotate', fixtures.jpeg, { angle: 90, quality: 40 })).body;
    expect(smaller.length).to.be.below(lossless.length);
  });
});

describe('request checks', () => {
  const header = { format: 'png' as const, width: 1000, height: 800, orientation: 1, space: 'srgb', hasAlpha: false, hasProfile: false };
  type Rectangle = { x: number; y: number; width: number; height: number };
  const planCrop = (fields: Rectangle) => imageCrop.plan({
    fields: { format: undefined, quality: 90, colors: 256, ...fields }, sent: (name) => name in fields,
    files: [{ kind: 'image', bytes: new Uint8Array(), header }], pages: 0, pageBoxes: async () => undefined,
  });

  it('refuses a crop reaching outside the image, naming the edge', async () => {
    const refusal = (fields: Rectangle) => {
      try {
        void planCrop(fields); // the image plans throw synchronously
      } catch (err) {
        return { message: (err as ServiceError).message, field: (err as ServiceError).extra.field, code: (err as ServiceError).code };
      }
      return undefined;
    };
    expect(refusal({ x: 200, y: 0, width: 1000, height: 10 })).to.equal({
      code: 'FIELD_INVALID', field: 'width', message: 'the crop reaches past the right edge: x + width = 1200 but the image is 1000 pixels wide',
    });
    expect(refusal({ x: 0, y: 700, width: 10, height: 101 })).to.equal({
      code: 'FIELD_INVALID', field: 'height', message: 'the crop reaches past the bottom edge: y + height = 801 but the image is 800 pixels high',
    });
    expect(refusal({ x: 1000, y: 0, width: 1, height: 1 })?.field).to.equal('x');
    expect(refusal({ x: 0, y: 800, width: 1, height: 1 })?.field).to.equal('y');
    expect(refusal({ x: 999, y: 799, width: 1, height: 1 })).to.be.undefined();
    const worker = await failure(run('crop', fixtures.png, { x: 90, y: 0, width: 7, height: 1 }));
    expect([worker.code, worker.status]).to.equal(['FIELD_INVALID', 422]);
  });

  it('sizes resizes exactly: one side keeps the aspect ratio, contain fits, cover and fill fill the box', async () => {
    const sizeOf = async (fields: Fields) => {
      const metadata = await sharp((await run('resize', fixtures.png, { format: 'png', ...fields })).body).metadata();
      return [metadata.width, metadata.height];
    };
    expect(await sizeOf({ width: 48 })).to.equal([48, 32]);
    expect(await sizeOf({ height: 16, fit: 'fill' })).to.equal([24, 16]);
    expect(await sizeOf({ width: 48, height: 48, fit: 'contain' })).to.equal([48, 32]);
    expect(await sizeOf({ width: 300, height: 100, fit: 'contain' })).to.equal([150, 100]);
    expect(await sizeOf({ width: 48, height: 48, fit: 'cover' })).to.equal([48, 48]);
    expect(await sizeOf({ width: 10, height: 50, fit: 'fill' })).to.equal([10, 50]);
  });

  it('cover crops the centre', async () => {
    const out = await rawOf((await run('resize', fixtures.png, { width: 64, height: 64, fit: 'cover', format: 'png' })).body);
    // The source is 96 x 64: cover keeps its height and cuts 16 columns off each side.
    const expected = remap(decoded.png, W, H, 64, 64, (x, y) => [16 + x, y]);
    expect(maxDifference(out.data, expected)).to.be.at.most(1);
  });

  it('refuses results over 40 megapixels or too large for the format', async () => {
    const huge = await failure(run('resize', fixtures.png, { width: 16384, height: 16384, fit: 'fill' }));
    expect([huge.code, huge.status]).to.equal(['LIMIT_EXCEEDED', 413]);
    expect(huge.message).to.contain('16384 x 16384');
    const wide = await failure(run('resize', fixtures.png, { width: 16384, height: 100, fit: 'fill', format: 'webp' }));
    expect([wide.code, wide.extra.field]).to.equal(['FIELD_INVALID', 'format']);
  });
});

describe('readImageHeader', () => {
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

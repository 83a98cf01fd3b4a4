// The images the image-operation tests share: a W x H picture whose every pixel differs (so moved
// pixels are detectable) encoded as JPEG, PNG and WebP, the pixels moved by hand to compare with,
// PNG and JPEG files edited chunk by chunk, and `run`, which runs an operation as the service does.
import zlib from 'node:zlib';
import Code from '@hapi/code';
import sharp from 'sharp';
import { ServiceError } from '../../core/errors.js';
import { inspectImage as inspectImageHeader, type ImageFormat as AcceptedFormat } from '../../checks/image.js';
import type { JobOutput } from '../../core/job.js';
import type { OperationId } from '../../operations/index.js';
import { plannedJob } from './jobs.js';

const { expect } = Code;

/** The formats these fixtures come in; AVIF has its own (test/service/operations/image-avif.test.ts). */
export type ImageFormat = Exclude<AcceptedFormat, 'avif'>;

/** What the pre-payment check reports: the accepted format and the upright size. */
export async function inspectImage(bytes: Uint8Array): Promise<{ format: AcceptedFormat; width: number; height: number }> {
  const { format, width, height } = await inspectImageHeader(bytes);
  return { format, width, height };
}

export const FORMATS: readonly ImageFormat[] = ['jpeg', 'png', 'webp'];
export const MEDIA: Record<ImageFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };
export const W = 96;
export const H = 64;

/** A smooth picture with some detail, every pixel different, so moved pixels are detectable. */
export function pictureRaw(width: number, height: number): Buffer {
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

export async function encodeAs(raw: Buffer, width: number, height: number, format: ImageFormat, quality = 95): Promise<Buffer> {
  const image = sharp(raw, { raw: { width, height, channels: 3 } });
  if (format === 'jpeg') return image.jpeg({ quality, chromaSubsampling: '4:4:4' }).toBuffer();
  if (format === 'webp') return image.webp({ quality }).toBuffer();
  return image.png().toBuffer();
}

export type Fields = Record<string, string | number>;

/** Runs the transform as the service does: the checks and plan on the bytes, then the work function. */
export async function run(operation: string, bytes: Uint8Array, fields: Fields = {}): Promise<JobOutput> {
  const planned = await plannedJob(`image.${operation}` as OperationId, [bytes], fields, { timeoutMs: 30_000 });
  return planned.run().finally(() => planned.jobDir.remove());
}

export async function rawOf(bytes: Uint8Array): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(bytes).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Pixels moved by hand: (x, y) of the result reads (sx, sy) of the source. */
export function remap(source: Buffer, width: number, height: number, outWidth: number, outHeight: number,
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

export const rotated = (angle: number, src: Buffer, w: number, h: number): Buffer => {
  if (angle === 90) return remap(src, w, h, h, w, (x, y) => [y, h - 1 - x]);
  if (angle === 180) return remap(src, w, h, w, h, (x, y) => [w - 1 - x, h - 1 - y]);
  return remap(src, w, h, h, w, (x, y) => [w - 1 - y, x]);
};
export const mirrored = (direction: string, src: Buffer, w: number, h: number): Buffer => (direction === 'horizontal'
  ? remap(src, w, h, w, h, (x, y) => [w - 1 - x, y])
  : remap(src, w, h, w, h, (x, y) => [x, h - 1 - y]));

export function maxDifference(a: Buffer, b: Buffer): number {
  expect(a.length).to.equal(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i += 1) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

export async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await expect(promise).to.reject();
  expect(err).to.be.an.instanceof(ServiceError);
  return err as ServiceError;
}

/** PNG chunks by type, read from the file itself. */
export function pngChunks(bytes: Uint8Array): Map<string, Buffer[]> {
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

/** The bytes of all the chunks of one type in a PNG (a PLTE chunk's over 3 is its palette's size). */
export const pngChunkSize = (png: Uint8Array, type: string): number => (pngChunks(png).get(type) ?? []).reduce((n, c) => n + c.length, 0);

export function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function pngHeaderOnly(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr)]);
}

/** Inserts a JPEG comment (COM) segment right after the start-of-image marker. */
export function withJpegComment(jpeg: Buffer, text: string): Buffer {
  const body = Buffer.from(text, 'latin1');
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xfffe, 0);
  segment.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), segment, body, jpeg.subarray(2)]);
}

/** Inserts a tEXt comment chunk right after IHDR. */
export function withPngComment(png: Buffer, text: string): Buffer {
  const ihdrEnd = 8 + 12 + 13;
  return Buffer.concat([png.subarray(0, ihdrEnd), pngChunk('tEXt', Buffer.from(`Comment\0${text}`, 'latin1')), png.subarray(ihdrEnd)]);
}

/** A detailed picture (gradients and fixed-seed noise) that does not compress to nothing. */
export async function detailedPhoto(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let seed = 4242;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const i = (y * width + x) * 3;
      const noise = (seed >> 16) % 48;
      raw[i] = (x * 255 / width + noise) & 255;
      raw[i + 1] = (y * 255 / height + noise) & 255;
      raw[i + 2] = ((x ^ y) + noise) & 255;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).blur(0.6).png().toBuffer();
}

export interface PictureFixtures {
  /** The picture encoded in each format (JPEG at quality 95 without chroma subsampling). */
  files: Record<ImageFormat, Buffer>;
  /** The decoded pixels of each file (RGB, 8 bits), as sharp decodes them. */
  decoded: Record<ImageFormat, Buffer>;
}

let pictures: Promise<PictureFixtures> | undefined;

/** The W x H picture in every format, encoded once per test process. */
export function pictureFixtures(): Promise<PictureFixtures> {
  pictures ??= (async () => {
    const raw = pictureRaw(W, H);
    const files = {} as Record<ImageFormat, Buffer>;
    const decoded = {} as Record<ImageFormat, Buffer>;
    for (const format of FORMATS) {
      files[format] = await encodeAs(raw, W, H, format);
      decoded[format] = (await rawOf(files[format])).data;
    }
    return { files, decoded };
  })();
  return pictures;
}

/**
 * Runs `operation` on the picture in each format, to each output format (and to none: the input's),
 * and expects the declared media type and a file sharp reads as that format at `width` x `height`.
 */
export async function expectEveryFormat(operation: string, fields: Fields, width: number, height: number): Promise<void> {
  const { files } = await pictureFixtures();
  for (const input of FORMATS) {
    for (const output of [undefined, ...FORMATS]) {
      const result = await run(operation, files[input], { ...fields, ...(output ? { format: output } : {}) });
      const expected = output ?? input;
      expect(result.mediaType).to.equal(MEDIA[expected]);
      const metadata = await sharp(result.body).metadata();
      expect(metadata.format).to.equal(expected);
      expect([metadata.width, metadata.height]).to.equal([width, height]);
    }
  }
}

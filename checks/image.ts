// Image inspection, run in the front end before payment: what the file really is (by its
// bytes, never its name or declared type), its size, and whether it is cut short. Nothing
// here decodes pixels, so a tiny file declaring 100000 x 100000 pixels costs milliseconds.
import sharp, { type Metadata } from 'sharp';
import { fail } from '../core/errors.js';

export type ImageFormat = 'jpeg' | 'png' | 'webp';

export interface ImageInfo {
  format: ImageFormat;
  /** Size of the upright image, after its EXIF orientation is applied. */
  width: number;
  height: number;
}

export interface ImageHeader extends ImageInfo {
  /** EXIF orientation 1 to 8 (1 when absent). */
  orientation: number;
  /** libvips interpretation: 'srgb', 'b-w', 'rgb16', 'grey16', 'cmyk', ... */
  space: string;
  hasAlpha: boolean;
  hasProfile: boolean;
}

export const MAX_IMAGE_PIXELS = 40_000_000;
/** Largest side each output format can hold (WebP's is in its bitstream; JPEG's in its frame header). */
export const MAX_SIDE: Record<ImageFormat, number> = { jpeg: 65_535, png: 10_000_000, webp: 16_383 };

const ACCEPTED = 'this endpoint accepts JPEG, PNG or WebP images';

function ascii(bytes: Uint8Array, start: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(start, start + length));
}

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + signature.length) return false;
  return signature.every((b, i) => bytes[offset + i] === b);
}

/** Names what a refused file is, for the message; undefined when nothing is recognised. */
function nameOtherType(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])
    || startsWith(bytes, [0x49, 0x49, 0x2b, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2b])) return 'a TIFF image';
  if (ascii(bytes, 4, 4) === 'ftyp') {
    const brands = ascii(bytes, 8, Math.min(bytes.length, 64) - 8);
    if (/avi[fs]/.test(brands)) return 'an AVIF image';
    if (/hei[cxms]|hev[cxms]|mif1|msf1/.test(brands)) return 'a HEIC/HEIF image';
    return 'an ISO media file (MP4, MOV or similar)';
  }
  if (ascii(bytes, 0, 2) === 'BM') return 'a BMP image';
  if (ascii(bytes, 0, 5) === '%PDF-') return 'a PDF document';
  if (startsWith(bytes, [0x00, 0x00, 0x00, 0x0c, 0x6a, 0x50, 0x20, 0x20]) || startsWith(bytes, [0xff, 0x4f, 0xff, 0x51])) return 'a JPEG 2000 image';
  if (startsWith(bytes, [0xff, 0x0a]) || startsWith(bytes, [0x00, 0x00, 0x00, 0x0c, 0x4a, 0x58, 0x4c, 0x20])) return 'a JPEG XL image';
  if (startsWith(bytes, [0x00, 0x00, 0x01, 0x00])) return 'an ICO icon';
  if (ascii(bytes, 0, 4) === '8BPS') return 'a Photoshop (PSD) image';
  if (ascii(bytes, 0, 2) === '#?') return 'a Radiance HDR image';
  if (/^P[1-7]\s/.test(ascii(bytes, 0, 3))) return 'a Netpbm image';
  if (ascii(bytes, 0, 9) === 'SIMPLE  =') return 'a FITS image';
  if (ascii(bytes, 0, 4) === 'PK\x03\x04') return 'a ZIP archive (or an Office document)';
  if (ascii(bytes, 0, 4) === 'RIFF') return `a RIFF ${JSON.stringify(ascii(bytes, 8, 4))} file, not WebP`;
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 4096)).toString('utf8').replace(/^\uFEFF/, '').trimStart();
  if (head.startsWith('<')) return /<svg[\s>]/i.test(head) ? 'an SVG image' : 'an XML or HTML document';
  return undefined;
}

/** The accepted format of the bytes, or a failure naming what they are instead. */
export function sniffImageFormat(bytes: Uint8Array): ImageFormat {
  if (bytes.length === 0) fail('UNSUPPORTED_TYPE', `The file is empty; ${ACCEPTED}`, { field: 'file' });
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return 'webp';
  if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') {
    fail('NOT_IMPLEMENTED', 'GIF input is not supported yet; send a JPEG, PNG or WebP image', { field: 'file' });
  }
  const other = nameOtherType(bytes);
  fail('UNSUPPORTED_TYPE', other ? `The file is ${other}; ${ACCEPTED}` : `The file is not an image this service recognises; ${ACCEPTED}`, { field: 'file' });
}

function corrupt(message: string): never {
  fail('CORRUPT_INPUT', message, { field: 'file' });
}

function animated(kind: string): never {
  fail('NOT_IMPLEMENTED', `Animated ${kind} input is not supported yet; send a still JPEG, PNG or WebP image`, { field: 'file' });
}

interface Declared { width: number; height: number }

// Each reader walks the container structure only (segment and chunk lengths, never pixel
// data), which finds the declared size and a file cut short in the same pass.

function readPng(bytes: Uint8Array): Declared {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 33 || ascii(bytes, 12, 4) !== 'IHDR') corrupt('The PNG file is cut short or has no IHDR header');
  const declared = { width: view.getUint32(16), height: view.getUint32(20) };
  let offset = 8;
  while (offset + 8 <= bytes.length) {
    const length = view.getUint32(offset);
    const type = ascii(bytes, offset + 4, 4);
    if (type === 'acTL') animated('PNG');
    const end = offset + 12 + length;
    if (end > bytes.length) break;
    if (type === 'IEND') return declared;
    offset = end;
  }
  // The size is checked first, so an oversized header-only file is still answered 413.
  assertPixelLimit(declared);
  corrupt('The PNG file is cut short: it ends before its IEND chunk');
}

function readWebp(bytes: Uint8Array): Declared {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 20) corrupt('The WebP file is cut short');
  const riffEnd = 8 + view.getUint32(4, true);
  let declared: Declared | undefined;
  let imageEnd = 0;
  let offset = 12;
  while (offset + 8 <= Math.min(bytes.length, riffEnd)) {
    const type = ascii(bytes, offset, 4);
    const size = view.getUint32(offset + 4, true);
    const data = offset + 8;
    if (type === 'VP8X' && data + 10 <= bytes.length) {
      if (bytes[data] & 0x02) animated('WebP');
      declared = {
        width: 1 + (bytes[data + 4] | (bytes[data + 5] << 8) | (bytes[data + 6] << 16)),
        height: 1 + (bytes[data + 7] | (bytes[data + 8] << 8) | (bytes[data + 9] << 16)),
      };
    } else if (type === 'ANIM' || type === 'ANMF') {
      animated('WebP');
    } else if (type === 'VP8 ' && data + 10 <= bytes.length) {
      declared ??= { width: view.getUint16(data + 6, true) & 0x3fff, height: view.getUint16(data + 8, true) & 0x3fff };
      imageEnd = data + size;
    } else if (type === 'VP8L' && data + 5 <= bytes.length) {
      const bits = view.getUint32(data + 1, true);
      declared ??= { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
      imageEnd = data + size;
    }
    offset = data + size + (size & 1);
  }
  if (!declared) corrupt('The WebP file holds no image data');
  assertPixelLimit(declared);
  if (riffEnd > bytes.length || imageEnd > bytes.length) {
    corrupt(`The WebP file is cut short: it declares ${Math.max(riffEnd, imageEnd)} bytes but has ${bytes.length}`);
  }
  return declared;
}

function readJpeg(bytes: Uint8Array): Declared {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let declared: Declared | undefined;
  let offset = 2;
  for (;;) {
    while (offset < bytes.length && bytes[offset] === 0xff && bytes[offset + 1] === 0xff) offset += 1; // fill bytes
    if (offset + 4 > bytes.length) corrupt('The JPEG file is cut short before its image data');
    if (bytes[offset] !== 0xff) corrupt('The JPEG file is damaged: a marker is missing in its header');
    const marker = bytes[offset + 1];
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { offset += 2; continue; }
    if (marker === 0xd9) corrupt('The JPEG file ends before its image data');
    const length = view.getUint16(offset + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame && offset + 9 <= bytes.length) {
      declared = { width: view.getUint16(offset + 7), height: view.getUint16(offset + 5) };
      assertPixelLimit(declared);
    }
    if (marker === 0xda) break;
    offset += 2 + length;
  }
  if (!declared) corrupt('The JPEG file has no frame header');
  if (declared.width === 0 || declared.height === 0) corrupt('The JPEG file declares a zero width or height');
  // An end-of-image marker cannot occur inside entropy-coded data, so its absence after
  // the first scan means the file was cut short (trailing bytes after it are tolerated).
  const whole = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (whole.lastIndexOf(Buffer.from([0xff, 0xd9])) <= offset) corrupt('The JPEG file is cut short: it has no end-of-image marker');
  return declared;
}

function assertPixelLimit({ width, height }: Declared): void {
  if (width * height > MAX_IMAGE_PIXELS) {
    const megapixels = (width * height / 1e6).toFixed(1);
    fail('LIMIT_EXCEEDED', `The image declares ${width} x ${height} pixels (${megapixels} megapixels); the limit is ${MAX_IMAGE_PIXELS / 1e6} megapixels`, { field: 'file' });
  }
}

/** Everything the front end and the workers need from the header, without decoding pixels. */
export async function readImageHeader(bytes: Uint8Array): Promise<ImageHeader> {
  const format = sniffImageFormat(bytes);
  const declared = format === 'png' ? readPng(bytes) : format === 'webp' ? readWebp(bytes) : readJpeg(bytes);
  assertPixelLimit(declared);
  let metadata: Metadata;
  try {
    metadata = await sharp(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { limitInputPixels: false }).metadata();
  } catch {
    corrupt(`The ${format.toUpperCase()} header cannot be read`);
  }
  if (metadata.format !== format) corrupt(`The file starts like ${format.toUpperCase()} but does not read as one`);
  if (!metadata.width || !metadata.height) corrupt(`The ${format.toUpperCase()} file declares no width or height`);
  return {
    format,
    width: metadata.autoOrient.width,
    height: metadata.autoOrient.height,
    orientation: metadata.orientation ?? 1,
    space: metadata.space,
    hasAlpha: metadata.hasAlpha,
    hasProfile: metadata.hasProfile,
  };
}

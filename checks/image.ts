// Image inspection, run in the front end before payment: what the file really is (by its
// bytes, never its name or declared type), its size, and whether it is cut short. Nothing
// here decodes pixels, so a tiny file declaring 100000 x 100000 pixels costs milliseconds.
import sharp, { type Metadata } from 'sharp';
import { fail } from '../core/errors.js';

/** The image formats accepted as input and offered as output, in the order every list shows them. */
export const IMAGE_FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const;
export type ImageFormat = typeof IMAGE_FORMATS[number];
/** Each format's media type (what the client gets and the 402 names). */
export const IMAGE_MEDIA_TYPES: Record<ImageFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', avif: 'image/avif' };
/** The formats in words, for messages and descriptions: "JPEG, PNG, WebP or AVIF". */
export const IMAGE_FORMAT_NAMES = 'JPEG, PNG, WebP or AVIF';

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
/**
 * Largest side each output format can hold (WebP's is in its bitstream; JPEG's in its frame header;
 * AVIF's is libheif's encoder limit here: 16385 pixels is refused as too large for the format).
 */
export const MAX_SIDE: Record<ImageFormat, number> = { jpeg: 65_535, png: 10_000_000, webp: 16_383, avif: 16_384 };

/**
 * /v1/pdf/from-images also takes TIFF (a scanner's format), which no image operation writes: it is
 * read only to become a PDF page.
 */
export const PAGE_IMAGE_FORMATS = [...IMAGE_FORMATS, 'tiff'] as const;
export type PageImageFormat = typeof PAGE_IMAGE_FORMATS[number];
export const PAGE_IMAGE_FORMAT_NAMES = 'JPEG, PNG, WebP, AVIF or TIFF';
export const PAGE_IMAGE_MEDIA_TYPES: Record<PageImageFormat, string> = { ...IMAGE_MEDIA_TYPES, tiff: 'image/tiff' };

/** A page image's header: an image header whose format may also be TIFF. */
export interface PageImageHeader extends Omit<ImageHeader, 'format'> {
  format: PageImageFormat;
}

const accepted = (names: string) => `this endpoint accepts ${names} images`;

function ascii(bytes: Uint8Array, start: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(start, start + length));
}

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + signature.length) return false;
  return signature.every((b, i) => bytes[offset + i] === b);
}

/** TIFF's signatures: little- or big-endian, classic (42) or BigTIFF (43). */
function isTiff(bytes: Uint8Array): boolean {
  return startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])
    || startsWith(bytes, [0x49, 0x49, 0x2b, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2b]);
}

/** Names what a refused file is, for the message; undefined when nothing is recognised. */
function nameOtherType(bytes: Uint8Array): string | undefined {
  if (isTiff(bytes)) return 'a TIFF image';
  if (ascii(bytes, 4, 4) === 'ftyp') {
    const brands = ascii(bytes, 8, Math.min(bytes.length, 64) - 8);
    // HEIC is HEVC inside the same container as AVIF: this libvips has no HEVC decoder.
    if (/hei[cxms]|hev[cxms]|mif1|msf1/.test(brands)) return 'a HEIC/HEIF image (HEVC, not AVIF)';
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

/** The accepted format of the bytes, or a failure naming what they are instead (and `names`, what the endpoint takes). */
export function sniffImageFormat(bytes: Uint8Array, names = IMAGE_FORMAT_NAMES): ImageFormat {
  const takes = accepted(names);
  if (bytes.length === 0) fail('UNSUPPORTED_TYPE', `The file is empty; ${takes}`, { field: 'file' });
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return 'webp';
  if (ascii(bytes, 4, 4) === 'ftyp' && ftypBrands(bytes).some((b) => b === 'avif' || b === 'avis')) return 'avif';
  if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') {
    fail('NOT_IMPLEMENTED', `GIF input is not supported yet; send a ${names} image`, { field: 'file' });
  }
  const other = nameOtherType(bytes);
  fail('UNSUPPORTED_TYPE', other ? `The file is ${other}; ${takes}` : `The file is not an image this service recognises; ${takes}`, { field: 'file' });
}

function corrupt(message: string): never {
  fail('CORRUPT_INPUT', message, { field: 'file' });
}

function animated(kind: string): never {
  fail('NOT_IMPLEMENTED', `Animated ${kind} input is not supported yet; send a still ${IMAGE_FORMAT_NAMES} image`, { field: 'file' });
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

/** The major and compatible brands of an ISO media file's leading ftyp box. */
function ftypBrands(bytes: Uint8Array): string[] {
  if (bytes.length < 16) return [];
  const size = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  const end = Math.min(bytes.length, Math.max(16, size));
  const brands = [ascii(bytes, 8, 4)];
  for (let offset = 16; offset + 4 <= end; offset += 4) brands.push(ascii(bytes, offset, 4));
  return brands;
}

interface IsoBox { type: string; data: number; end: number }

/**
 * The boxes from `start` to `end`; a box that claims to reach past `end` is returned cut at the
 * end with `cut` set, and the walk stops there.
 */
function isoBoxes(bytes: Uint8Array, start: number, end: number): { boxes: IsoBox[]; cut: boolean } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const boxes: IsoBox[] = [];
  let offset = start;
  while (offset + 8 <= end) {
    let size = view.getUint32(offset);
    const type = ascii(bytes, offset + 4, 4);
    let data = offset + 8;
    if (size === 1) {
      if (offset + 16 > end) return { boxes, cut: true };
      size = Number(view.getBigUint64(offset + 8));
      data = offset + 16;
    } else if (size === 0) {
      size = end - offset; // to the end of the enclosing box (of the file, at the top)
    }
    if (size < data - offset) corrupt(`The AVIF file is damaged: its ${JSON.stringify(type)} box declares ${size} bytes`);
    if (offset + size > end) {
      boxes.push({ type, data, end });
      return { boxes, cut: true };
    }
    boxes.push({ type, data, end: offset + size });
    offset += size;
  }
  return { boxes, cut: offset < end };
}

/** Unsigned big-endian integer of 0, 4 or 8 bytes (iloc's field sizes). */
function readSized(view: DataView, offset: number, size: number): number {
  if (size === 0) return 0;
  if (size === 4) return view.getUint32(offset);
  if (size === 8) return Number(view.getBigUint64(offset));
  corrupt('The AVIF file is damaged: its item locations use an invalid field size');
}

/**
 * The byte ranges, within the file, of the items stored in it (iloc construction method 0),
 * so a file cut inside its image data is found without decoding.
 */
function ilocEnds(bytes: Uint8Array, box: IsoBox): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ends: number[] = [];
  let p = box.data;
  const need = (n: number) => { if (p + n > box.end) corrupt('The AVIF file is damaged: its item locations are cut short'); };
  need(6);
  const version = bytes[p];
  p += 4;
  const offsetSize = bytes[p] >> 4;
  const lengthSize = bytes[p] & 15;
  const baseOffsetSize = bytes[p + 1] >> 4;
  const indexSize = version === 1 || version === 2 ? bytes[p + 1] & 15 : 0;
  p += 2;
  need(version === 2 ? 4 : 2);
  const items = version === 2 ? view.getUint32(p) : view.getUint16(p);
  p += version === 2 ? 4 : 2;
  for (let i = 0; i < items; i++) {
    need((version === 2 ? 4 : 2) + (version === 1 || version === 2 ? 2 : 0) + 2 + baseOffsetSize + 2);
    p += version === 2 ? 4 : 2; // item_ID
    let method = 0;
    if (version === 1 || version === 2) { method = view.getUint16(p) & 15; p += 2; }
    p += 2; // data_reference_index
    const base = readSized(view, p, baseOffsetSize);
    p += baseOffsetSize;
    const extents = view.getUint16(p);
    p += 2;
    for (let e = 0; e < extents; e++) {
      need(indexSize + offsetSize + lengthSize);
      p += indexSize;
      const extentOffset = readSized(view, p, offsetSize);
      p += offsetSize;
      const length = readSized(view, p, lengthSize);
      p += lengthSize;
      if (method === 0) ends.push(base + extentOffset + length);
    }
  }
  return ends;
}

/**
 * AVIF (HEIF with AV1): the size is each image item's ispe property (meta → iprp → ipco), read
 * without decoding; the largest declared item is what the pixel limit is checked on (the primary
 * image, or a grid's whole canvas, or an alpha plane, whichever is largest). An image sequence
 * (the avis brand, or a moov box) is animation: 501. The file is cut short when a box or an
 * item's data reaches past its end.
 */
function readAvif(bytes: Uint8Array): Declared {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (ftypBrands(bytes).includes('avis')) animated('AVIF');
  const top = isoBoxes(bytes, 0, bytes.length);
  if (top.boxes.some((b) => b.type === 'moov')) animated('AVIF');
  const meta = top.boxes.find((b) => b.type === 'meta');
  if (!meta) corrupt('The AVIF file is cut short or damaged: it has no meta box');
  const inMeta = isoBoxes(bytes, meta.data + 4, meta.end).boxes;
  const iprp = inMeta.find((b) => b.type === 'iprp');
  const ipco = iprp && isoBoxes(bytes, iprp.data, iprp.end).boxes.find((b) => b.type === 'ipco');
  let declared: Declared | undefined;
  for (const property of ipco ? isoBoxes(bytes, ipco.data, ipco.end).boxes : []) {
    if (property.type !== 'ispe' || property.data + 12 > property.end) continue;
    const size = { width: view.getUint32(property.data + 4), height: view.getUint32(property.data + 8) };
    if (!declared || size.width * size.height > declared.width * declared.height) declared = size;
  }
  if (!declared) corrupt('The AVIF file declares no image size (no ispe property)');
  if (declared.width === 0 || declared.height === 0) corrupt('The AVIF file declares a zero width or height');
  assertPixelLimit(declared);
  if (top.cut || meta.end > bytes.length) corrupt('The AVIF file is cut short: a box reaches past its end');
  const iloc = inMeta.find((b) => b.type === 'iloc');
  if (!iloc) corrupt('The AVIF file is damaged: it has no item locations (iloc)');
  const itemsEnd = ilocEnds(bytes, iloc).reduce((a, b) => Math.max(a, b), 0);
  if (itemsEnd > bytes.length) corrupt(`The AVIF file is cut short: its image data reaches byte ${itemsEnd} but the file has ${bytes.length}`);
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
export async function inspectImage(bytes: Uint8Array, names = IMAGE_FORMAT_NAMES): Promise<ImageHeader> {
  const format = sniffImageFormat(bytes, names);
  const declared = format === 'png' ? readPng(bytes) : format === 'webp' ? readWebp(bytes) : format === 'avif' ? readAvif(bytes) : readJpeg(bytes);
  assertPixelLimit(declared);
  let metadata: Metadata;
  try {
    metadata = await sharp(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { limitInputPixels: false }).metadata();
  } catch {
    corrupt(`The ${format.toUpperCase()} header cannot be read`);
  }
  // libvips reads AVIF as HEIF whose compression is AV1.
  const reads = format === 'avif' ? metadata.format === 'heif' && metadata.compression === 'av1' : metadata.format === format;
  if (!reads) corrupt(`The file starts like ${format.toUpperCase()} but does not read as one`);
  if (format === 'avif' && (metadata.pages ?? 1) > 1) {
    fail('NOT_IMPLEMENTED', `AVIF files holding several images (${metadata.pages}) are not supported yet; send a single still image`, { field: 'file' });
  }
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

// TIFF tags that locate the image data: strips or tiles, their offsets and byte counts.
const STRIP_OFFSETS = 273;
const STRIP_BYTE_COUNTS = 279;
const TILE_OFFSETS = 324;
const TILE_BYTE_COUNTS = 325;

/**
 * Where the first image's data ends, from its IFD's strip or tile offsets and byte counts (classic
 * TIFF; undefined for BigTIFF, whose 64-bit fields are left to the decoder), so that a file cut
 * short is found without decoding.
 */
function tiffDataEnd(bytes: Uint8Array): number | undefined {
  const little = bytes[0] === 0x49;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint16(2, little) !== 42) return undefined;
  const u16 = (at: number) => view.getUint16(at, little);
  const u32 = (at: number) => view.getUint32(at, little);
  if (bytes.length < 8) corrupt('The TIFF file is cut short inside its header');
  const ifd = u32(4);
  if (ifd + 2 > bytes.length) corrupt('The TIFF file is cut short before its first directory');
  const count = u16(ifd);
  if (ifd + 2 + count * 12 > bytes.length) corrupt('The TIFF file is cut short inside its first directory');
  const values: Record<number, number[]> = {};
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    const tag = u16(entry);
    if (![STRIP_OFFSETS, STRIP_BYTE_COUNTS, TILE_OFFSETS, TILE_BYTE_COUNTS].includes(tag)) continue;
    const size = u16(entry + 2) === 3 ? 2 : 4; // SHORT or LONG
    const n = u32(entry + 4);
    const at = n * size <= 4 ? entry + 8 : u32(entry + 8);
    if (at + n * size > bytes.length) corrupt('The TIFF file is cut short: its strip or tile table reaches past its end');
    values[tag] = Array.from({ length: n }, (_, k) => (size === 2 ? u16(at + k * 2) : u32(at + k * 4)));
  }
  const offsets = values[STRIP_OFFSETS] ?? values[TILE_OFFSETS] ?? [];
  const lengths = values[STRIP_BYTE_COUNTS] ?? values[TILE_BYTE_COUNTS] ?? [];
  return offsets.reduce((end, offset, k) => Math.max(end, offset + (lengths[k] ?? 0)), 0);
}

async function readTiffHeader(bytes: Uint8Array): Promise<PageImageHeader> {
  // The directory is walked first: libvips cannot read a header that is cut off.
  const end = tiffDataEnd(bytes);
  let metadata: Metadata;
  try {
    metadata = await sharp(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { limitInputPixels: false }).metadata();
  } catch {
    corrupt('The TIFF header cannot be read');
  }
  if (metadata.format !== 'tiff' || !metadata.width || !metadata.height) corrupt('The file starts like TIFF but does not read as one');
  assertPixelLimit({ width: metadata.width, height: metadata.height });
  if ((metadata.pages ?? 1) > 1) {
    fail('NOT_IMPLEMENTED', `TIFF files holding several pages (${metadata.pages}) are not supported yet; send each page as a file of its own`,
      { field: 'file' });
  }
  if (end !== undefined && end > bytes.length) {
    corrupt(`The TIFF file is cut short: its image data reaches byte ${end} but the file has ${bytes.length}`);
  }
  return {
    format: 'tiff', width: metadata.autoOrient.width, height: metadata.autoOrient.height, orientation: metadata.orientation ?? 1,
    space: metadata.space, hasAlpha: metadata.hasAlpha, hasProfile: metadata.hasProfile,
  };
}

/** A header of an image that is to become a PDF page: one of the image operations' formats, or a single-page TIFF. */
export async function inspectPageImage(bytes: Uint8Array): Promise<PageImageHeader> {
  return isTiff(bytes) ? readTiffHeader(bytes) : inspectImage(bytes, PAGE_IMAGE_FORMAT_NAMES);
}

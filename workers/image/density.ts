// An image's resolution as its file states it (PNG's pHYs, JPEG's JFIF or EXIF density, TIFF's
// resolution tags), which gives its size on a page; 96 pixels per inch, CSS's, when it states none.
import sharp from 'sharp';

export const DEFAULT_DPI = 96;

/**
 * Whether a JPEG states a resolution: a JFIF header with units (1 dots per inch, 2 per centimetre;
 * 0 is an aspect ratio only) or an EXIF segment (libvips reads its XResolution). libvips answers
 * 72 for a JPEG that states none, which is not the file's word.
 */
function jpegStatesResolution(bytes: Uint8Array): boolean {
  let offset = 2;
  while (offset + 4 <= bytes.length && bytes[offset] === 0xff) {
    const marker = bytes[offset + 1];
    if (marker === 0xda || marker === 0xd9) break;
    const length = (bytes[offset + 2] << 8) | bytes[offset + 3];
    const tag = Buffer.from(bytes.subarray(offset + 4, offset + 9)).toString('latin1');
    if (marker === 0xe0 && tag === 'JFIF\0' && offset + 11 < bytes.length && bytes[offset + 11] !== 0) return true;
    if (marker === 0xe1 && tag.startsWith('Exif')) return true;
    offset += 2 + length;
  }
  return false;
}

export async function imageDpi(bytes: Uint8Array): Promise<number> {
  const { density, format } = await sharp(bytes, { limitInputPixels: false }).metadata();
  if (format === 'jpeg' && !jpegStatesResolution(bytes)) return DEFAULT_DPI;
  return density !== undefined && density > 0 ? density : DEFAULT_DPI;
}

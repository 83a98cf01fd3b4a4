// An image's resolution as its file states it (PNG's pHYs, JPEG's JFIF or EXIF density, TIFF's
// resolution tags), which gives its size on a page; 96 pixels per inch, CSS's, when it states none.
import sharp from 'sharp';

export const DEFAULT_DPI = 96;

export async function imageDpi(bytes: Uint8Array): Promise<number> {
  const { density } = await sharp(bytes, { limitInputPixels: false }).metadata();
  return density !== undefined && density > 0 ? density : DEFAULT_DPI;
}

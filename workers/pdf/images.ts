// images: one PNG per embedded raster image. "Embedded image" means an image XObject that a
// page draws (directly or through a form), counted once however often it is drawn; soft masks
// are applied as the alpha channel rather than returned as images of their own. Inline images
// (tiny images written inside a content stream) are not objects and are not returned.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { timeLeft, type JobOutput, type WorkFunction } from '../../core/job.js';
import { fail } from '../../core/errors.js';
import { buildZip, checkZipSize, type ZipEntry } from '../../tools/zip.js';
import { inputPath, readBytes, ZIP } from './common.js';
import { extractImages, listImages } from '../../tools/engines/mutool.js';
import { withScratch } from '../../tools/process/scratch-directory.js';

sharp.concurrency(1);

/** An image larger than this is refused rather than decoded (the same bound as a rendered page). */
export const MAX_IMAGE_PIXELS = 50_000_000;

export interface ListedImage { object: number; width: number; height: number }

/** Image objects in order of first use, from `mutool info -I` lines such as "1 (2 0 R): [ DCT ] 800x600 8bpc DevRGB (11 0 R)". */
export function parseImageList(info: string): ListedImage[] {
  const seen = new Set<number>();
  const images: ListedImage[] = [];
  const section = info.split(/^Images \(\d+\):$/m)[1] ?? '';
  for (const line of section.split('\n')) {
    const match = /\s(\d+)x(\d+)\s.*\((\d+) \d+ R\)\s*$/.exec(line);
    if (!match) {
      if (line.trim() !== '' && !/^\s/.test(line)) break; // the next section
      continue;
    }
    const object = Number(match[3]);
    if (seen.has(object)) continue;
    seen.add(object);
    images.push({ object, width: Number(match[1]), height: Number(match[2]) });
  }
  return images;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The image as PNG. mutool writes every image it decodes itself as a PNG already (IHDR, pHYs,
 * IDAT, IEND: nothing that identifies anyone), which is returned as it is: re-encoding it cost
 * about 40 ms for a 0.5-megapixel image and came out larger. JPEG data, which mutool copies
 * out untouched (with whatever metadata it carries), is decoded and written anew by sharp.
 */
async function toPng(bytes: Uint8Array): Promise<Uint8Array> {
  if (bytes.byteLength > PNG_SIGNATURE.length && PNG_SIGNATURE.equals(bytes.subarray(0, PNG_SIGNATURE.length))) return bytes;
  const out = await sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'none' }).png({ compressionLevel: 6 }).toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

export const images: WorkFunction = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const listed = parseImageList(await listImages(source, { cwd: dir, timeoutMs: timeLeft(input) }));
    if (listed.length === 0) fail('NO_CONTENT', 'the PDF has no embedded raster images');
    for (const [index, image] of listed.entries()) {
      if (image.width * image.height > MAX_IMAGE_PIXELS) {
        fail('LIMIT_EXCEEDED', `image ${index + 1} is ${image.width} x ${image.height} pixels, more than the limit of 50 megapixels`);
      }
    }
    await extractImages(source, listed.map((image) => image.object), { cwd: dir, timeoutMs: timeLeft(input) });
    const written = new Map<number, string>();
    for (const name of await readdir(dir)) {
      const match = /^image-0*(\d+)\.\w+$/.exec(name);
      if (match) written.set(Number(match[1]), name);
    }
    const entries: ZipEntry[] = [];
    for (const image of listed) {
      const name = written.get(image.object);
      if (!name) continue; // an image mupdf could not decode is left out rather than failing the rest
      let png: Uint8Array;
      try {
        png = await toPng(await readBytes(path.join(dir, name)));
      } catch {
        continue;
      }
      entries.push({ name: `image-${String(entries.length + 1).padStart(4, '0')}.png`, bytes: png });
      checkZipSize(entries, input.settings.maxZipBytes);
    }
    if (entries.length === 0) fail('NO_CONTENT', 'the PDF has no embedded raster image that can be decoded');
    return { body: await buildZip(entries, input.settings.maxZipBytes), mediaType: ZIP };
  });
};

// Images to one PDF: JPEGs and PNGs go to MuPDF as they are (a JPEG's bytes become its image
// stream); WebP, AVIF and TIFF are written as PNG first by libvips, losslessly, their EXIF
// orientation left to the page's drawing matrix like every other image's.
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';
import type { JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import type { FromImagesPlan } from '../../operations/pdf/from-images.js';
import { imagesToPdf, type ImagesRequest } from '../../tools/engines/mupdf-js.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import { imageDpi } from '../image/density.js';
import { PDF, readBytes } from './common.js';

export const fromImages: WorkFunction<FromImagesPlan> = async (input): Promise<JobOutput> => withScratch(input.jobDir, async (dir) => {
  const images: ImagesRequest['images'] = [];
  for (const [i, { format, orientation }] of input.params.images.entries()) {
    const { bytes } = input.files[i];
    const kept = format === 'jpeg' || format === 'png';
    const file = path.join(dir, `image-${i + 1}.${kept ? format : 'png'}`);
    // MuPDF decodes the PNG and deflates the pixels itself: the fastest deflate is enough here.
    const stored = kept ? bytes : await sharp(bytes, { limitInputPixels: false }).png({ compressionLevel: 1 }).toBuffer();
    writeFileSync(file, stored, { mode: 0o600 });
    images.push({ file, orientation, dpi: await imageDpi(bytes) });
  }
  const out = path.join(dir, 'images.pdf');
  const { pageSize, marginMm } = input.params;
  await imagesToPdf(out, { images, pageSize, marginMm }, { cwd: dir, timeoutMs: timeLeft(input) });
  return { body: await readBytes(out), mediaType: PDF };
});

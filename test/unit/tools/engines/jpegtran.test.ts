// The jpegtran engine: lossless turns and mirrors, read back with sharp, and the cases where it
// gives nothing so that the caller re-encodes.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { JPEG_TRANSFORMS, transformJpeg } from '../../../../tools/engines/jpegtran.js';
import { inScratch } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

/** A JPEG whose left half is black and right half white, with EXIF that must not survive. */
const halves = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#fff' } })
  .composite([{ input: { create: { width: width / 2, height, channels: 3, background: '#000' } }, left: 0, top: 0 }])
  .withExif({ IFD0: { Artist: 'someone' } }).jpeg({ quality: 90 }).toBuffer();

describe('the jpegtran engine', () => {
  it('turns a JPEG by 90 degrees without re-encoding, dropping its metadata', async () => {
    await inScratch(async (dir) => {
      const turned = await transformJpeg(await halves(64, 32), 'rotate90', false, { cwd: dir, timeoutMs: 30_000 });
      const meta = await sharp(turned!).metadata();
      expect([meta.width, meta.height]).to.equal([32, 64]);
      expect(meta.exif).to.be.undefined();
      // Turned clockwise, the black left half is now on top.
      const { data } = await sharp(turned!).greyscale().raw().toBuffer({ resolveWithObject: true });
      expect(data[0]).to.be.below(40);
      expect(data[data.length - 1]).to.be.above(215);
    });
  });

  it('gives nothing when edge blocks are partial (-perfect) or the data is not a JPEG', async () => {
    await inScratch(async (dir) => {
      // 50 x 30: not a multiple of the 16-pixel blocks, so a 90-degree turn cannot keep every edge pixel.
      expect(await transformJpeg(await halves(50, 30), 'rotate90', false, { cwd: dir, timeoutMs: 30_000 })).to.be.undefined();
      expect(await transformJpeg(new TextEncoder().encode('not a jpeg'), 'flipVertical', false, { cwd: dir, timeoutMs: 30_000 })).to.be.undefined();
    });
  });

  it('names the eight transforms of the square\'s symmetry group', () => {
    expect(Object.keys(JPEG_TRANSFORMS)).to.have.length(8);
  });
});

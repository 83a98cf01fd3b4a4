// The pngquant engine: an exact palette size, counted in the decoded result.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { quantisePng } from '../../../../tools/engines/pngquant.js';
import { inScratch } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the pngquant engine', () => {
  it('reduces a gradient to at most the number of colours asked for', async () => {
    await inScratch(async (dir) => {
      const width = 120;
      const height = 40;
      const pixels = Buffer.alloc(width * height * 3);
      for (let i = 0; i < width * height; i++) pixels.set([(i % width) * 2, 255 - (i % width) * 2, 128], i * 3);
      const png = await sharp(pixels, { raw: { width, height, channels: 3 } }).png().toBuffer();
      const out = await quantisePng(png, 5, 10, 1024 * 1024, { cwd: dir, timeoutMs: 30_000 });
      const { data, info } = await sharp(out).raw().toBuffer({ resolveWithObject: true });
      const colours = new Set<string>();
      for (let i = 0; i < data.length; i += info.channels) colours.add(data.subarray(i, i + 3).toString('hex'));
      expect(colours.size).to.be.within(2, 5);
      expect([info.width, info.height]).to.equal([width, height]);
    });
  });

  it('fails the job on data it cannot read', async () => {
    await inScratch(async (dir) => {
      await expect(quantisePng(new TextEncoder().encode('not a png'), 5, 10, 1024, { cwd: dir, timeoutMs: 30_000 })).to.reject(Error);
    });
  });
});

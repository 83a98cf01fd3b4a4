// /v1/image/resize: every format in and out, the size each fit gives, the centre that cover keeps,
// the 40-megapixel and per-format limits, and a palette PNG only when colors is sent.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { W, H, run, rawOf, remap, maxDifference, failure, expectEveryFormat, pngChunkSize, pictureFixtures, type Fields, type ImageFormat } from '../../support/image-fixtures.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

let fixtures: Record<ImageFormat, Buffer>;
let decoded: Record<ImageFormat, Buffer>;
before(async () => {
  ({ files: fixtures, decoded } = await pictureFixtures());
});

describe('/v1/image/resize', () => {
  it('resize: each input to each output, with the real media type and exact size', async () => {
    await expectEveryFormat('resize', { width: 40, fit: 'contain' }, 40, 27);
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

  it('other operations make a palette PNG only when colors was sent', async () => {
    const trueColour = (await run('resize', fixtures.jpeg, { width: 48, format: 'png' })).body;
    expect(pngChunkSize(trueColour, 'PLTE')).to.equal(0);
    expect((await sharp(trueColour).metadata()).isPalette).to.be.false();
    const palette = (await run('resize', fixtures.jpeg, { width: 48, format: 'png', colors: 8 })).body;
    expect(pngChunkSize(palette, 'PLTE') / 3).to.be.within(1, 8);
    // Sending the default value is still sending it.
    const sentDefault = (await run('resize', fixtures.jpeg, { width: 48, format: 'png', colors: 256 })).body;
    expect((await sharp(sentDefault).metadata()).isPalette).to.be.true();
  });
});

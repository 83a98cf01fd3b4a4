// /v1/image/rotate: every format in and out, pixels moved exactly for a lossless output, an ICC
// profile kept, and JPEG turned losslessly by jpegtran (composed with the EXIF orientation), with
// the re-encode it falls back to.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { FORMATS, W, H, pictureRaw, encodeAs, run, rawOf, rotated, maxDifference, expectEveryFormat, pictureFixtures, type ImageFormat } from '../../support/image-fixtures.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

let fixtures: Record<ImageFormat, Buffer>;
let decoded: Record<ImageFormat, Buffer>;
before(async () => {
  ({ files: fixtures, decoded } = await pictureFixtures());
});

describe('/v1/image/rotate', () => {
  it('rotate: each input to each output, with the real media type and exact size', async () => {
    await expectEveryFormat('rotate', { angle: 90 }, H, W);
  });

  it('rotate moves pixels exactly for a lossless output', async () => {
    for (const input of FORMATS) {
      for (const angle of [90, 180, 270]) {
        const out = await rawOf((await run('rotate', fixtures[input], { angle, format: 'png' })).body);
        expect(out.data.equals(rotated(angle, decoded[input], W, H))).to.be.true();
      }
    }
  });

  it('keeps an RGB ICC profile and the stored pixel values', async () => {
    const p3 = await sharp(pictureRaw(W, H), { raw: { width: W, height: H, channels: 3 } }).withIccProfile('p3').png().toBuffer();
    const out = (await run('rotate', p3, { angle: 180 })).body;
    expect((await sharp(out).metadata()).hasProfile).to.be.true();
    const stored = async (bytes: Uint8Array) => sharp(bytes, { ignoreIcc: true }).raw().toBuffer();
    expect((await stored(out)).equals(rotated(180, await stored(p3), W, H))).to.be.true();
  });
});

describe('lossless JPEG rotate and flip', () => {
  it('rotating a quarter turn four times gives back the very same pixels', async () => {
    let bytes: Uint8Array = fixtures.jpeg;
    for (let i = 0; i < 4; i += 1) bytes = (await run('rotate', bytes, { angle: 90 })).body;
    expect((await rawOf(bytes)).data.equals(decoded.jpeg)).to.be.true();
    const twice = (await run('flip', (await run('flip', fixtures.jpeg, { direction: 'horizontal' })).body, { direction: 'horizontal' })).body;
    expect((await rawOf(twice)).data.equals(decoded.jpeg)).to.be.true();
    // A re-encode at the same quality would drift: the lossless path is what keeps it exact.
    let reencoded: Uint8Array = fixtures.jpeg;
    for (let i = 0; i < 4; i += 1) reencoded = (await run('rotate', reencoded, { angle: 90, quality: 89 })).body;
    expect((await rawOf(reencoded)).data.equals(decoded.jpeg)).to.be.false();
  });

  it('a single rotation matches the decoded pixels turned', async () => {
    const once = await rawOf((await run('rotate', fixtures.jpeg, { angle: 270 })).body);
    // The transform works on DCT blocks, so only the decoder's rounding differs (a few levels).
    expect(maxDifference(once.data, rotated(270, decoded.jpeg, W, H))).to.be.at.most(3);
  });

  it('composes the EXIF orientation with the requested transform', async () => {
    for (const orientation of [2, 3, 5, 6, 7, 8]) {
      const stored = await sharp(fixtures.jpeg).jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).withMetadata({ orientation }).toBuffer();
      const upright = await rawOf(await sharp(stored).autoOrient().png().toBuffer());
      const out = await rawOf((await run('rotate', stored, { angle: 90 })).body);
      expect([out.width, out.height]).to.equal([upright.height, upright.width]);
      expect(maxDifference(out.data, rotated(90, upright.data, upright.width, upright.height))).to.be.at.most(3);
      expect((await sharp((await run('rotate', stored, { angle: 90 })).body).metadata()).orientation).to.not.exist();
    }
  });

  it('falls back to a re-encode when the edge blocks are partial or a lower quality is asked', async () => {
    const odd = await encodeAs(pictureRaw(101, 59), 101, 59, 'jpeg');
    const out = (await run('rotate', odd, { angle: 90 })).body;
    expect([(await sharp(out).metadata()).width, (await sharp(out).metadata()).height]).to.equal([59, 101]);
    const lossless = (await run('rotate', fixtures.jpeg, { angle: 90 })).body;
    const smaller = (await run('rotate', fixtures.jpeg, { angle: 90, quality: 40 })).body;
    expect(smaller.length).to.be.below(lossless.length);
  });
});

// /v1/image/flip: every format in and out, and pixels mirrored exactly for a lossless output (the
// lossless JPEG path it shares with rotate is in image-rotate.test.ts).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { FORMATS, W, H, run, rawOf, mirrored, expectEveryFormat, pictureFixtures, type ImageFormat } from '../../support/image-fixtures.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

let fixtures: Record<ImageFormat, Buffer>;
let decoded: Record<ImageFormat, Buffer>;
before(async () => {
  ({ files: fixtures, decoded } = await pictureFixtures());
});

describe('/v1/image/flip', () => {
  it('flip: each input to each output, with the real media type and exact size', async () => {
    await expectEveryFormat('flip', { direction: 'horizontal' }, W, H);
  });

  it('flip mirrors pixels exactly for a lossless output', async () => {
    for (const input of FORMATS) {
      for (const direction of ['horizontal', 'vertical']) {
        const out = await rawOf((await run('flip', fixtures[input], { direction, format: 'png' })).body);
        expect(out.data.equals(mirrored(direction, decoded[input], W, H))).to.be.true();
      }
    }
  });
});

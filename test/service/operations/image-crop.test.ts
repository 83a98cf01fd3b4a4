// /v1/image/crop: every format in and out, exactly the source rectangle, and a rectangle reaching
// outside the image refused by the plan (before payment) naming the edge and the field.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import type { ServiceError } from '../../../core/errors.js';
import { imageCrop } from '../../../operations/image/crop.js';
import { FORMATS, W, H, run, rawOf, remap, failure, expectEveryFormat, pictureFixtures, type ImageFormat } from '../../support/image-fixtures.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

let fixtures: Record<ImageFormat, Buffer>;
let decoded: Record<ImageFormat, Buffer>;
before(async () => {
  ({ files: fixtures, decoded } = await pictureFixtures());
});

const header = { format: 'png' as const, width: 1000, height: 800, orientation: 1, space: 'srgb', hasAlpha: false, hasProfile: false };
type Rectangle = { x: number; y: number; width: number; height: number };
const planCrop = (fields: Rectangle) => imageCrop.plan({
  fields: { format: undefined, quality: 90, colors: 256, ...fields }, sent: (name) => name in fields,
  files: [{ kind: 'image', bytes: new Uint8Array(), header }], pages: 0, pageBoxes: async () => undefined,
});

describe('/v1/image/crop', () => {
  it('crop: each input to each output, with the real media type and exact size', async () => {
    await expectEveryFormat('crop', { x: 10, y: 5, width: 30, height: 20 }, 30, 20);
  });

  it('crop returns exactly the source rectangle (PNG output)', async () => {
    const rect = { x: 17, y: 9, width: 41, height: 33 };
    for (const input of FORMATS) {
      const result = await run('crop', fixtures[input], { ...rect, format: 'png' });
      const out = await rawOf(result.body);
      const expected = remap(decoded[input], W, H, rect.width, rect.height, (x, y) => [rect.x + x, rect.y + y]);
      expect(out.data.equals(expected)).to.be.true();
    }
  });

  it('refuses a crop reaching outside the image, naming the edge', async () => {
    const refusal = (fields: Rectangle) => {
      try {
        void planCrop(fields); // the image plans throw synchronously
      } catch (err) {
        return { message: (err as ServiceError).message, field: (err as ServiceError).extra.field, code: (err as ServiceError).code };
      }
      return undefined;
    };
    expect(refusal({ x: 200, y: 0, width: 1000, height: 10 })).to.equal({
      code: 'FIELD_INVALID', field: 'width', message: 'the crop reaches past the right edge: x + width = 1200 but the image is 1000 pixels wide',
    });
    expect(refusal({ x: 0, y: 700, width: 10, height: 101 })).to.equal({
      code: 'FIELD_INVALID', field: 'height', message: 'the crop reaches past the bottom edge: y + height = 801 but the image is 800 pixels high',
    });
    expect(refusal({ x: 1000, y: 0, width: 1, height: 1 })?.field).to.equal('x');
    expect(refusal({ x: 0, y: 800, width: 1, height: 1 })?.field).to.equal('y');
    expect(refusal({ x: 999, y: 799, width: 1, height: 1 })).to.be.undefined();
    const worker = await failure(run('crop', fixtures.png, { x: 90, y: 0, width: 7, height: 1 }));
    expect([worker.code, worker.status]).to.equal(['FIELD_INVALID', 422]);
  });
});

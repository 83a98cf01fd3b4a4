// /v1/pdf/images: every embedded image, lossless ones pixel for pixel.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { makePdf, photographedPage, outlinedTextPdf, mixedPagesPdf } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { zipEntries } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

describe('pdf.images on generated fixtures', () => {
  let photo: { bytes: Uint8Array; width: number; height: number };
  let textPdf: Uint8Array;
  let mixedPdf: Uint8Array;
  before(async () => {
    photo = await photographedPage();
    textPdf = outlinedTextPdf();
    mixedPdf = mixedPagesPdf(photo);
  });

  it('images returns each embedded image as PNG, and 422 when there is none', async () => {
    const { output } = await runOperation('pdf.images', [mixedPdf], {});
    const entries = await zipEntries(output!.body);
    expect(entries.map((e) => e.name)).to.equal(['image-0001.png']);
    const meta = await sharp(entries[0].bytes).metadata();
    expect([meta.format, meta.width, meta.height]).to.equal(['png', photo.width, photo.height]);
    const none = await runOperation('pdf.images', [textPdf], {});
    expect(none.error!.code).to.equal('NO_CONTENT');
    expect(none.error!.status).to.equal(422);
  });

  it('images returns lossless images pixel for pixel and JPEG images re-encoded without their metadata', async () => {
    const width = 64;
    const height = 40;
    const pixels = new Uint8Array(width * height * 3).map((_, i) => (i * 37 + (i >> 7)) % 256);
    const tagged = await sharp(photo.bytes).withExif({ IFD0: { Artist: 'Someone Identifiable', Copyright: 'x' } }).jpeg().toBuffer();
    expect((await sharp(tagged).metadata()).exif).to.exist();
    const meta = await sharp(tagged).metadata();
    const pdf = makePdf([{ jpeg: { bytes: tagged, width: meta.width!, height: meta.height! }, rgb: { pixels, width, height } }]);
    const { output } = await runOperation('pdf.images', [pdf], {});
    const entries = await zipEntries(output!.body);
    expect(entries.map((e) => e.name)).to.equal(['image-0001.png', 'image-0002.png']);
    for (const entry of entries) {
      const m = await sharp(entry.bytes).metadata();
      expect(m.format).to.equal('png');
      expect(m.exif).to.not.exist();
    }
    const lossless = await sharp(entries[1].bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([lossless.info.width, lossless.info.height, lossless.info.channels]).to.equal([width, height, 3]);
    expect(Buffer.compare(lossless.data, Buffer.from(pixels))).to.equal(0);
  });
});

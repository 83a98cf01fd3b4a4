// What every image operation does, from the plan and transform they share
// (operations/image/image-plan.ts, workers/image/transform.ts): metadata stripped from every
// output, the EXIF orientation applied first, 16-bit and greyscale PNGs kept as they are.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { FORMATS, W, H, pictureRaw, run, rawOf, remap, rotated, mirrored, failure, withJpegComment, withPngComment, inspectImage, type ImageFormat } from '../../support/image-fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('privacy and orientation', () => {
  const secrets = ['Jane Roe', 'GPS', 'at home in Utrecht', 'dc:creator'];

  async function expectNoMetadata(bytes: Uint8Array): Promise<void> {
    const metadata = await sharp(bytes).metadata();
    expect(metadata.exif).to.not.exist();
    expect(metadata.xmp).to.not.exist();
    expect(metadata.iptc).to.not.exist();
    expect(metadata.comments).to.not.exist();
    const text = Buffer.from(bytes).toString('latin1');
    for (const secret of secrets) expect(text).to.not.contain(secret);
  }

  it('strips EXIF, GPS, XMP and comments from every output', async () => {
    const exif = { IFD0: { Artist: 'Jane Roe', Copyright: 'Jane Roe' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '52/1 5/1 0/1' } };
    const xmp = '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
      + '<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>Jane Roe</dc:creator></rdf:Description></rdf:RDF></x:xmpmeta>';
    const base = () => sharp(pictureRaw(W, H), { raw: { width: W, height: H, channels: 3 } });
    const tagged: Record<ImageFormat, Buffer> = {
      jpeg: withJpegComment(await base().jpeg({ quality: 95 }).withExif(exif).withXmp(xmp).toBuffer(), 'at home in Utrecht'),
      png: withPngComment(await base().png().withExif(exif).withXmp(xmp).toBuffer(), 'at home in Utrecht'),
      webp: await base().webp().withExif(exif).withXmp(xmp).toBuffer(),
    };
    // The fixtures really carry what must be removed.
    expect(Buffer.from(tagged.jpeg).toString('latin1')).to.contain('at home in Utrecht');
    for (const format of FORMATS) expect((await sharp(tagged[format]).metadata()).exif).to.exist();

    for (const input of FORMATS) {
      for (const output of FORMATS) {
        await expectNoMetadata((await run('compress', tagged[input], { format: output })).body);
        await expectNoMetadata((await run('rotate', tagged[input], { angle: 90, format: output })).body);
      }
    }
    // JPEG to JPEG rotate and flip take the lossless path, which must strip too.
    await expectNoMetadata((await run('flip', tagged.jpeg, { direction: 'vertical' })).body);
  });

  it('applies the EXIF orientation before the operation', async () => {
    for (const format of FORMATS) {
      const stored = await sharp(pictureRaw(W, H), { raw: { width: W, height: H, channels: 3 } })
        .toFormat(format, format === 'png' ? {} : { quality: 95 }).withMetadata({ orientation: 6 }).toBuffer();
      const upright = (await rawOf(await sharp(stored).autoOrient().png().toBuffer())).data;
      // Orientation 6 shows the stored picture turned a quarter clockwise: H wide, W high.
      expect((await inspectImage(stored))).to.equal({ format, width: H, height: W });

      const compressed = (await run('compress', stored, { format: 'png', colors: 256 })).body;
      expect([(await sharp(compressed).metadata()).width, (await sharp(compressed).metadata()).height]).to.equal([H, W]);
      expect((await sharp(compressed).metadata()).orientation).to.not.exist();

      const cropped = await rawOf((await run('crop', stored, { x: 0, y: 70, width: 64, height: 26, format: 'png' })).body);
      expect(cropped.data.equals(remap(upright, H, W, 64, 26, (x, y) => [x, 70 + y]))).to.be.true();

      const turned = await rawOf((await run('rotate', stored, { angle: 90, format: 'png' })).body);
      expect(turned.data.equals(rotated(90, upright, H, W))).to.be.true();
      const flipped = await rawOf((await run('flip', stored, { direction: 'vertical', format: 'png' })).body);
      expect(flipped.data.equals(mirrored('vertical', upright, H, W))).to.be.true();

      const error = await failure(run('crop', stored, { x: 0, y: 0, width: 65, height: 10 }));
      expect(error.message).to.equal('the crop reaches past the right edge: x + width = 65 but the image is 64 pixels wide');
    }
  });

  it('keeps 16-bit PNGs at 16 bits and greyscale PNGs grey, pixel for pixel', async () => {
    const deep = new Uint16Array(W * H * 3).map((_, i) => (i * 977) % 65536);
    const png16 = await sharp(deep, { raw: { width: W, height: H, channels: 3 } }).toColourspace('rgb16').png().toBuffer();
    const out = (await run('flip', png16, { direction: 'vertical' })).body;
    expect((await sharp(out).metadata()).depth).to.equal('ushort');
    const read16 = async (bytes: Uint8Array) => sharp(bytes).toColourspace('rgb16').raw({ depth: 'ushort' }).toBuffer();
    const source = await read16(png16);
    const rowBytes = W * 3 * 2;
    const expected = Buffer.concat(Array.from({ length: H }, (_, y) => source.subarray((H - 1 - y) * rowBytes, (H - y) * rowBytes)));
    expect((await read16(out)).equals(expected)).to.be.true();

    const grey = await sharp(pictureRaw(W, H), { raw: { width: W, height: H, channels: 3 } }).toColourspace('b-w').png().toBuffer();
    const greyOut = await sharp((await run('rotate', grey, { angle: 180 })).body).metadata();
    expect([greyOut.channels, greyOut.space]).to.equal([1, 'b-w']);
  });
});

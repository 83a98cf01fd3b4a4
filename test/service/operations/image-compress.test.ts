// /v1/image/compress: every format in and out, transparency onto white for JPEG, a palette PNG of
// at most `colors` entries, quality that decides the size, and target_kb: the best quality at or
// under the target, or 422 TARGET_UNREACHABLE naming the smallest size reached, charging nothing.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { makePdf } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { startTestService, form, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';
import { detailedPhoto, W, H, run, rawOf, expectEveryFormat, pngChunkSize, pictureFixtures, type ImageFormat } from '../../support/image-fixtures.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

let fixtures: Record<ImageFormat, Buffer>;
before(async () => {
  ({ files: fixtures } = await pictureFixtures());
});

describe('/v1/image/compress', () => {
  it('compress: each input to each output, with the real media type and exact size', async () => {
    await expectEveryFormat('compress', {}, W, H);
  });

  it('flattens transparency onto white for JPEG output', async () => {
    const clear = { r: 0, g: 0, b: 0, alpha: 0 };
    const transparent = await sharp({ create: { width: 8, height: 8, channels: 4, background: clear } }).png().toBuffer();
    const out = await rawOf((await run('compress', transparent, { format: 'jpeg' })).body);
    expect(Math.min(...out.data)).to.be.above(250);
  });

  it('compress makes a palette PNG of at most `colors` entries', async () => {
    // 2, 4, 16 and 256 are PNG bit depths that libvips quantises to; other counts go through pngquant.
    for (const colors of [256, 100, 16, 8, 3, 2]) {
      const out = (await run('compress', fixtures.png, { colors })).body;
      const entries = pngChunkSize(out, 'PLTE') / 3;
      expect(entries).to.be.above(0);
      expect(entries).to.be.at.most(colors);
      expect((await sharp(out).metadata()).isPalette).to.be.true();
      const { data } = await sharp(out).raw().toBuffer({ resolveWithObject: true });
      const distinct = new Set<number>();
      for (let i = 0; i < data.length; i += 3) distinct.add(data.readUIntBE(i, 3));
      expect(distinct.size).to.be.at.most(colors);
    }
  });

  it('a lower quality gives a smaller JPEG and WebP', async () => {
    for (const format of ['jpeg', 'webp'] as const) {
      const high = (await run('compress', fixtures.png, { format, quality: 90 })).body;
      const low = (await run('compress', fixtures.png, { format, quality: 30 })).body;
      expect(low.length).to.be.below(high.length);
    }
  });
});

const KB = 1024;

describe('target_kb on /v1/image/compress', () => {
  let png: Buffer;
  let jpeg: Buffer;
  before(async () => {
    png = await detailedPhoto(480, 360);
    jpeg = await sharp(png).jpeg({ quality: 95 }).toBuffer();
  });

  for (const format of ['jpeg', 'webp', 'avif', 'png'] as const) {
    it(`reaches a reachable target as ${format.toUpperCase()}: at or under it, and it opens`, async () => {
      // Half of what the ceiling setting makes: reachable, and not reached without searching.
      const ceiling = (await runOperation('image.compress', [jpeg], { format })).output!.body.byteLength;
      const targetKb = Math.max(1, Math.floor(ceiling / 2 / KB));
      const { output, error } = await runOperation('image.compress', [jpeg], { format, target_kb: targetKb });
      expect(error).to.not.exist();
      expect(output!.mediaType).to.equal(`image/${format}`);
      expect(output!.body.byteLength).to.be.at.most(targetKb * KB);
      const meta = await sharp(output!.body).metadata();
      expect(meta.format).to.equal(format === 'avif' ? 'heif' : format);
      expect([meta.width, meta.height]).to.equal([480, 360]);
    });
  }

  it('the result is the best quality at or under the target: the highest quality whose plain compress fits', async () => {
    for (const format of ['jpeg', 'webp'] as const) {
      const targetKb = 12;
      const targeted = (await runOperation('image.compress', [jpeg], { format, target_kb: targetKb })).output!.body;
      let quality = 90;
      let plain = (await runOperation('image.compress', [jpeg], { format, quality })).output!.body;
      while (plain.byteLength > targetKb * KB) plain = (await runOperation('image.compress', [jpeg], { format, quality: --quality })).output!.body;
      expect(quality, format).to.be.below(90);
      expect(Buffer.from(targeted).equals(Buffer.from(plain)), `${format} at quality ${quality}`).to.be.true();
    }
  });

  it('a generous target returns the ceiling quality, encoded once', async () => {
    const plain = (await runOperation('image.compress', [jpeg], { quality: 80 })).output!.body;
    const targeted = (await runOperation('image.compress', [jpeg], { quality: 80, target_kb: 1_000_000 })).output!.body;
    expect(Buffer.from(targeted).equals(Buffer.from(plain))).to.be.true();
  });

  it('an unreachable target is 422 TARGET_UNREACHABLE naming the smallest size reached', async () => {
    const smallest = (await runOperation('image.compress', [jpeg], { quality: 1 })).output!.body.byteLength;
    expect(smallest).to.be.above(KB);
    const { error } = await runOperation('image.compress', [jpeg], { target_kb: 1 });
    expect(error).to.include({ code: 'TARGET_UNREACHABLE', status: 422, field: 'target_kb' });
    expect(error!.message).to.contain(`the smallest JPEG reached is ${smallest} bytes`);
    expect(error!.message).to.contain('quality 1');
    const png2 = await runOperation('image.compress', [png], { target_kb: 1 });
    expect(png2.error).to.include({ code: 'TARGET_UNREACHABLE', status: 422 });
    expect(png2.error!.message).to.match(/the smallest PNG reached is \d+ bytes \(\d+\.\d KB\), at 2 colours/);
  });

  it('target_kb is bounded: 0 and 1000001 are refused before any work', async () => {
    for (const value of [0, 1_000_001, 'ten']) {
      const { error } = await runOperation('image.compress', [jpeg], { target_kb: value });
      expect(error, String(value)).to.include({ code: 'FIELD_INVALID', field: 'target_kb' });
      expect(error!.message).to.contain('1 to 1000000');
    }
  });
});

describe('target_kb paid over HTTP on the local Base chain', () => {
  let t: TestService;
  let jpeg: Buffer;
  before(async () => {
    t = await startTestService();
    jpeg = await sharp(await detailedPhoto(480, 360)).jpeg({ quality: 95 }).toBuffer();
  });
  after(async () => { await t?.stop(); });

  it('a reachable target is charged the usual price; an unreachable one answers 422 after the work and charges nothing', async () => {
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const ok = await payFetch(`${t.url}/v1/image/compress`, { method: 'POST', body: form([jpeg], { target_kb: 8, format: 'webp' }) });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('content-type')).to.equal('image/webp');
    const body = Buffer.from(await ok.arrayBuffer());
    expect(body.byteLength).to.be.at.most(8 * KB);
    expect((await sharp(body).metadata()).format).to.equal('webp');
    const charged = await balancesOf(t.evm);
    expect(before.payer - charged.payer).to.equal(5000n);

    const quoted = await fetch(`${t.url}/v1/image/compress`, { method: 'POST', body: form([jpeg], { target_kb: 1 }) });
    expect(quoted.status).to.equal(402);
    const refused = await payFetch(`${t.url}/v1/image/compress`, { method: 'POST', body: form([jpeg], { target_kb: 1 }) });
    expect(refused.status).to.equal(422);
    const answer = await refused.json() as { error: { code: string; message: string; field: string } };
    expect(answer.error).to.include({ code: 'TARGET_UNREACHABLE', field: 'target_kb' });
    expect(answer.error.message).to.match(/the smallest JPEG reached is \d+ bytes/);
    expect(refused.headers.get('payment-response')).to.be.null();
    expect(await balancesOf(t.evm)).to.equal(charged);

    const pdf = makePdf([{ jpeg: { bytes: jpeg, width: 480, height: 360, color: true } }]);
    const pdfRefused = await payFetch(`${t.url}/v1/pdf/compress`, { method: 'POST', body: form([pdf], { target_kb: 1 }) });
    expect(pdfRefused.status).to.equal(422);
    expect((await pdfRefused.json() as { error: { code: string } }).error.code).to.equal('TARGET_UNREACHABLE');
    expect(await balancesOf(t.evm)).to.equal(charged);
  });
});

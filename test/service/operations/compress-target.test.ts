// Compress to a target size (target_kb) on /v1/image/compress and /v1/pdf/compress: the result
// is at or under the target and opens in another tool; an unreachable target is a 422 naming the
// smallest size reached, and a paid call for it charges nothing.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { makePdf, textPages } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { pdfFacts } from '../../support/independent-tools.js';
import { startTestService, form, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** A detailed picture (gradients and fixed-seed noise) that does not compress to nothing. */
async function photo(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let seed = 4242;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const i = (y * width + x) * 3;
      const noise = (seed >> 16) % 48;
      raw[i] = (x * 255 / width + noise) & 255;
      raw[i + 1] = (y * 255 / height + noise) & 255;
      raw[i + 2] = ((x ^ y) + noise) & 255;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).blur(0.6).png().toBuffer();
}

const KB = 1024;

describe('target_kb on /v1/image/compress', () => {
  let png: Buffer;
  let jpeg: Buffer;
  before(async () => {
    png = await photo(480, 360);
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

describe('target_kb on /v1/pdf/compress', () => {
  let pdf: Buffer;
  before(async () => {
    // About 190 dpi on an A4 page: every level below lossless has something to downsample.
    const picture = await sharp(await photo(1600, 2240)).jpeg({ quality: 92 }).toBuffer();
    pdf = makePdf([
      { text: 'Cover page', jpeg: { bytes: picture, width: 1600, height: 2240, color: true } },
      { jpeg: { bytes: picture, width: 1600, height: 2240, color: true } },
      ...textPages(1),
    ]);
  });

  it('reaches a target below what lossless and balanced make: at or under it, every page kept, qpdf --check clean', async () => {
    const balanced = (await runOperation('pdf.compress', [pdf], { level: 'balanced' })).output!.body.byteLength;
    const max = (await runOperation('pdf.compress', [pdf], { level: 'max' })).output!.body.byteLength;
    expect(max).to.be.below(balanced);
    const targetKb = Math.floor((balanced - 1) / KB);
    const { output, error } = await runOperation('pdf.compress', [pdf], { target_kb: targetKb });
    expect(error).to.not.exist();
    expect(output!.body.byteLength).to.be.at.most(targetKb * KB);
    const facts = await pdfFacts(output!.body);
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(3);
    expect(facts.text).to.contain('Cover page');
  });

  it('a target the input already meets returns the lossless rewrite or the input, no smaller than needed', async () => {
    const { output } = await runOperation('pdf.compress', [pdf], { target_kb: Math.ceil(pdf.length / KB) });
    const lossless = (await runOperation('pdf.compress', [pdf], { level: 'lossless' })).output!.body;
    expect(output!.body.byteLength).to.equal(lossless.byteLength);
  });

  it('an unreachable target is 422 TARGET_UNREACHABLE naming the smallest size reached', async () => {
    const { error } = await runOperation('pdf.compress', [pdf], { target_kb: 1 });
    expect(error).to.include({ code: 'TARGET_UNREACHABLE', status: 422, field: 'target_kb' });
    const reached = Number(/the smallest PDF reached is (\d+) bytes/.exec(error!.message)?.[1]);
    expect(reached).to.be.above(KB);
    const max = (await runOperation('pdf.compress', [pdf], { level: 'max' })).output!.body.byteLength;
    expect(reached).to.be.at.most(max);
  });

  it('level and target_kb together are refused before payment', async () => {
    const { error } = await runOperation('pdf.compress', [pdf], { level: 'max', target_kb: 100 });
    expect(error).to.include({ code: 'FIELD_INVALID', status: 422, field: 'target_kb' });
  });
});

describe('target_kb paid over HTTP on the local Base chain', () => {
  let t: TestService;
  let jpeg: Buffer;
  before(async () => {
    t = await startTestService();
    jpeg = await sharp(await photo(480, 360)).jpeg({ quality: 95 }).toBuffer();
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

// AVIF as an input of every image operation and as an output (format=avif): the header check
// before payment (size from the ispe property without decoding, the 40-megapixel limit, cut-short
// files, image sequences, HEIC named), and results that open in sharp at the exact size.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { ServiceError } from '../../../core/errors.js';
import { inspectImage } from '../../../checks/image.js';
import type { JobOutput } from '../../../core/job.js';
import type { OperationId } from '../../../operations/index.js';
import { plannedJob, jobRoot } from '../../support/jobs.js';
import { startTestService, form, type TestService } from '../../support/service.js';
import { FAKE_MODEL, startFakeProvider } from '../../support/fake-provider.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const W = 96;
const H = 64;

/** Gradients and a pattern: every pixel different, so a moved pixel shows. */
function pictureRaw(width: number, height: number): Buffer {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = Math.round((x * 255) / (width - 1));
      raw[i + 1] = Math.round((y * 255) / (height - 1));
      raw[i + 2] = (x * 7 + y * 13) % 256;
    }
  }
  return raw;
}

async function run(operation: string, bytes: Uint8Array, fields: Record<string, string | number> = {}): Promise<JobOutput> {
  const planned = await plannedJob(`image.${operation}` as OperationId, [bytes], fields, { root: jobRoot(), timeoutMs: 30_000 });
  return planned.run().finally(() => planned.jobDir.remove());
}

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await expect(promise).to.reject();
  expect(err).to.be.an.instanceof(ServiceError);
  return err as ServiceError;
}

/** A copy of an AVIF whose every ispe property (image size) says width x height. */
function declaring(avif: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(avif);
  let at = out.indexOf('ispe', 0, 'latin1');
  expect(at).to.be.above(0);
  while (at > 0) {
    out.writeUInt32BE(width, at + 8);
    out.writeUInt32BE(height, at + 12);
    at = out.indexOf('ispe', at + 4, 'latin1');
  }
  return out;
}

/** A copy with the ftyp box's major brand replaced. */
function withMajorBrand(avif: Buffer, brand: string): Buffer {
  const out = Buffer.from(avif);
  out.write(brand, 8, 'latin1');
  return out;
}

let avif: Buffer;
let avifWithAlpha: Buffer;
before(async () => {
  avif = await sharp(pictureRaw(W, H), { raw: { width: W, height: H, channels: 3 } }).avif({ quality: 80 }).toBuffer();
  const halfGreen = { r: 10, g: 200, b: 30, alpha: 0.5 };
  avifWithAlpha = await sharp({ create: { width: W, height: H, channels: 4, background: halfGreen } }).avif().toBuffer();
});

describe('AVIF input and output', () => {
  it('sharp here decodes and encodes AVIF (libheif with AV1), not HEIC', () => {
    expect(sharp.format.heif.input.buffer).to.be.true();
    expect(sharp.format.heif.output.buffer).to.be.true();
  });

  it('the header check reads an AVIF\'s format and size without decoding', async () => {
    expect(await inspectImage(avif)).to.include({ format: 'avif', width: W, height: H, hasAlpha: false });
    expect(await inspectImage(avifWithAlpha)).to.include({ format: 'avif', width: W, height: H, hasAlpha: true });
  });

  const cases: Array<{ operation: string; fields: Record<string, string | number>; width: number; height: number }> = [
    { operation: 'compress', fields: {}, width: W, height: H },
    { operation: 'resize', fields: { width: 48 }, width: 48, height: 32 },
    { operation: 'crop', fields: { x: 10, y: 5, width: 40, height: 30 }, width: 40, height: 30 },
    { operation: 'rotate', fields: { angle: 90 }, width: H, height: W },
    { operation: 'flip', fields: { direction: 'vertical' }, width: W, height: H },
  ];
  for (const { operation, fields, width, height } of cases) {
    it(`${operation}: AVIF in, to each output format (the input's by default), with the media type and exact size`, async () => {
      for (const format of [undefined, 'jpeg', 'png', 'webp', 'avif'] as const) {
        const result = await run(operation, avif, { ...fields, ...(format ? { format } : {}) });
        const expected = format ?? 'avif';
        expect(result.mediaType, String(format)).to.equal(`image/${expected}`);
        const meta = await sharp(result.body).metadata();
        expect(meta.format, String(format)).to.equal(expected === 'avif' ? 'heif' : expected);
        if (expected === 'avif') expect(meta.compression).to.equal('av1');
        expect([meta.width, meta.height], String(format)).to.equal([width, height]);
      }
    });
  }

  it('moves the pixels where asked: a vertical flip of an AVIF, decoded, mirrors the decoded input', async () => {
    const source = await sharp(avif).raw().toBuffer();
    const flipped = await sharp((await run('flip', avif, { direction: 'vertical', format: 'png' })).body).removeAlpha().raw().toBuffer();
    const row = W * 3;
    let max = 0;
    for (let y = 0; y < H; y++) {
      for (let i = 0; i < row; i++) max = Math.max(max, Math.abs(flipped[y * row + i] - source[(H - 1 - y) * row + i]));
    }
    expect(max).to.equal(0);
  });

  it('an AVIF turned by its irot property is handled upright: its size, a crop\'s coordinates and the pixels', async () => {
    // Stored 96 x 64 with the left half red; orientation 6 (sharp writes irot) shows it turned 90 degrees clockwise.
    const raw = Buffer.alloc(W * H * 3);
    for (let i = 0; i < raw.length; i += 3) if ((i / 3) % W < W / 2) raw[i] = 255;
    const turned = await sharp(raw, { raw: { width: W, height: H, channels: 3 } })
      .avif({ quality: 90 }).withMetadata({ orientation: 6 }).toBuffer();
    expect(turned.includes('irot', 0, 'latin1')).to.be.true();
    expect(await inspectImage(turned)).to.include({ format: 'avif', width: H, height: W });
    const whole = await run('crop', turned, { x: 0, y: 0, width: H, height: W, format: 'png' });
    const { data, info } = await sharp(whole.body).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).to.equal([H, W]);
    const red = (x: number, y: number) => data[(y * info.width + x) * info.channels];
    // The left half went to the top.
    expect(red(H / 2, 10)).to.be.above(200);
    expect(red(H / 2, W - 10)).to.be.below(50);
    const refused = await refusal(run('crop', turned, { x: 0, y: 0, width: W, height: H }));
    expect(refused.message).to.contain('the crop reaches past the right edge');
  });

  it('format=avif from JPEG, PNG and WebP; quality applies (lower quality, smaller file); alpha is kept', async () => {
    const raw = pictureRaw(320, 240);
    const jpeg = await sharp(raw, { raw: { width: 320, height: 240, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
    const png = await sharp(raw, { raw: { width: 320, height: 240, channels: 3 } }).png().toBuffer();
    const webp = await sharp(raw, { raw: { width: 320, height: 240, channels: 3 } }).webp().toBuffer();
    for (const input of [jpeg, png, webp]) {
      const result = await run('compress', input, { format: 'avif' });
      expect(result.mediaType).to.equal('image/avif');
      expect(await sharp(result.body).metadata()).to.include({ format: 'heif', compression: 'av1', width: 320, height: 240 });
    }
    const high = await run('compress', jpeg, { format: 'avif', quality: 90 });
    const low = await run('compress', jpeg, { format: 'avif', quality: 20 });
    expect(low.body.byteLength).to.be.below(high.body.byteLength);
    const alpha = await run('resize', avifWithAlpha, { width: 24 });
    expect(await sharp(alpha.body).metadata()).to.include({ format: 'heif', hasAlpha: true, width: 24, height: 16 });
  });

  it('AVIF output is refused before payment past 16384 pixels on a side, naming the format', async () => {
    const strip = await sharp({ create: { width: 200, height: 10, channels: 3, background: '#123456' } }).avif().toBuffer();
    // 18000 x 900: within 40 megapixels, past AVIF's side.
    const err = await refusal(plannedJob('image.resize', [strip], { height: 900, format: 'avif' }, { root: jobRoot() }));
    expect([err.code, err.status, err.extra.field]).to.equal(['FIELD_INVALID', 422, 'format']);
    expect(err.message).to.contain('AVIF output can be at most 16384 pixels on a side');
  });

  it('refuses an AVIF declaring 100000 x 100000 pixels (413) from its header, also when cut short', async () => {
    const bomb = declaring(avif, 100_000, 100_000);
    const err = await refusal(inspectImage(bomb));
    expect([err.code, err.status]).to.equal(['LIMIT_EXCEEDED', 413]);
    expect(err.message).to.contain('The image declares 100000 x 100000 pixels (10000.0 megapixels); the limit is 40 megapixels');
    expect((await refusal(inspectImage(declaring(avifWithAlpha, 8000, 5001)))).code).to.equal('LIMIT_EXCEEDED');
    // Cut short as well as oversized: the size is still what is reported.
    expect((await refusal(inspectImage(bomb.subarray(0, Math.floor(bomb.length * 0.8))))).code).to.equal('LIMIT_EXCEEDED');
  });

  it('refuses a cut-short AVIF (422) before payment: inside the image data, inside the meta box, and an mdat that runs to the end', async () => {
    for (const fraction of [0.95, 0.7, 0.3]) {
      const err = await refusal(inspectImage(avif.subarray(0, Math.floor(avif.length * fraction))));
      expect([err.code, err.status], String(fraction)).to.equal(['CORRUPT_INPUT', 422]);
      expect(err.message).to.match(/^The AVIF file is cut short/);
    }
    // An mdat box of size 0 ("to the end of the file") hides the cut from the box walk; the item locations show it.
    const mdat = avif.indexOf('mdat', 0, 'latin1') - 4;
    const open = Buffer.from(avif);
    open.writeUInt32BE(0, mdat);
    expect((await inspectImage(open)).format).to.equal('avif');
    const err = await refusal(inspectImage(open.subarray(0, open.length - 10)));
    expect(err.message).to.match(/^The AVIF file is cut short: its image data reaches byte \d+ but the file has \d+/);
  });

  it('an AVIF image sequence (avis) is 501 like animated WebP; HEIC is 422 naming it', async () => {
    const sequence = await refusal(inspectImage(withMajorBrand(avif, 'avis')));
    expect([sequence.code, sequence.status]).to.equal(['NOT_IMPLEMENTED', 501]);
    expect(sequence.message).to.contain('Animated AVIF');
    const heic = await refusal(inspectImage(Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypheic\0\0\0\0mif1heic', 'latin1'), avif.subarray(24)])));
    expect([heic.code, heic.status]).to.equal(['UNSUPPORTED_TYPE', 422]);
    expect(heic.message).to.contain('HEIC');
    expect(heic.message).to.contain('accepts JPEG, PNG, WebP or AVIF');
  });

  it('image.ocr reads an AVIF (local engine)', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="600" height="120"><rect width="100%" height="100%" fill="white"/><text x="20" y="80" font-family="DejaVu Sans" font-size="48" fill="black">Invoice 4711</text></svg>';
    const text = await sharp(Buffer.from(svg)).avif({ quality: 90 }).toBuffer();
    const planned = await plannedJob('image.ocr', [text], {}, { root: jobRoot() });
    const out = await planned.run().finally(() => planned.jobDir.remove());
    expect(JSON.parse(Buffer.from(out.body).toString('utf8')).text).to.contain('Invoice 4711');
  });
});

describe('AVIF to the model provider', () => {
  it('image.ocr sends an AVIF as JPEG (providers take JPEG, PNG and WebP), upright and at its size', async () => {
    const fake = await startFakeProvider(() => ({ content: 'avif text' }));
    try {
      const planned = await plannedJob('image.ocr', [avif], {}, {
        root: jobRoot(), settings: { ocrEngine: 'model', modelBaseUrl: fake.baseUrl, modelApiKey: 'sk-test', modelName: FAKE_MODEL },
      });
      const out = await planned.run().finally(() => planned.jobDir.remove());
      expect(JSON.parse(Buffer.from(out.body).toString('utf8'))).to.equal({ text: 'avif text' });
      const url = fake.received[0]?.imageUrls[0] as string;
      expect(url.startsWith('data:image/jpeg;base64,')).to.be.true();
      expect(await sharp(Buffer.from(url.split(',')[1], 'base64')).metadata()).to.include({ format: 'jpeg', width: W, height: H });
    } finally {
      await fake.close();
    }
  });
});

describe('AVIF over HTTP, before payment', () => {
  let t: TestService;
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('an AVIF is quoted with its output type; a 100000 x 100000 AVIF header is 413 and a cut-short one 422, without a 402 or a job', async () => {
    const quoted = await fetch(`${t.url}/v1/image/rotate`, { method: 'POST', body: form([avif], { angle: 90 }) });
    expect(quoted.status).to.equal(402);
    const jobs = await t.metric('paydoc_jobs_total', { outcome: 'started' });
    const bomb = await fetch(`${t.url}/v1/image/resize`, { method: 'POST', body: form([declaring(avif, 100_000, 100_000)], { width: 10 }) });
    expect(bomb.status).to.equal(413);
    expect(bomb.headers.get('payment-required')).to.be.null();
    expect(((await bomb.json()) as { error: { code: string } }).error.code).to.equal('LIMIT_EXCEEDED');
    const cut = await fetch(`${t.url}/v1/image/compress`, { method: 'POST', body: form([avif.subarray(0, avif.length - 40)]) });
    expect(cut.status).to.equal(422);
    expect(((await cut.json()) as { error: { code: string } }).error.code).to.equal('CORRUPT_INPUT');
    expect(await t.metric('paydoc_jobs_total', { outcome: 'started' })).to.equal(jobs);
  });
});

// The five image transforms, one pipeline: decode (bounded, strict about broken data),
// turn upright by EXIF orientation, apply the one operation, encode to the chosen format.
// Every output is written without EXIF, XMP, IPTC or comments: sharp drops them unless
// asked to keep them, and the jpegtran path copies at most the ICC profile.
import sharp, { type Sharp } from 'sharp';
import { fail, ServiceError } from '../../core/errors.js';
import { IMAGE_MEDIA_TYPES, MAX_IMAGE_PIXELS, type ImageHeader } from '../../checks/image.js';
import { DEFAULT_QUALITY, type Encoding, type ImagePlan, type ImageTransform } from '../../operations/image/image-plan.js';
import type { Job, JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import { transformJpeg, type JpegTransform } from '../../tools/engines/jpegtran.js';
import { quantisePng } from '../../tools/engines/pngquant.js';

// This module is loaded only inside pool workers: one libvips thread per worker (the pool
// provides the parallelism) and a small operation cache, since no two jobs share an image.
sharp.concurrency(1);
sharp.cache({ memory: 32, files: 0, items: 32 });

// libaom's effort: sharp's default (4) took 28 s on a noisy 6 MP image for a file no smaller than
// effort 1's, which takes about a second on one thread; quality still sets the size.
const AVIF_EFFORT = 1;
// Fast palette quantisation: effort 1 was several times faster than the default (7) for files
// within a few per cent of the same size.
const PALETTE_EFFORT = 1;
const SHARP_PALETTE_SIZES: readonly number[] = [2, 4, 16, 256];

// ---- Lossless JPEG rotate and flip -------------------------------------------------------

// A rotation or mirror as a 2x2 matrix on pixel coordinates (y pointing down), so that the
// EXIF orientation and the requested operation compose into the one transform jpegtran applies.
type Matrix = readonly [number, number, number, number];
const TRANSFORMS: ReadonlyArray<{ matrix: Matrix; jpegtran: JpegTransform }> = [
  { matrix: [1, 0, 0, 1], jpegtran: 'none' },
  { matrix: [0, -1, 1, 0], jpegtran: 'rotate90' },
  { matrix: [-1, 0, 0, -1], jpegtran: 'rotate180' },
  { matrix: [0, 1, -1, 0], jpegtran: 'rotate270' },
  { matrix: [-1, 0, 0, 1], jpegtran: 'flipHorizontal' },
  { matrix: [1, 0, 0, -1], jpegtran: 'flipVertical' },
  { matrix: [0, 1, 1, 0], jpegtran: 'transpose' },
  { matrix: [0, -1, -1, 0], jpegtran: 'transverse' },
];
// What each EXIF orientation value asks a viewer to do to the stored pixels.
const ORIENTATION: Record<number, Matrix> = {
  1: [1, 0, 0, 1], 2: [-1, 0, 0, 1], 3: [-1, 0, 0, -1], 4: [1, 0, 0, -1],
  5: [0, 1, 1, 0], 6: [0, -1, 1, 0], 7: [0, -1, -1, 0], 8: [0, 1, -1, 0],
};

function multiply(a: Matrix, b: Matrix): Matrix {
  return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]];
}

type Turn = Extract<ImageTransform, { kind: 'rotate' | 'flip' }>;

function requestedMatrix(turn: Turn): Matrix {
  if (turn.kind === 'flip') return turn.direction === 'vertical' ? [1, 0, 0, -1] : [-1, 0, 0, 1];
  return turn.angle === 90 ? [0, -1, 1, 0] : turn.angle === 180 ? [-1, 0, 0, -1] : [0, 1, -1, 0];
}

/**
 * Rotates or mirrors the compressed JPEG data itself, so no pixel is decoded or re-quantised.
 * Returns undefined when that is not possible and the caller re-encodes instead: jpegtran is
 * missing, the image's edge blocks are partial for this transform (-perfect refuses rather
 * than trimming the edge), or the data has errors it warns about.
 */
async function losslessJpegTransform(input: Job<ImagePlan>, header: ImageHeader, turn: Turn): Promise<Uint8Array | undefined> {
  const bytes = input.files[0].bytes;
  const total = multiply(requestedMatrix(turn), ORIENTATION[header.orientation] ?? ORIENTATION[1]);
  const transform = TRANSFORMS.find((t) => t.matrix.every((v, i) => v === total[i]));
  if (!transform) return undefined;
  return transformJpeg(bytes, transform.jpegtran, header.hasProfile, { cwd: input.jobDir, timeoutMs: timeLeft(input) });
}

// ---- The sharp pipeline ------------------------------------------------------------------

// Decoding is strict: libjpeg reports damaged entropy-coded data ("premature end of data
// segment", "bad Huffman code") only as warnings, and decoding through them makes a grey or
// smeared picture that would be charged as a result. Other warnings (stray bytes before a marker,
// which many camera files carry; libpng's notes on colour profiles) are harmless: such a file is
// decoded again, failing on errors only.
const DAMAGE_WARNING = /premature end of data segment|bad Huffman code|bad arithmetic code|instead of RST|Premature end of JPEG file|Inconsistent progression sequence/i;
type Strictness = 'warning' | 'error';

function decode(bytes: Uint8Array, input: Job<ImagePlan>, failOn: Strictness): Sharp {
  return sharp(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
    failOn,
    limitInputPixels: MAX_IMAGE_PIXELS,
    autoOrient: true,
  }).timeout({ seconds: Math.max(1, Math.floor(timeLeft(input) / 1000)) });
}

function applyTransform(image: Sharp, transform: ImageTransform): Sharp {
  switch (transform.kind) {
    case 'resize': return image.resize(transform.width, transform.height, { fit: transform.fit, position: 'centre' });
    case 'crop': return image.extract({ left: transform.left, top: transform.top, width: transform.width, height: transform.height });
    case 'rotate': return image.rotate(transform.angle);
    case 'flip': return transform.direction === 'vertical' ? image.flip() : image.flop();
    case 'compress': return image;
  }
}

async function encode(
  image: Sharp, compressing: boolean, encoding: Encoding, header: ImageHeader, input: Job<ImagePlan>,
): Promise<Uint8Array> {
  const colors = encoding.paletteColors;
  if (encoding.format === 'png' && colors !== undefined && !SHARP_PALETTE_SIZES.includes(colors)) {
    return quantiseWithPngquant(image, colors, input);
  }
  // RGB images keep their ICC profile and their pixel values untouched (a Display P3 photo
  // stays wide-gamut); CMYK is converted to sRGB, which all three output formats display.
  if (header.hasProfile && header.space !== 'cmyk') image = image.keepIccProfile();
  switch (encoding.format) {
    case 'jpeg':
      if (header.hasAlpha) image = image.flatten({ background: '#ffffff' });
      if (header.space === 'b-w' || header.space === 'grey16') image = image.toColourspace('b-w');
      // mozjpeg's trellis quantisation makes files about a quarter smaller at two to five
      // times the encode time: worth it where size is the point.
      return image.jpeg(compressing ? { quality: encoding.quality, mozjpeg: true } : { quality: encoding.quality }).toBuffer();
    case 'webp':
      return image.webp({ quality: encoding.quality }).toBuffer();
    case 'avif':
      // 8 bits per channel, 4:4:4 (sharp's default for AVIF): grey and 16-bit inputs become 8-bit colour.
      return image.avif({ quality: encoding.quality, effort: AVIF_EFFORT }).toBuffer();
    case 'png':
      if (colors !== undefined) {
        return image.png({ palette: true, colours: colors, effort: PALETTE_EFFORT, compressionLevel: 9 }).toBuffer();
      }
      // True colour keeps grey as grey and 16-bit as 16-bit, so lossless means lossless.
      if (header.space === 'b-w' || header.space === 'grey16' || header.space === 'rgb16') image = image.toColourspace(header.space);
      return image.png({ compressionLevel: 6, adaptiveFiltering: true }).toBuffer();
  }
}

/**
 * libvips takes a palette size only as a PNG bit depth (2, 4, 16 or 256 entries), so other
 * counts go to pngquant, which runs the same quantiser (libimagequant) with an exact count.
 */
async function quantiseWithPngquant(image: Sharp, colors: number, input: Job<ImagePlan>): Promise<Uint8Array> {
  // Fast deflate: this PNG only crosses a pipe. Colours are converted to sRGB first, since
  // this pngquant build cannot read ICC profiles.
  const { data: trueColour, info } = await image.png({ compressionLevel: 1 }).toBuffer({ resolveWithObject: true });
  // pngquant's speed runs the other way from sharp's effort (11 fastest).
  const outputBound = info.width * info.height * 2 + 1024 * 1024;
  return quantisePng(trueColour, colors, 11 - PALETTE_EFFORT, outputBound, { cwd: input.jobDir, timeoutMs: timeLeft(input) });
}

/** Runs a pipeline strictly, and once more failing on errors only when the file's one warning is harmless. */
async function strictly<T>(run: (failOn: Strictness) => Promise<T>): Promise<T> {
  try {
    return await run('warning');
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    if (DAMAGE_WARNING.test(message) || /timeout|pixel limit/i.test(message)) throw err;
    return run('error');
  }
}

/** Whether the data itself fails to decode, as opposed to our own pipeline failing. */
async function decodes(bytes: Uint8Array, input: Job<ImagePlan>): Promise<boolean> {
  try {
    await strictly((failOn) => decode(bytes, input, failOn).stats());
    return true;
  } catch {
    return false;
  }
}

// ---- Compress to a target size ------------------------------------------------------------

export interface TargetSearch {
  body: Uint8Array;
  /** The setting the body was made at: quality (JPEG, WebP, AVIF) or colours (PNG). */
  setting: number;
  /** How many encodes the search made. */
  encodes: number;
}

function kilobytes(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/**
 * PNG: the most colours at or under the target among `colors` and the powers of two below it
 * (128, 64, ..., 2): the ceiling first, then the floor, then halving the ladder, at most five
 * encodes. (Size is far from regular in the colour count: the quality search's secant overshot
 * and took ten or eleven encodes of several seconds each on a 12 MP photo.)
 */
type Render = (encoding: Encoding) => Promise<Uint8Array>;

async function searchColours(render: Render, encoding: Encoding, targetBytes: number, deadline: number): Promise<TargetSearch> {
  const ceiling = encoding.paletteColors ?? 256;
  const ladder = [ceiling];
  for (let colours = 2 ** Math.floor(Math.log2(ceiling - 1)); colours >= 2; colours /= 2) ladder.push(colours);
  let encodes = 0;
  let slowest = 0;
  const measure = async (index: number) => {
    const started = Date.now();
    encodes += 1;
    const body = await render({ ...encoding, paletteColors: ladder[index] });
    slowest = Math.max(slowest, Date.now() - started);
    return body;
  };
  const top = await measure(0);
  if (top.byteLength <= targetBytes) return { body: top, setting: ceiling, encodes };
  const last = ladder.length - 1;
  if (last === 0) unreachable(encoding, targetBytes, top.byteLength, ceiling);
  let best = { index: last, body: await measure(last) };
  if (best.body.byteLength > targetBytes) unreachable(encoding, targetBytes, Math.min(top.byteLength, best.body.byteLength), ladder[last]);
  let over = 0;
  while (best.index - over > 1) {
    if (Date.now() + slowest * 1.5 > deadline) break;
    const middle = Math.floor((best.index + over) / 2);
    const body = await measure(middle);
    if (body.byteLength <= targetBytes) best = { index: middle, body };
    else over = middle;
  }
  return { body: best.body, setting: ladder[best.index], encodes };
}

/**
 * The best setting at or under the target: the highest quality from the requested one down to 1
 * (JPEG, WebP, AVIF), or for PNG the most colours (searchColours). The ceiling is encoded first
 * (enough when the target is generous). Below it, the logarithm of the size is taken as about linear
 * in the quality: a secant through the last two
 * measurements guesses the setting that meets the target, until one guess fits and one does not
 * (or the floor is measured over the target: unreachable); between those two the guesses are
 * interpolated the same way, with a plain halving whenever a guess leaves the same end standing
 * twice. Three to seven encodes on photos, where halving the range alone took eight or nine.
 * Every body returned was measured, so the result is at or under the target even where a codec's
 * size is not quite monotonic in its setting. `deadline` (epoch ms) ends the search early, with the
 * best fitting result so far, when another encode, judged by the slowest one yet, would not finish.
 */
export async function searchTarget(render: Render, encoding: Encoding, targetBytes: number, deadline = Infinity): Promise<TargetSearch> {
  if (encoding.format === 'png') return searchColours(render, encoding, targetBytes, deadline);
  const ceiling = encoding.quality;
  const floor = 1;
  const at = (setting: number): Encoding => ({ ...encoding, quality: setting });
  const goal = Math.log(targetBytes);
  let encodes = 0;
  let slowest = 0;
  const measure = async (setting: number): Promise<{ setting: number; body: Uint8Array; size: number }> => {
    const started = Date.now();
    encodes += 1;
    const body = await render(at(setting));
    slowest = Math.max(slowest, Date.now() - started);
    return { setting, body, size: body.byteLength };
  };
  /** The quality where the line through a and b (quality, log size) meets the target. */
  const guess = (a: { setting: number; size: number }, b: { setting: number; size: number }): number | undefined => {
    const ya = Math.log(a.size);
    const yb = Math.log(b.size);
    if (ya === yb) return undefined;
    const x = a.setting + ((goal - ya) * (b.setting - a.setting)) / (yb - ya);
    return Number.isFinite(x) ? Math.round(x) : undefined;
  };

  const top = await measure(ceiling);
  if (top.size <= targetBytes) return { body: top.body, setting: ceiling, encodes };
  // Going down: every measurement so far is over the target.
  let over = top;
  let previous: typeof top | undefined;
  let best: typeof top | undefined;
  while (!best) {
    if (over.setting === floor) unreachable(encoding, targetBytes, over.size, floor);
    if (previous && Date.now() + slowest * 1.5 > deadline) fail('JOB_TIMEOUT');
    const step = Math.max(floor, over.setting - 10);
    const predicted = previous ? guess(over, previous) : undefined;
    // A little under the prediction, so that it lands on the fitting side; never above the last miss.
    const next = Math.max(floor, Math.min(over.setting - 1, predicted === undefined || predicted >= over.setting ? step : predicted - 1));
    const measured = await measure(next);
    if (measured.size <= targetBytes) best = measured;
    else { previous = over; over = measured; }
  }
  // The bracket: best fits, over does not.
  let keptSide: 'fits' | 'over' | undefined;
  let kept = 0;
  while (over.setting - best.setting > 1) {
    if (Date.now() + slowest * 1.5 > deadline) break;
    const predicted = kept >= 2 ? undefined : guess(best, over);
    const middle = Math.floor((over.setting + best.setting) / 2);
    const next = Math.min(over.setting - 1, Math.max(best.setting + 1, predicted ?? middle));
    const measured = await measure(next);
    const side = measured.size <= targetBytes ? 'fits' : 'over';
    if (side === 'fits') best = measured;
    else over = measured;
    kept = side === keptSide ? kept + 1 : 1;
    keptSide = side;
  }
  return { body: best.body, setting: best.setting, encodes };
}

function unreachable(encoding: Encoding, targetBytes: number, smallest: number, lowest: number): never {
  const what = encoding.format === 'png' ? `${lowest} colours` : `quality ${lowest}`;
  fail('TARGET_UNREACHABLE',
    `target_kb = ${targetBytes / 1024} (${targetBytes} bytes) cannot be reached: the smallest ${encoding.format.toUpperCase()} reached is ${smallest} bytes (${kilobytes(smallest)}), at ${what}; nothing was charged`,
    { field: 'target_kb' });
}

/** The job's whole pipeline (decode, transform, encode) at a given encoding: what the target search repeats. */
export function renderer(input: Job<ImagePlan>): (encoding: Encoding) => Promise<Uint8Array> {
  const { header, transform } = input.params;
  return (at) => strictly((failOn) => encode(applyTransform(decode(input.files[0].bytes, input, failOn), transform), transform.kind === 'compress', at, header, input));
}

/** The five image transforms: the plan settled the header, the transform and the encoding before payment. */
export const transformImage: WorkFunction<ImagePlan> = async (input): Promise<JobOutput> => {
  const file = input.files[0];
  const { header, encoding, transform } = input.params;
  const mediaType = IMAGE_MEDIA_TYPES[encoding.format];

  // The lossless path is taken unless a quality below the default was asked for, which
  // means the caller wants a smaller file and so a re-encode.
  if ((transform.kind === 'rotate' || transform.kind === 'flip') && header.format === 'jpeg' && encoding.format === 'jpeg' && encoding.quality >= DEFAULT_QUALITY) {
    const lossless = await losslessJpegTransform(input, header, transform);
    if (lossless) return { body: lossless, mediaType };
  }

  const render = renderer(input);
  try {
    const { targetBytes } = input.params;
    const body = targetBytes === undefined
      ? await render(encoding)
      : (await searchTarget(render, encoding, targetBytes, input.deadline - 500)).body;
    return { body, mediaType };
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    const message = err instanceof Error ? err.message : '';
    if (/timeout/i.test(message)) fail('JOB_TIMEOUT');
    if (/pixel limit/i.test(message)) fail('LIMIT_EXCEEDED', `The image is larger than ${MAX_IMAGE_PIXELS / 1e6} megapixels`, { field: 'file' });
    if (!(await decodes(file.bytes, input))) {
      fail('CORRUPT_INPUT', `The ${header.format.toUpperCase()} image data is damaged or cut short and cannot be decoded`, { field: 'file' });
    }
    throw err;
  }
};

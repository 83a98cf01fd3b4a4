// What the five image transforms share: the encoding fields, and a plan that settles the output
// format, quality and palette and refuses a result too large for its format, all before payment.
import { fail } from '../../core/errors.js';
import { IMAGE_FORMATS, IMAGE_MEDIA_TYPES, MAX_IMAGE_PIXELS, MAX_SIDE, type ImageFormat, type ImageHeader } from '../../checks/image.js';
import type { FieldSpec, InspectedFile, PlanInput } from '../define.js';
import type { EngineCommand } from '../../tools/engines/index.js';

export const IMAGE_ENCODING_FIELDS = [
  { name: 'format', type: 'string', enum: IMAGE_FORMATS, description: 'Target format; defaults to the input format.' },
  { name: 'quality', type: 'integer', minimum: 1, maximum: 100, default: 90, description: 'JPEG, WebP and AVIF quality (ignored for PNG).' },
  {
    name: 'colors', type: 'integer', minimum: 2, maximum: 256, default: 256,
    description: 'PNG palette size (PNG only). Sending it, or calling compress, makes a palette PNG; otherwise PNG output is true colour.',
  },
] as const satisfies readonly FieldSpec[];

// pngquant makes exact palette sizes; jpegtran rotates and mirrors JPEGs losslessly.
export const IMAGE_ENGINES: readonly EngineCommand[] = ['pngquant', 'jpegtran'];

/** The quality below which a rotate or flip re-encodes rather than moving JPEG blocks losslessly. */
export const DEFAULT_QUALITY = 90;

export interface Encoding {
  format: ImageFormat;
  quality: number;
  /** Palette size when the PNG output is quantised; undefined for true colour. */
  paletteColors?: number;
}

export type ImageTransform =
  | { kind: 'compress' }
  | { kind: 'resize'; width: number; height: number; fit: 'cover' | 'fill' }
  | { kind: 'crop'; left: number; top: number; width: number; height: number }
  | { kind: 'rotate'; angle: 90 | 180 | 270 }
  | { kind: 'flip'; direction: 'horizontal' | 'vertical' };

export interface ImagePlan {
  /** The upload's header as read before payment: the worker does not read it again. */
  header: ImageHeader;
  encoding: Encoding;
  transform: ImageTransform;
  /** compress with target_kb: the result must be at most this many bytes (the search's bound). */
  targetBytes?: number;
}

export function imageHeaderOf(file: InspectedFile): ImageHeader {
  if (file.kind !== 'image') throw new Error('an image operation was given a non-image file');
  return file.header;
}

/**
 * The whole plan of an image transform. `transform` gives the operation from the upright size,
 * and `field` names the field a too-large result is blamed on.
 */
export function planImage(
  input: PlanInput<typeof IMAGE_ENCODING_FIELDS>, kind: ImageTransform['kind'],
  transform: (header: ImageHeader) => { transform: ImageTransform; width: number; height: number },
  field = 'file',
): ImagePlan {
  const header = imageHeaderOf(input.files[0]);
  const { fields } = input;
  // Unless a format is asked for, the output keeps the input's format.
  const format = fields.format ?? header.format;
  // PNG palette quantisation applies on compress or whenever colors is sent explicitly.
  const wantsPalette = kind === 'compress' || input.sent('colors');
  const encoding: Encoding = {
    format,
    quality: fields.quality,
    ...(format === 'png' && wantsPalette ? { paletteColors: fields.colors } : {}),
  };
  const planned = transform(header);
  const { width, height } = planned;
  if (width * height > MAX_IMAGE_PIXELS) {
    fail('LIMIT_EXCEEDED', `The result would be ${width} x ${height} pixels (${(width * height / 1e6).toFixed(1)} megapixels); the limit is ${MAX_IMAGE_PIXELS / 1e6} megapixels`, { field });
  }
  if (Math.max(width, height) > MAX_SIDE[format]) {
    fail('FIELD_INVALID', `${format.toUpperCase()} output can be at most ${MAX_SIDE[format]} pixels on a side; the result would be ${width} x ${height} pixels`, { field: 'format' });
  }
  return { header, encoding, transform: planned.transform };
}

/** The image the client will get is in the format the plan settled. */
export function imageMediaType(plan: ImagePlan): string {
  return IMAGE_MEDIA_TYPES[plan.encoding.format];
}

import type { ImageHeader } from '../../checks/image.js';
import { atLeastOneOf, defineOperation, type FieldSpec, type FieldValuesOf } from '../define.js';
import { IMAGE_INPUT, IMAGE_TIMEOUT_MS } from '../shared.js';
import { IMAGE_ENGINES, IMAGE_ENCODING_FIELDS, planImage, type ImageTransform, imageMediaType } from './image-plan.js';

const BOX_FIELDS = [
  { name: 'width', type: 'integer', minimum: 1, maximum: 16384, description: 'Target width in pixels (at least one of width and height).' },
  { name: 'height', type: 'integer', minimum: 1, maximum: 16384, description: 'Target height in pixels (at least one of width and height).' },
  { name: 'fit', type: 'string', enum: ['contain', 'cover', 'fill'], default: 'contain', description: 'How the image fits a width x height box.' },
] as const satisfies readonly FieldSpec[];

/**
 * The exact output size: with one side the other follows the aspect ratio; contain meets the
 * side that constrains more and lets the other follow. The worker resizes to these numbers, so
 * they are what the client gets, and what the pixel limit is checked on before payment.
 */
export function resizeTo(fields: FieldValuesOf<typeof BOX_FIELDS>, image: Pick<ImageHeader, 'width' | 'height'>): Extract<ImageTransform, { kind: 'resize' }> {
  const { width, height, fit } = fields;
  const scaled = (side: number, factor: number) => Math.max(1, Math.round(side * factor));
  if (height === undefined) return { kind: 'resize', width: width!, height: scaled(image.height, width! / image.width), fit: 'fill' };
  if (width === undefined) return { kind: 'resize', width: scaled(image.width, height / image.height), height, fit: 'fill' };
  if (fit === 'cover' || fit === 'fill') return { kind: 'resize', width, height, fit };
  if (width / image.width <= height / image.height) return { kind: 'resize', width, height: scaled(image.height, width / image.width), fit: 'fill' };
  return { kind: 'resize', width: scaled(image.width, height / image.height), height, fit: 'fill' };
}

export const imageResize = defineOperation({
  id: 'image.resize', title: 'Resize an image',
  description: 'Resizes to width and/or height. With one side only, the other follows the aspect ratio and fit is ignored. contain fits inside the box (aspect kept, no padding: the result may be smaller on one side), cover fills the box and crops the overflow centred, fill stretches to exactly the box.',
  category: 'image-processing',
  fields: [
    ...BOX_FIELDS,
    ...IMAGE_ENCODING_FIELDS,
  ],
  checkFields: atLeastOneOf('resize', 'width', 'height'),
  input: IMAGE_INPUT, price: { model: 'flat', rate: 5000 },
  output: { mediaType: 'image', description: 'The resized image (image/jpeg, image/png, image/webp or image/avif).' },
  resultMediaType: imageMediaType, content: { local: true }, engines: IMAGE_ENGINES, timeoutMs: IMAGE_TIMEOUT_MS,
  plan: (input) => planImage(input, 'resize', (image) => {
    const transform = resizeTo(input.fields, image);
    return { transform, width: transform.width, height: transform.height };
  }, 'width'),
});

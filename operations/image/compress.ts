import { defineOperation, type FieldSpec } from '../define.js';
import { IMAGE_INPUT, IMAGE_TIMEOUT_MS, KB, TARGET_KB_BOUNDS, TARGET_UNPROCESSABLE } from '../shared.js';
import { IMAGE_ENGINES, IMAGE_ENCODING_FIELDS, planImage, imageMediaType } from './image-plan.js';

const TARGET_KB = {
  name: 'target_kb', type: 'integer', ...TARGET_KB_BOUNDS,
  description: `Compress to a size: at most this many kilobytes (1 KB = 1024 bytes; ${TARGET_KB_BOUNDS.minimum} to ${TARGET_KB_BOUNDS.maximum}). `
    + 'The result is the highest quality up to `quality` (JPEG, WebP, AVIF), or the most colours among `colors` and the powers of two below it (PNG), at or under the target, '
    + 'found by a search of a few encodes on measured sizes. When even the lowest setting is larger, the answer is 422 TARGET_UNREACHABLE naming the smallest size reached, and nothing is charged.',
} as const satisfies FieldSpec;

export const imageCompress = defineOperation({
  id: 'image.compress', title: 'Compress or convert an image',
  description: 'Re-encodes a JPEG, PNG, WebP or AVIF image, optionally converting it; PNG output is palette-quantised to `colors`. With `target_kb`, the best quality at or under that size.',
  category: 'image-processing', fields: [...IMAGE_ENCODING_FIELDS, TARGET_KB], input: IMAGE_INPUT,
  price: { model: 'flat', rate: 5000 },
  output: { mediaType: 'image', description: 'The compressed image (image/jpeg, image/png, image/webp or image/avif).', unprocessable: TARGET_UNPROCESSABLE },
  resultMediaType: imageMediaType, content: { local: true }, engines: IMAGE_ENGINES, timeoutMs: IMAGE_TIMEOUT_MS,
  plan: (input) => {
    const plan = planImage(input, 'compress', (image) => ({ transform: { kind: 'compress' }, width: image.width, height: image.height }));
    const targetKb = input.fields.target_kb;
    return targetKb === undefined ? plan : { ...plan, targetBytes: targetKb * KB };
  },
});

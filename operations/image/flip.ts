import { defineOperation } from '../define.js';
import { IMAGE_INPUT, IMAGE_TIMEOUT_MS } from '../shared.js';
import { IMAGE_ENGINES, IMAGE_ENCODING_FIELDS, planImage, imageMediaType } from './image-plan.js';

export const imageFlip = defineOperation({
  id: 'image.flip', title: 'Mirror an image',
  description: 'Mirrors the image horizontally (left-right) or vertically (top-bottom).',
  category: 'image-processing',
  fields: [
    { name: 'direction', type: 'string', enum: ['horizontal', 'vertical'], required: true, description: 'horizontal mirrors left-right; vertical mirrors top-bottom.' },
    ...IMAGE_ENCODING_FIELDS,
  ],
  input: IMAGE_INPUT, price: { model: 'flat', rate: 5000 },
  output: { mediaType: 'image', description: 'The mirrored image (image/jpeg, image/png, image/webp or image/avif).' },
  resultMediaType: imageMediaType, content: { local: true }, engines: IMAGE_ENGINES, timeoutMs: IMAGE_TIMEOUT_MS,
  plan: (input) => planImage(input, 'flip', (image) => ({
    transform: { kind: 'flip', direction: input.fields.direction }, width: image.width, height: image.height,
  })),
});

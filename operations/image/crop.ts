import { fail } from '../../core/errors.js';
import { defineOperation } from '../define.js';
import { IMAGE_INPUT, IMAGE_TIMEOUT_MS } from '../shared.js';
import { IMAGE_ENGINES, IMAGE_ENCODING_FIELDS, planImage, imageMediaType } from './image-plan.js';

export const imageCrop = defineOperation({
  id: 'image.crop', title: 'Crop an image',
  description: 'Cuts the exact rectangle (x, y, width, height) in pixels of the upright image. A rectangle reaching outside the image is refused with 422 naming the edge; it is never clamped.',
  category: 'image-processing',
  fields: [
    { name: 'width', type: 'integer', minimum: 1, maximum: 16384, required: true, description: 'Width of the rectangle in pixels.' },
    { name: 'height', type: 'integer', minimum: 1, maximum: 16384, required: true, description: 'Height of the rectangle in pixels.' },
    { name: 'x', type: 'integer', minimum: 0, maximum: 16383, default: 0, description: 'Left edge of the rectangle.' },
    { name: 'y', type: 'integer', minimum: 0, maximum: 16383, default: 0, description: 'Top edge of the rectangle.' },
    ...IMAGE_ENCODING_FIELDS,
  ],
  input: IMAGE_INPUT, price: { model: 'flat', rate: 5000 },
  output: { mediaType: 'image', description: 'The cropped image (image/jpeg, image/png, image/webp or image/avif).' },
  resultMediaType: imageMediaType, content: { local: true }, engines: IMAGE_ENGINES, timeoutMs: IMAGE_TIMEOUT_MS,
  plan: (input) => planImage(input, 'crop', (image) => {
    const { width, height, x: left, y: top } = input.fields;
    if (left >= image.width) {
      fail('FIELD_INVALID', `the crop starts past the right edge: x = ${left} but the image is ${image.width} pixels wide`, { field: 'x' });
    }
    if (top >= image.height) {
      fail('FIELD_INVALID', `the crop starts past the bottom edge: y = ${top} but the image is ${image.height} pixels high`, { field: 'y' });
    }
    if (left + width > image.width) {
      fail('FIELD_INVALID', `the crop reaches past the right edge: x + width = ${left + width} but the image is ${image.width} pixels wide`, { field: 'width' });
    }
    if (top + height > image.height) {
      fail('FIELD_INVALID', `the crop reaches past the bottom edge: y + height = ${top + height} but the image is ${image.height} pixels high`, { field: 'height' });
    }
    return { transform: { kind: 'crop', left, top, width, height }, width, height };
  }),
});

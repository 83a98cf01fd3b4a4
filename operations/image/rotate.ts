import { defineOperation } from '../define.js';
import { IMAGE_INPUT, IMAGE_TIMEOUT_MS } from '../shared.js';
import { IMAGE_ENGINES, IMAGE_ENCODING_FIELDS, planImage, imageMediaType } from './image-plan.js';

export const imageRotate = defineOperation({
  id: 'image.rotate', title: 'Rotate an image',
  description: 'Rotates clockwise by 90, 180 or 270 degrees, moving pixels without resampling.',
  category: 'image-processing',
  fields: [
    { name: 'angle', type: 'integer', enum: [90, 180, 270], required: true, description: 'Clockwise angle in degrees.' },
    ...IMAGE_ENCODING_FIELDS,
  ],
  input: IMAGE_INPUT, price: { model: 'flat', rate: 5000 },
  output: { mediaType: 'image', description: 'The rotated image (image/jpeg, image/png, image/webp or image/avif).' },
  resultMediaType: imageMediaType, content: { local: true }, engines: IMAGE_ENGINES, timeoutMs: IMAGE_TIMEOUT_MS,
  plan: (input) => planImage(input, 'rotate', (image) => {
    const angle = input.fields.angle;
    const upright = angle === 180;
    return { transform: { kind: 'rotate', angle }, width: upright ? image.width : image.height, height: upright ? image.height : image.width };
  }),
});

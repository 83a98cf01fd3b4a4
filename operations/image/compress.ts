import { defineOperation } from '../define.js';
import { IMAGE_INPUT, IMAGE_TIMEOUT_MS } from '../shared.js';
import { IMAGE_BINARIES, IMAGE_ENCODING_FIELDS, planImageJob, imageMediaType } from './image-job.js';

export const imageCompress = defineOperation({
  id: 'image.compress', title: 'Compress or convert an image',
  description: 'Re-encodes a JPEG, PNG or WebP image, optionally converting it; PNG output is palette-quantised to `colors`.',
  category: 'image-processing', fields: IMAGE_ENCODING_FIELDS, input: IMAGE_INPUT,
  price: { model: 'flat', rate: 5000 }, output: { mediaType: 'image', description: 'The compressed image (image/jpeg, image/png or image/webp).' },
  resultMediaType: imageMediaType, thirdParty: false, binaries: IMAGE_BINARIES, timeoutMs: IMAGE_TIMEOUT_MS,
  plan: (input) => planImageJob(input, 'compress', (image) => ({ transform: { kind: 'compress' }, width: image.width, height: image.height })),
});

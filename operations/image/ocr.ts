import { defineOperation } from '../define.js';
import { IMAGE_INPUT, MODEL_TIMEOUT_MS, TEXT_SCHEMA } from '../shared.js';
import { imageHeaderOf } from './image-plan.js';

export const imageOcr = defineOperation({
  id: 'image.ocr', title: 'Recognise text in an image',
  description: 'Returns the text in a JPEG, PNG, WebP or AVIF image. Sent to the model provider unless the deployment runs the local OCR engine.',
  category: 'ocr', fields: [], input: IMAGE_INPUT, price: { model: 'flat', rate: 20000 },
  output: { mediaType: 'application/json', description: 'JSON { text }.', jsonSchema: TEXT_SCHEMA },
  content: { provider: 'model', localWhen: 'OCR_ENGINE=tesseract' }, engines: [], timeoutMs: MODEL_TIMEOUT_MS,
  plan: (input) => ({ format: imageHeaderOf(input.files[0]).format }),
});

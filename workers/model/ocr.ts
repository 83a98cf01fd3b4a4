// /v1/image/ocr and /v1/pdf/ocr: the model provider by default, tesseract on the server when
// the deployment sets OCR_ENGINE=tesseract. PDF text comes back one page per request (long
// transcriptions would otherwise run into output limits) and is joined in page order with form feeds.
import sharp from 'sharp';
import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { fail } from '../../core/errors.js';
import type { Job, JobOutput, WorkFunction } from '../../core/job.js';
import type { ImageFormat } from '../../checks/image.js';
import { mapInOrder } from './batch.js';
import { dataUrl, MODEL_MAX_SIDE, modelDpi, modelPages, renderPage, TESSERACT_DPI, TESSERACT_MAX_SIDE } from './pages.js';
import { complete, createProvider, type Provider } from './provider.js';
import { stripFence } from './json.js';
import { tesseractText } from '../../tools/engines/tesseract.js';

export const DEFAULT_MODEL_CONCURRENCY = 4;
const MAX_MODEL_CONCURRENCY = 16;
const PAGE_SEPARATOR = '\f';
/** The image endpoints' own bound (40 megapixels), with room for rounding. */
const IMAGE_PIXEL_LIMIT = 41_000_000;

const OCR_INSTRUCTIONS = [
  'You are an OCR engine. Transcribe all text visible in the image exactly as written, in natural reading order',
  '(for several columns, the whole left column first). Keep line breaks between lines and a blank line between paragraphs.',
  'Do not translate, correct, summarise or describe anything. Reply with the transcribed text only: no preamble,',
  'no Markdown fences. If the image contains no text, reply with an empty message.',
].join(' ');

export function modelConcurrency(configured: number | undefined): number {
  if (configured === undefined || !Number.isFinite(configured) || configured < 1) return DEFAULT_MODEL_CONCURRENCY;
  return Math.min(MAX_MODEL_CONCURRENCY, Math.floor(configured));
}

export function jsonOutput(value: unknown): JobOutput {
  return { body: new TextEncoder().encode(JSON.stringify(value)), mediaType: 'application/json' };
}

export function imagePart(url: string): ChatCompletionContentPart {
  // 'high' keeps OpenAI from shrinking a page to 512 px; other servers ignore the hint.
  return { type: 'image_url', image_url: { url, detail: 'high' } };
}

function usesTesseract(input: Job): boolean {
  return input.settings.ocrEngine === 'tesseract';
}

// No page label goes with the image: models tend to copy such labels into the transcription.
async function transcribe(provider: Provider, input: Job, url: string, signal?: AbortSignal): Promise<string> {
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: OCR_INSTRUCTIONS },
    { role: 'user', content: [imagePart(url)] },
  ];
  const { content: text } = await complete(provider, input, { messages }, signal);
  return stripFence(text).replace(/\s+$/u, '');
}

function imageFile(input: Job) {
  const file = input.files[0];
  if (!file) fail('FIELD_INVALID', 'an image file is required', { field: 'file' });
  return file;
}

/**
 * The image as the model should see it: upright (EXIF orientation applied, which models do not
 * reliably do) and no larger than MODEL_MAX_SIDE. Untouched when it already is.
 */
async function imageForModel(bytes: Uint8Array, format: string): Promise<{ bytes: Uint8Array; mediaType: string }> {
  const image = sharp(bytes, { limitInputPixels: IMAGE_PIXEL_LIMIT });
  let meta;
  try {
    meta = await image.metadata();
  } catch {
    fail('CORRUPT_INPUT', 'the image cannot be decoded');
  }
  const upright = (meta.orientation ?? 1) <= 1;
  const fits = Math.max(meta.width ?? 0, meta.height ?? 0) <= MODEL_MAX_SIDE;
  // Model providers take JPEG, PNG and WebP: an AVIF is converted like an image that needs turning.
  if (upright && fits && format !== 'avif') return { bytes, mediaType: `image/${format === 'jpg' ? 'jpeg' : format}` };
  const resized = image.rotate().resize({ width: MODEL_MAX_SIDE, height: MODEL_MAX_SIDE, fit: 'inside', withoutEnlargement: true });
  // PNG sources are usually screenshots or scans of text, where JPEG blurs edges.
  const out = format === 'png' ? await resized.png().toBuffer() : await resized.jpeg({ quality: 90 }).toBuffer();
  return { bytes: out, mediaType: format === 'png' ? 'image/png' : 'image/jpeg' };
}

/** tesseract ignores EXIF orientation and does best on gray input. */
async function imageForTesseract(bytes: Uint8Array): Promise<Uint8Array> {
  try {
    return await sharp(bytes, { limitInputPixels: IMAGE_PIXEL_LIMIT }).rotate().grayscale().png({ compressionLevel: 1 }).toBuffer();
  } catch {
    fail('CORRUPT_INPUT', 'the image cannot be decoded');
  }
}

export const imageOcr: WorkFunction<{ format: ImageFormat }> = async (input) => {
  const file = imageFile(input);
  if (usesTesseract(input)) {
    return jsonOutput({ text: await tesseractText(input, await imageForTesseract(file.bytes)) });
  }
  const provider = createProvider(input.settings);
  const image = await imageForModel(file.bytes, input.params.format);
  return jsonOutput({ text: await transcribe(provider, input, dataUrl(image.bytes, image.mediaType)) });
};

export const pdfOcr: WorkFunction = async (input) => {
  const pages = await modelPages(input);
  if (usesTesseract(input)) {
    // Sequential: each run already takes a core, and the pool runs jobs side by side.
    const texts: string[] = [];
    for (const page of pages) {
      const png = await renderPage(input, page, { dpi: TESSERACT_DPI, maxSide: TESSERACT_MAX_SIDE, gray: true });
      texts.push(await tesseractText(input, png, { dpi: TESSERACT_DPI }));
    }
    return jsonOutput({ text: texts.join(PAGE_SEPARATOR) });
  }
  const provider = createProvider(input.settings);
  const dpi = modelDpi(input.settings.modelDpi);
  const texts = await mapInOrder(pages, modelConcurrency(input.settings.modelConcurrency), async (page, _index, signal) => {
    const png = await renderPage(input, page, { dpi, maxSide: MODEL_MAX_SIDE, signal });
    return transcribe(provider, input, dataUrl(png, 'image/png'), signal);
  });
  return jsonOutput({ text: texts.join(PAGE_SEPARATOR) });
};

// /v1/pdf/structured: one object for the whole document, so all pages (at most 30) go in one
// request in page order; splitting would leave partial objects that cannot be merged faithfully.
// The client's schema constrains the answer (strict mode when OpenAI's rules allow it) and
// ajv checks the result; a second invalid answer fails the job, and nothing is charged.
import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { loadUserSchema } from '../../checks/schema.js';
import type { WorkFunction } from '../../core/job.js';
import { mapInOrder } from './batch.js';
import { completeJson } from './json.js';
import { imagePart, jsonOutput } from './ocr.js';
import { dataUrl, MODEL_MAX_SIDE, modelDpi, modelPages, renderPage } from './pages.js';
import { createProvider } from './provider.js';

/** mutool runs are short; two at a time overlaps their start-up without crowding 2 cores. */
const RENDER_CONCURRENCY = 2;
/** OpenAI's limit on nesting in strict mode. */
const STRICT_MAX_DEPTH = 10;

// Keywords strict mode does not accept; any of them means the schema goes as a hint (strict: false).
const NOT_STRICT_KEYWORDS = new Set([
  'allOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'dependencies',
  'patternProperties', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems', 'contains',
  'minContains', 'maxContains', 'uniqueItems', 'minProperties', 'maxProperties', 'minLength', 'maxLength',
  'prefixItems', '$dynamicRef', '$recursiveRef',
]);
const SCHEMA_MAPS = ['properties', '$defs', 'definitions'];
const SCHEMA_VALUES = ['items', 'additionalProperties'];
const SCHEMA_LISTS = ['anyOf'];

function isObjectSchema(node: Record<string, unknown>): boolean {
  const type = node.type;
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || (type === undefined && 'properties' in node);
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
}

/**
 * Strict structured outputs need every object closed (additionalProperties: false) with every
 * property required, and only the keywords the provider supports. Booleans as schemas are refused.
 */
export function qualifiesForStrict(schema: Record<string, unknown>): boolean {
  if ('anyOf' in schema) return false;
  const visit = (node: unknown, depth: number): boolean => {
    const record = asRecord(node);
    if (!record || depth > STRICT_MAX_DEPTH) return false;
    for (const key of Object.keys(record)) if (NOT_STRICT_KEYWORDS.has(key)) return false;
    if (isObjectSchema(record)) {
      if (record.additionalProperties !== false) return false;
      const properties = Object.keys(asRecord(record.properties) ?? {});
      const required = Array.isArray(record.required) ? record.required : [];
      if (!properties.every((name) => required.includes(name))) return false;
    }
    for (const key of SCHEMA_MAPS) {
      const map = asRecord(record[key]);
      if (map && !Object.values(map).every((child) => visit(child, depth + 1))) return false;
    }
    for (const key of SCHEMA_VALUES) {
      const child = record[key];
      if (child !== undefined && child !== false && !visit(child, depth + 1)) return false;
    }
    for (const key of SCHEMA_LISTS) {
      const list = record[key];
      if (Array.isArray(list) && !list.every((child) => visit(child, depth + 1))) return false;
    }
    return true;
  };
  return visit(schema, 1);
}

const STRUCTURED_INSTRUCTIONS = [
  'You extract data from a document. Its pages follow as images, in page order.',
  'Return one JSON object that matches the JSON Schema exactly, filled only with information found in the document.',
  'Where the document does not give a value, use null if the schema allows it, otherwise an empty string or empty array.',
  'Reply with the JSON object only.',
].join(' ');

export const pdfStructured: WorkFunction<{ schema: string }> = async (input) => {
  const { schema, validate } = loadUserSchema(input.params.schema);
  const pages = await modelPages(input);
  const provider = createProvider(input.settings);
  const dpi = modelDpi(input.settings.modelDpi);
  const images = await mapInOrder(pages, RENDER_CONCURRENCY, async (page, _index, signal) =>
    imagePart(dataUrl(await renderPage(input, page, { dpi, maxSide: MODEL_MAX_SIDE, signal }), 'image/png')));
  const strict = qualifiesForStrict(schema);
  const content: ChatCompletionContentPart[] = [
    // Without strict mode some servers only see the schema as a hint: it goes in the prompt too.
    ...(strict ? [] : [{ type: 'text' as const, text: `JSON Schema of the object to return:\n${JSON.stringify(schema)}` }]),
    ...images,
  ];
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: STRUCTURED_INSTRUCTIONS },
    { role: 'user', content },
  ];
  const data = await completeJson(provider, input, { messages, schemaName: 'extraction', schema, strict, validate });
  return jsonOutput({ data });
};

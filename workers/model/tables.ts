// /v1/pdf/tables: one request per page, so the page number of every table is ours, not the
// model's guess, and a page full of tables cannot push a batch past the output limit. The answer
// is constrained by a strict JSON Schema and checked again with ajv.
import { Ajv } from 'ajv';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { WorkFunction } from '../../core/job.js';
import { mapInOrder } from './batch.js';
import { completeJson } from './json.js';
import { imagePart, jsonOutput, modelConcurrency } from './ocr.js';
import { dataUrl, MODEL_MAX_SIDE, modelDpi, modelPages, renderPage } from './pages.js';
import { createProvider } from './provider.js';

interface PageTable {
  title: string | null;
  headers: string[];
  rows: string[][];
}

/** What the model returns for one page: strict-mode ready (every property required, no extras). */
export const PAGE_TABLES_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['tables'],
  properties: {
    tables: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['title', 'headers', 'rows'],
        properties: {
          title: { type: ['string', 'null'], description: 'The caption or title of the table, or null when it has none.' },
          headers: { type: 'array', items: { type: 'string' }, description: 'Column headers; empty when the table has no header row.' },
          rows: {
            type: 'array',
            description: 'Body rows, top to bottom; each row lists its cells left to right as text.',
            items: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
  },
} as const;

// A provider without strict structured outputs may add keys of its own (a "page" on each table,
// say): they are dropped while validating, since the result's shape is ours; a missing or
// mistyped value still fails the answer.
const ajv = new Ajv({ strict: false, allErrors: true, logger: false, removeAdditional: true });
const validatePage = ajv.compile<{ tables: PageTable[] }>(PAGE_TABLES_SCHEMA);

const TABLE_INSTRUCTIONS = [
  'You extract tables from a page image. Return every table on the page, top to bottom, as JSON.',
  'For each table give its caption or title (null if none), its column headers, and its body rows;',
  'every cell is the text shown in it (an empty string for an empty cell). Do not invent tables from',
  'ordinary paragraphs or lists. When the page has no table, return {"tables": []}.',
].join(' ');

/** The tables as the model reads them from page images (TABLES_ENGINE=model; workers/work-functions.ts chooses). */
export const pdfTables: WorkFunction = async (input) => {
  const pages = await modelPages(input);
  const provider = createProvider(input.settings);
  const dpi = modelDpi(input.settings.modelDpi);
  const perPage = await mapInOrder(pages, modelConcurrency(input.settings.modelConcurrency), async (page, _index, signal) => {
    const png = await renderPage(input, page, { dpi, maxSide: MODEL_MAX_SIDE, signal });
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: TABLE_INSTRUCTIONS },
      { role: 'user', content: [imagePart(dataUrl(png, 'image/png'))] },
    ];
    const answer = await completeJson(provider, input, {
      messages, schemaName: 'page_tables', schema: PAGE_TABLES_SCHEMA, strict: true, validate: validatePage,
    }, signal) as { tables: PageTable[] };
    return answer.tables.map((table) => ({ page, title: table.title, headers: table.headers, rows: table.rows }));
  });
  return jsonOutput({ tables: perPage.flat() });
};

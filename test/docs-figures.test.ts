// The docs quote limits, budgets and deadlines that the code declares as constants. Each quotation
// below is built from its constant and must appear, word for word, in the page that states it
// (white space folded, so a line break may fall anywhere): a constant that changes without its
// page fails here, naming the page and the words it should now say.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { operations } from '../operations/index.js';
import type { Operation } from '../operations/define.js';
import { MB } from '../operations/define.js';
import { CHUNK_CHARS_BOUNDS } from '../operations/pdf/blocks.js';
import { OFFICE_MAX_PAGES, OFFICE_TIMEOUT_MS } from '../operations/office/pdf.js';
import { PDF_TIMEOUT_MS, TARGET_KB_BOUNDS } from '../operations/shared.js';
import { MAX_SPLIT_RANGES } from '../core/page-ranges.js';
import { MAX_IMAGE_PIXELS } from '../checks/image.js';
import { MAX_PAGE_POINTS } from '../tools/engines/mupdf-js.js';
import { DEEP_CHECK_MAX_BYTES, DEEP_CHECK_MAX_PAGES, MAX_RENDER_PIXELS } from '../checks/pdf.js';
import { BOX_LIMIT, LAYOUT_BASE_MS, LAYOUT_DEADLINE_SHARE, LAYOUT_MS_PER_KB, RUN_LIMIT, RUN_STEP } from '../checks/markdown.js';
import { OFFICE_ZIP_LIMITS } from '../checks/office.js';
import { REDACTION_BOUNDS } from '../checks/redaction.js';
import { MAX_OCR_LANGUAGES, OCRMYPDF_VECTOR_DPI } from '../tools/engines/ocrmypdf.js';
import { TEXTLESS_PAGE_CHARS } from '../workers/pdf/extract.js';
import { INDENTED_LEVELS, LINK_LIMIT } from '../workers/pdf/markdown-html.js';
import { DEFAULT_MODEL_DPI, MAX_MODEL_PAGES, MODEL_MAX_SIDE, TESSERACT_DPI, TESSERACT_MAX_SIDE } from '../workers/model/pages.js';
import { MAX_REDIRECTS, MAX_URL_LENGTH } from '../server/outbound/fetcher.js';
import { DRAIN_FIRST_MS, DRAIN_IDLE_MS, DRAIN_MAX_BYTES, LINGER_AFTER_TIMEOUT_MS } from '../server/plugins/body.js';
import { CLAIM_TTL_SECONDS, MAX_TIMEOUT_SECONDS } from '../server/payment/stages/ledger.js';
import { SETTLEMENT_MARGIN_MS } from '../server/payment/stages/lifetime.js';
import { ABORT_GRACE_MS } from '../server/pool.js';
import { MAX_URL_INPUTS } from '../server/pipeline.js';
import { MCP_PROTOCOL_VERSION } from '../server/derive/catalog.js';
import { CHANNEL_REFUND_PATH, MCP_MAX_DECODED_BYTES } from '../core/protocol.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8').replace(/\s+/g, ' ');

const op = (id: string): Operation => operations.find((o) => o.id === id) ?? (() => { throw new Error(`no operation ${id}`); })();
const stringField = (id: string, name: string) => {
  const field = op(id).fields.find((f) => f.name === name);
  if (field?.type !== 'string') throw new Error(`${id} has no string field ${name}`);
  return field;
};
const protectPassword = stringField('pdf.protect', 'password');
const splitRanges = stringField('pdf.split', 'ranges');
/** The lint's line length, as eslint.config.mjs sets it. */
const MAX_LINE_CHARS = Number(/'@stylistic\/max-len': \['error', \{ code: (\d+)/.exec(read('eslint.config.mjs'))![1]);
const s = (ms: number) => `${ms / 1000} s`;
const thousands = (n: number) => n.toLocaleString('en-US');
const spacedThousands = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

/** Page → the words each constant makes it say. */
const QUOTED: Record<string, string[]> = {
  'docs/operations/README.md': [
    `file ${op('pdf.compress').input.maxBytes / MB} MB`,
    `merge total ${op('pdf.merge').input.maxTotalBytes / MB} MB`,
    `Markdown ${op('pdf.from-markdown').input.maxBytes / MB} MB`,
    `schema ${stringField('pdf.structured', 'schema').maxBytes! / 1024} KB`,
    `${MAX_IMAGE_PIXELS / 1e6} megapixels, pages, ${MAX_SPLIT_RANGES} ranges`,
    `up to ${DRAIN_MAX_BYTES / MB} MB, until no byte comes for ${s(DRAIN_IDLE_MS)}, or within ${DRAIN_FIRST_MS} ms if none comes at all`,
  ],
  'docs/operations/image.md': [
    `${MAX_IMAGE_PIXELS / 1e6} megapixels is checked from the container header`,
    `(${TARGET_KB_BOUNDS.minimum} to ${thousands(TARGET_KB_BOUNDS.maximum)} KB of 1024 bytes; same price)`,
  ],
  'docs/operations/stamps-and-images.md': [
    `makes one PDF of ${op('pdf.from-images').input.count.min} to ${op('pdf.from-images').input.count.max} images`,
    `more than ${MAX_IMAGE_PIXELS / 1e6} megapixels declared`,
    `a file over ${op('pdf.from-images').input.maxBytes / MB} MB or files over ${op('pdf.from-images').input.maxTotalBytes / MB} MB in all`,
    `larger than ${thousands(MAX_PAGE_POINTS)} points`,
    `Per image, ${op('pdf.from-images').price.rate} atomic USDC`,
    `deadline (${s(op('pdf.from-images').timeoutMs)}, or \`JOB_TIMEOUT_MS\` when shorter)`,
  ],
  'docs/operations/pdf-inspection.md': [
    `(≤ ${DEEP_CHECK_MAX_BYTES / MB} MB and ≤ ${DEEP_CHECK_MAX_PAGES} pages, 0.8 s`,
  ],
  'docs/operations/pdf-pages.md': [
    `the password is ${protectPassword.minLength} to ${protectPassword.maxUtf8Bytes} bytes in UTF-8`,
    `The password may have up to ${stringField('pdf.unlock', 'password').maxLength} characters`,
    `a page above ${MAX_RENDER_PIXELS / 1e6} megapixels at the chosen dpi`,
  ],
  'docs/operations/redact-and-sanitize.md': [
    `up to ${REDACTION_BOUNDS.texts} literal strings of up to ${REDACTION_BOUNDS.textChars} characters`,
    `up to ${REDACTION_BOUNDS.patterns} patterns of up to ${REDACTION_BOUNDS.patternChars} characters`,
    `\`areas\`: up to ${REDACTION_BOUNDS.areas} \`{page, x, y, width, height}\``,
    `A ${op('pdf.redact').input.maxPages}-page bound keeps that header a few KB`,
  ],
  'docs/operations/office.md': [
    `Up to ${OFFICE_ZIP_LIMITS.trailingBytes / 1024} KB of stray bytes after a ZIP's end record`,
    `more than ${thousands(OFFICE_ZIP_LIMITS.entries)} parts, or whose parts declare`
    + ` more than ${OFFICE_ZIP_LIMITS.uncompressedBytes / MB} MB unpacked`,
    `killed at the deadline, ${s(OFFICE_TIMEOUT_MS)}`,
    `more than ${OFFICE_MAX_PAGES} is 413 \`LIMIT_EXCEEDED\``,
  ],
  'docs/operations/pdf-text.md': [
    `carry fewer than ${TEXTLESS_PAGE_CHARS} visible characters`,
    `(fewer than ${TEXTLESS_PAGE_CHARS} visible characters, the bound of \`extract\`'s \`likelyScanned\`)`,
    `(${TESSERACT_DPI} dpi grey, longest side at most ${TESSERACT_MAX_SIDE} px`,
    `\`markdown\` and its deadline (${s(PDF_TIMEOUT_MS)}, like every PDF job)`,
    `\`chunk_chars\` (an integer, ${CHUNK_CHARS_BOUNDS.minimum} to ${CHUNK_CHARS_BOUNDS.maximum}; anything else is 422 before payment)`,
    `or at ${OCRMYPDF_VECTOR_DPI} dpi when it holds vector drawing`,
    `default \`eng\`, at most ${MAX_OCR_LANGUAGES}`,
  ],
  'docs/operations/from-markdown.md': [
    `A run of more than ${RUN_LIMIT} characters without a space`,
    `after its ${RUN_LIMIT}nd character and every ${RUN_STEP} after, and no text node runs much past ${BOX_LIMIT} characters`,
    `words of up to ${RUN_LIMIT} characters never break`,
    `Lists and quotes deeper than ${INDENTED_LEVELS} levels are not indented further`,
    `A link whose destination is longer than ${thousands(LINK_LIMIT)} characters is shown as text`,
    `**both ${s(LAYOUT_BASE_MS)} and ${LAYOUT_MS_PER_KB} ms per KB of Markdown**`,
    `Markdown estimated within ${s(LAYOUT_BASE_MS)} (about 30 mixed pages) is accepted`,
    `**${s(PDF_TIMEOUT_MS * LAYOUT_DEADLINE_SHARE)}, half the job's ${s(PDF_TIMEOUT_MS)} deadline**`,
  ],
  'docs/operations/models.md': [
    `PDF pages are rendered at ${DEFAULT_MODEL_DPI} dpi (longest side ≤ ${MODEL_MAX_SIDE} px)`,
    `\`structured\` sends all pages (≤ ${MAX_MODEL_PAGES})`,
  ],
  'docs/files.md': [
    `at most \`MAX_URL_INPUTS\` (${MAX_URL_INPUTS}) of its files`,
    `up to ${DRAIN_MAX_BYTES / MB} MB more, within \`UPLOAD_TIMEOUT_MS\`; after that, or after ${s(DRAIN_IDLE_MS)} without a byte`,
    `dropped for up to ${s(LINGER_AFTER_TIMEOUT_MS)}`,
    `at most ${MCP_MAX_DECODED_BYTES / MB} MB of base64 files per call`,
    `no credentials in the URL, at most ${MAX_URL_LENGTH} characters`,
    `at most ${MAX_REDIRECTS} redirects (inputs only)`,
  ],
  'docs/mcp.md': [
    `protocol \`${MCP_PROTOCOL_VERSION}\``,
    `decoded input is at most ${MCP_MAX_DECODED_BYTES} bytes`,
    `(read by the bridge, at most ${MCP_MAX_DECODED_BYTES} bytes)`,
    `The ${operations.length} tools are named \`svc_<area>_<operation>\``,
    `serves the same ${operations.length} tools over stdio`,
  ],
  'docs/payments.md': [
    `all with the same exact \`amount\` and \`maxTimeoutSeconds: ${MAX_TIMEOUT_SECONDS}\``,
    `(plus the pool's ${s(ABORT_GRACE_MS)} grace)`,
    `and ${s(SETTLEMENT_MARGIN_MS)} for settlement`,
    `the quote's \`maxTimeoutSeconds\` (${MAX_TIMEOUT_SECONDS} s)`,
    `\`GET ${CHANNEL_REFUND_PATH}\``,
  ],
  'docs/replicas.md': [
    `(\`SET NX EX\`, ${CLAIM_TTL_SECONDS} s per payment, twice the payment timeout`,
  ],
  'docs/web-page.md': [
    `it lists the ${operations.length} operations with live prices`,
  ],
  'SECURITY.md': [
    `(${op('pdf.compress').input.maxBytes / MB} MB per file, ${op('pdf.merge').input.maxTotalBytes / MB} MB per merge,`
    + ` ${op('pdf.from-markdown').input.maxBytes / MB} MB Markdown`,
    `the ${stringField('pdf.structured', 'schema').maxBytes! / 1024} KB schema exactly`,
    `the ${spacedThousands(MCP_MAX_DECODED_BYTES)}-byte decoded limit`,
    `${op('pdf.merge').input.count.min} to ${op('pdf.merge').input.count.max} merge inputs, ${MAX_SPLIT_RANGES} split ranges`,
    `${MAX_IMAGE_PIXELS / 1e6} megapixels per image and ${MAX_RENDER_PIXELS / 1e6} megapixels per rendered page`,
    `more typesetting than ${s(LAYOUT_BASE_MS)} and ${LAYOUT_MS_PER_KB} ms per KB`,
    `(${s(PDF_TIMEOUT_MS * LAYOUT_DEADLINE_SHARE)} of ${s(PDF_TIMEOUT_MS)})`,
    `(${CLAIM_TTL_SECONDS} s against ${MAX_TIMEOUT_SECONDS} s)`,
    `URLs are at most ${MAX_URL_LENGTH} characters`,
    `At most ${MAX_REDIRECTS} redirects on a fetch`,
  ],
  'docs/architecture.md': [
    `fields (\`ranges\`, required, at most ${splitRanges.maxLength} characters),`
    + ` input (one PDF of at most ${op('pdf.split').input.maxBytes / MB} MB), price (${op('pdf.split').price.rate} per page)`,
    `(a missing page or a ${MAX_SPLIT_RANGES + 1}st range is a 422 naming it)`,
    `Lines are at most ${MAX_LINE_CHARS} characters, comments included`,
  ],
};

describe('figures the docs quote from constants', () => {
  for (const [file, quotations] of Object.entries(QUOTED)) {
    it(`${file} says what its constants say`, () => {
      const text = read(file);
      const missing = quotations.filter((q) => !text.includes(q));
      expect(missing, `${file} should say (the constant changed, or the page's wording did)`).to.equal([]);
    });
  }

  it('fails on a figure a page does not state (the check can fail)', () => {
    expect(read('docs/files.md').includes(`at most ${MAX_REDIRECTS + 1} redirects (inputs only)`)).to.be.false();
  });
});

// What a 402 says about the thing being bought: its URL, description, media type, the Bazaar
// discovery extension and the payment-identifier extension (an optional idempotency key: the
// identical retry of a payment whose result did not arrive gets it without a second charge),
// for HTTP routes and for MCP tools. Derived from the table.
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { FieldSpec, Operation } from '../../operations/define.js';
import { INPUT_KINDS } from '../../operations/input-kinds.js';
import type { ResourceDescription } from '../payment/gate.js';
import { operationDescription } from './descriptions.js';
import { mcpInputSchema } from './mcp-schemas.js';
import { LINK_RESULT_SCHEMA, PUSH_RESULT_SCHEMA } from './delivery-schemas.js';
import type { PublicView } from './view.js';
import { IMAGE_MEDIA_TYPES } from '../../checks/image.js';

export function outputMediaTypes(op: Operation): string[] {
  return op.output.mediaType === 'image' ? Object.values(IMAGE_MEDIA_TYPES) : [op.output.mediaType];
}

// Keyed by whether URL inputs are on: the Bazaar's example gives the file by URL when they are.
const httpCache = new WeakMap<Operation, Map<boolean, Record<string, unknown>>>();
// Keyed by the description too: on a local engine it says where the content stays.
const mcpCache = new WeakMap<Operation, Map<string, Record<string, unknown>>>();

/**
 * A JSON body that satisfies the tool's schema, for the Bazaar's example: the file by URL (what an
 * agent holds) or as base64, and every required field.
 */
function exampleBody(op: Operation, urls: boolean): Record<string, unknown> {
  const file = urls ? { url: `https://example.com/${INPUT_KINDS[op.input.kind].exampleFile}` } : { data: 'UGF5ZG9j' };
  const body: Record<string, unknown> = op.input.count.max === 0 ? {}
    : op.input.count.max > 1 ? { files: Array.from({ length: op.input.count.min }, () => file) } : { file };
  for (const field of op.fields.filter((f) => f.required)) body[field.name] = exampleValue(field);
  return body;
}

function exampleValue(field: FieldSpec): string | number | boolean {
  switch (field.type) {
    case 'integer': return field.enum?.[0] ?? field.default ?? field.minimum ?? 1;
    case 'number': return field.default ?? field.minimum ?? 1;
    case 'boolean': return field.default ?? true;
    case 'string': return field.enum?.[0] ?? field.default ?? field.example ?? 'x'.repeat(field.minLength ?? 1);
  }
}

/**
 * What a paid call can answer as JSON: the result itself when it is JSON, or instead of the
 * result the link (delivery=link) or the push's receipt (deliver_to).
 */
export function jsonAnswerSchema(op: Operation): Record<string, unknown> {
  return {
    description: op.output.jsonSchema ? op.output.description : `${op.output.description} As JSON only with delivery=link or deliver_to.`,
    anyOf: [...(op.output.jsonSchema ? [op.output.jsonSchema] : []), LINK_RESULT_SCHEMA, PUSH_RESULT_SCHEMA],
  };
}

// The Bazaar describes the JSON body (the MCP tool's arguments): an agent wallet can send that
// from what it holds; the multipart form, also accepted, is in the OpenAPI description.
function httpExtension(op: Operation, urls: boolean): Record<string, unknown> {
  let byUrls = httpCache.get(op);
  if (!byUrls) httpCache.set(op, byUrls = new Map<boolean, Record<string, unknown>>());
  let ext = byUrls.get(urls);
  if (!ext) {
    const declared = declareDiscoveryExtension({
      bodyType: 'json',
      input: exampleBody(op, urls),
      inputSchema: mcpInputSchema(op),
    }) as Record<string, { info: { input: Record<string, unknown>; output?: unknown }; schema: { properties: Record<string, unknown> } }>;
    // The HTTP method is otherwise filled from a transport context we do not pass.
    declared.bazaar.info.input.method = 'POST';
    declared.bazaar.info.output = { type: outputMediaTypes(op).join(' | '), format: op.output.description };
    // The library declares the output's schema only along with an example of the output, which a
    // file result has none of; agent wallets (@agentcash/discovery) read the schema from here.
    declared.bazaar.schema.properties.output = {
      type: 'object',
      properties: { type: { type: 'string' }, format: { type: 'string' }, example: { type: 'object', ...jsonAnswerSchema(op) } },
      required: ['type'],
    };
    ext = { ...declared, [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };
    byUrls.set(urls, ext);
  }
  return ext;
}

function mcpExtension(op: Operation, description: string): Record<string, unknown> {
  let byDescription = mcpCache.get(op);
  if (!byDescription) mcpCache.set(op, byDescription = new Map<string, Record<string, unknown>>());
  let ext = byDescription.get(description);
  if (!ext) {
    ext = {
      ...declareDiscoveryExtension({ toolName: op.tool, description, transport: 'streamable-http', inputSchema: mcpInputSchema(op) }) as Record<string, unknown>,
      [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
    };
    byDescription.set(description, ext);
  }
  return ext;
}

// A deployment's resource descriptions never change once it runs: each is built on its first quote and kept.
const described = new WeakMap<PublicView, Map<string, ResourceDescription>>();

function describedOnce(app: PublicView, key: string, describe: () => Omit<ResourceDescription, 'key'>): ResourceDescription {
  let byKey = described.get(app);
  if (!byKey) described.set(app, byKey = new Map<string, ResourceDescription>());
  let resource = byKey.get(key);
  if (!resource) byKey.set(key, resource = { key, ...describe() });
  return resource;
}

export function httpResource(op: Operation, app: PublicView): ResourceDescription {
  return describedOnce(app, `http ${op.id}`, () => ({
    url: `${app.config.baseUrl}${op.path}`, description: operationDescription(op, app), mimeType: outputMediaTypes(op)[0],
    extensions: httpExtension(op, app.config.urlInputs === 'on'),
  }));
}

/** The MCP server's own URL: the Bazaar lists a tool under the endpoint that serves it. */
export function mcpResource(op: Operation, app: PublicView): ResourceDescription {
  return describedOnce(app, `mcp ${op.id}`, () => {
    const description = operationDescription(op, app);
    return { url: `${app.config.baseUrl}/mcp`, description, mimeType: outputMediaTypes(op)[0], extensions: mcpExtension(op, description) };
  });
}

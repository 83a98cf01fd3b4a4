// The `schema` field of /v1/pdf/structured, checked before payment and compiled again in the
// worker. Messages name the problem and at most a short JSON path: the schema is a secret field,
// so its contents never appear in a response or a log.
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { fail } from '../core/errors.js';

export type JsonSchemaObject = Record<string, unknown>;

export interface UserSchema {
  /** The schema as sent to the model (without `$schema`, which only chose the draft). */
  schema: JsonSchemaObject;
  validate: ValidateFunction;
}

const FIELD = { field: 'schema' };
const MESSAGE_LIMIT = 300;

function invalid(message: string): never {
  fail('FIELD_INVALID', message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT)}…` : message, FIELD);
}

// V8's JSON.parse messages quote the input; only the position is safe to repeat.
function describeJsonError(text: string, err: unknown): string {
  const raw = err instanceof Error ? err.message : '';
  // "Expected ':' after property name in JSON at position 5": V8's own wording, no input quoted.
  const match = /^([\w\s':{}[\],-]{1,80}) in JSON at position (\d+)/.exec(raw);
  if (match) {
    const position = Number(match[2]);
    const before = text.slice(0, position);
    const line = before.split('\n').length;
    const column = position - before.lastIndexOf('\n');
    return `schema is not valid JSON: ${match[1]} at position ${position} (line ${line}, column ${column})`;
  }
  if (/end of JSON input/i.test(raw)) return 'schema is not valid JSON: it ends before the JSON value is complete';
  return 'schema is not valid JSON: it has an unexpected token (a bare word, a missing quote or a stray character)';
}

type Draft = 'draft-07' | '2019-09' | '2020-12';

function draftOf(uri: unknown): Draft {
  if (uri === undefined) return 'draft-07';
  if (typeof uri !== 'string') invalid('schema "$schema" must be a string naming a JSON Schema draft');
  if (/json-schema\.org\/draft\/2020-12\/schema/.test(uri)) return '2020-12';
  if (/json-schema\.org\/draft\/2019-09\/schema/.test(uri)) return '2019-09';
  // draft-06 is a subset of draft-07 for everything a validator checks.
  if (/json-schema\.org\/draft-0[67]\/schema/.test(uri)) return 'draft-07';
  invalid('schema "$schema" names an unsupported draft; use draft-07, 2019-09 or 2020-12 (or leave "$schema" out)');
}

// Real schemas nest a few dozen JSON levels at most; every later walk over the schema (the
// reference check, ajv's compiler, the strictness check) recurses, so depth is bounded first.
export const MAX_SCHEMA_DEPTH = 64;

/** Whether the JSON value nests deeper than `limit` levels, found without recursion. */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

const REFERENCE_KEYWORDS = new Set(['$ref', '$dynamicRef', '$recursiveRef']);

/** Only references inside the document are allowed: nothing is ever fetched or looked up. */
function rejectOutsideReferences(node: unknown, path: string): void {
  if (Array.isArray(node)) {
    node.forEach((child, index) => rejectOutsideReferences(child, `${path}/${index}`));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    const here = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (REFERENCE_KEYWORDS.has(key) && typeof value === 'string' && !value.startsWith('#')) {
      invalid(`schema has a reference to another document at ${shortPath(here)}; only local references ("#/...") are allowed and nothing is fetched`);
    }
    rejectOutsideReferences(value, here);
  }
}

function shortPath(path: string): string {
  return path.length > 80 ? `…${path.slice(-79)}` : path;
}

// One validator per draft and thread. A fresh Ajv compiles the draft's meta-schema before it can
// check the client's schema, about 8 ms of a 10 ms load; the shared one does that once. Each
// client schema is removed again right after compiling, so nothing of it stays in Ajv's caches
// and two clients' schemas with the same $id cannot collide.
const validators = new Map<Draft, Ajv>();

function validatorFor(draft: Draft): Ajv {
  let ajv = validators.get(draft);
  if (!ajv) {
    // strict: false accepts the unknown keywords real-world schemas carry (title, examples, x-...);
    // formats are not checked because no format plugin ships with the service; logger: false keeps
    // ajv's warnings (which quote schema paths) out of the logs.
    const options = { strict: false, allErrors: true, validateFormats: false, logger: false as const };
    ajv = draft === '2020-12' ? new Ajv2020(options) : draft === '2019-09' ? new Ajv2019(options) : new Ajv(options);
    validators.set(draft, ajv);
  }
  return ajv;
}

/** Parses and compiles a client's schema, or throws FIELD_INVALID (422) naming what is wrong. */
export function loadUserSchema(text: string): UserSchema {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    invalid(describeJsonError(text, err));
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    invalid(`schema must be a JSON object (a JSON Schema); got ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : `a ${typeof parsed}`}`);
  }
  if (deeperThan(parsed, MAX_SCHEMA_DEPTH)) invalid(`schema nests more than ${MAX_SCHEMA_DEPTH} levels of JSON objects and arrays; the limit is ${MAX_SCHEMA_DEPTH}`);
  const { $schema, ...schema } = parsed as JsonSchemaObject;
  const draft = draftOf($schema);
  const type = schema.type;
  const hasProperties = schema.properties !== null && typeof schema.properties === 'object' && !Array.isArray(schema.properties);
  if (type !== 'object' && !(type === undefined && hasProperties)) {
    const got = type === undefined ? 'no "type" and no "properties"' : `"type" ${JSON.stringify(type).slice(0, 40)}`;
    invalid(`schema must describe an object: give it "type": "object" (got ${got})`);
  }
  rejectOutsideReferences(schema, '');
  let validate: ValidateFunction;
  const ajv = validatorFor(draft);
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    const reason = err instanceof Error ? err.message : 'it does not compile';
    invalid(`schema is not a valid JSON Schema (${draft}): ${reason}`);
  } finally {
    try { ajv.removeSchema(schema); } catch { /* never added */ }
  }
  return { schema, validate };
}

/** The front end's pre-payment check: throws 422 FIELD_INVALID on field 'schema', returns nothing. */
export function compileUserSchema(text: string): void {
  loadUserSchema(text);
}

// Form-field validation and JSON Schemas, both derived from the operation table's FieldSpecs.
// The same validator serves HTTP (multipart strings) and MCP (JSON values).
import Joi from 'joi';
import type { FieldSpec, FieldValues, Operation } from '../../operations/define.js';
import { fail } from '../../core/errors.js';
import { INPUT_KINDS } from '../../operations/input-kinds.js';
import { DELIVERY_ARGUMENTS } from './mcp-schemas.js';

/** What a field accepts, in words, for error messages: 'an integer from 1 to 100'. */
export function expectation(field: FieldSpec): string {
  if (field.type === 'integer') {
    if (field.enum) return `one of the integers ${field.enum.join(', ')}`;
    if (field.minimum !== undefined && field.maximum !== undefined) return `an integer from ${field.minimum} to ${field.maximum}`;
    if (field.minimum !== undefined) return `an integer of at least ${field.minimum}`;
    return 'an integer';
  }
  if (field.type === 'number') {
    if (field.minimum !== undefined && field.maximum !== undefined) return `a number from ${field.minimum} to ${field.maximum}`;
    return 'a number';
  }
  if (field.type === 'boolean') return 'true or false';
  if (field.enum) return `one of ${field.enum.map((v) => `"${v}"`).join(', ')}`;
  if (field.pattern) return field.pattern.means;
  if (field.maxUtf8Bytes !== undefined) return `a string of ${field.minLength ?? 0} to ${field.maxUtf8Bytes} bytes in UTF-8 (ASCII characters take 1 byte, others 2 to 4)`;
  if (field.minLength !== undefined && field.maxLength !== undefined) return `a string of ${field.minLength} to ${field.maxLength} characters`;
  if (field.maxLength !== undefined) return `a string of at most ${field.maxLength} characters`;
  if (field.minLength !== undefined) return `a string of at least ${field.minLength} characters`;
  return 'a string';
}

function joiFor(field: FieldSpec): Joi.Schema {
  if (field.type === 'integer') {
    let n = Joi.number().integer().strict();
    if (field.enum) n = n.valid(...field.enum);
    if (field.minimum !== undefined) n = n.min(field.minimum);
    if (field.maximum !== undefined) n = n.max(field.maximum);
    return field.required ? n.required() : n;
  }
  if (field.type === 'number') {
    let n = Joi.number().strict();
    if (field.minimum !== undefined) n = n.min(field.minimum);
    if (field.maximum !== undefined) n = n.max(field.maximum);
    return field.required ? n.required() : n;
  }
  if (field.type === 'boolean') return field.required ? Joi.boolean().strict().required() : Joi.boolean().strict();
  let s = Joi.string();
  if (field.enum) s = s.valid(...field.enum);
  if (field.minLength !== undefined) s = s.min(field.minLength);
  if (field.maxLength !== undefined) s = s.max(field.maxLength);
  if (field.maxUtf8Bytes !== undefined) s = s.max(field.maxUtf8Bytes, 'utf8');
  if (field.pattern) s = s.pattern(new RegExp(field.pattern.regex, 'u'));
  if (field.emptyIsValue) s = s.allow('');
  return field.required ? s.required() : s;
}

/** What a password field refuses: control characters (Unicode's Cc) and lone surrogate halves (Cs). */
const NOT_IN_PASSWORD = /[\p{Cc}\p{Cs}]/u;
/** The same rule as a JSON Schema pattern (ECMA-262 without the u flag: each half is its own unit). */
const PASSWORD_PATTERN = '^(?:[^\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff]|[\\ud800-\\udbff][\\udc00-\\udfff])*$';

/** Refuses a password holding a character that would not count, naming it and where it is (never the password). */
function checkPasswordCharacters(field: FieldSpec, value: unknown): void {
  if (field.type !== 'string' || !field.password || typeof value !== 'string') return;
  const found = NOT_IN_PASSWORD.exec(value);
  if (!found) return;
  const code = `U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const at = [...value.slice(0, found.index)].length + 1;
  const why = /\p{Cs}/u.test(found[0]) ? 'a lone surrogate half is not a character' : 'control characters are not allowed';
  fail('FIELD_INVALID', `"${field.name}" holds ${code} at character ${at}; ${why}`, { field: field.name });
}

const cache = new WeakMap<Operation, Joi.ObjectSchema>();

function schemaFor(op: Operation): Joi.ObjectSchema {
  let schema = cache.get(op);
  if (!schema) {
    schema = Joi.object(Object.fromEntries(op.fields.map((f) => [f.name, joiFor(f)]))).unknown(false);
    cache.set(op, schema);
  }
  return schema;
}

/** How a form writes a number field's value: "0.5", "-12" (no exponent, no spaces). */
const DECIMAL = /^-?\d{1,15}(\.\d{1,15})?$/;

// Client text repeated in an error is cut short: a request cannot make its error larger than itself.
const SHOWN_CHARACTERS = 40;

/** A client-chosen name or value as an error repeats it: at most 40 characters. */
export function shortened(text: string): string {
  return text.length > SHOWN_CHARACTERS ? `${text.slice(0, SHOWN_CHARACTERS)}…` : text;
}

function describeReceived(field: FieldSpec | undefined, value: unknown): string {
  if (field?.type === 'string' && field.secret) return 'a value that does not qualify';
  if (value === undefined) return 'nothing';
  if (field?.type === 'integer' && typeof value === 'string' && /^-?\d{1,15}$/.test(value)) return value;
  if (field?.type === 'number' && typeof value === 'string' && DECIMAL.test(value)) return value;
  if (typeof value === 'string') return JSON.stringify(shortened(value));
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `${Array.isArray(value) ? 'an array' : typeof value}`;
}

/**
 * Validates raw field values (strings from multipart, JSON values from MCP) and applies defaults.
 * Throws FIELD_INVALID naming the field, what was expected and what was received.
 */
export function validateFields(op: Operation, raw: Record<string, unknown>): FieldValues {
  const allowed = op.fields.map((f) => f.name);
  for (const [name, value] of Object.entries(raw)) {
    if (!allowed.includes(name)) {
      const shown = shortened(name);
      fail('FIELD_INVALID', allowed.length
        ? `"${shown}" is not a field of ${op.path}; its fields are ${allowed.map((n) => `"${n}"`).join(', ')}`
        : `"${shown}" is not a field of ${op.path}, which takes only the file`, { field: shown });
    }
    if (Array.isArray(value)) fail('FIELD_INVALID', `"${name}" has ${value.length} ${value.length === 1 ? 'value in a list' : 'values (the field repeated, or a list)'}; send one value`, { field: name });
  }
  // Multipart sends integers as decimal strings; only plain digits convert ("1e3", "12.0" and " 12" do not).
  // Numbers convert from plain decimals ("0.5", "-12"), booleans from the words "true" and "false", on
  // every surface: a JSON caller that writes "true" means what a form means by it.
  const input: Record<string, unknown> = { ...raw };
  for (const f of op.fields) {
    const v = input[f.name];
    // An empty optional field (what an HTML form sends for a blank input) means "not sent",
    // unless the field gives the empty string a meaning of its own.
    if (v === '' && !f.required && !(f.type === 'string' && f.emptyIsValue)) delete input[f.name];
    else if (f.type === 'integer' && typeof v === 'string' && /^-?\d{1,15}$/.test(v)) input[f.name] = Number(v);
    else if (f.type === 'number' && typeof v === 'string' && DECIMAL.test(v)) input[f.name] = Number(v);
    else if (f.type === 'boolean' && (v === 'true' || v === 'false')) input[f.name] = v === 'true';
  }
  const result: { value: unknown; error?: Joi.ValidationError } = schemaFor(op).validate(input, { abortEarly: true, convert: false });
  const { value, error } = result;
  if (error) {
    const detail = error.details[0];
    const name = String(detail.path[0] ?? detail.context?.key ?? '');
    const field = op.fields.find((f) => f.name === name);
    if (!field) fail('FIELD_INVALID', error.message, { field: name });
    if (detail.type === 'any.required') fail('FIELD_INVALID', `"${name}" is required: ${expectation(field)}`, { field: name });
    fail('FIELD_INVALID', `"${name}" must be ${expectation(field)}; received ${describeReceived(field, raw[name])}`, { field: name });
  }
  const fields: FieldValues = {};
  for (const f of op.fields) {
    fields[f.name] = ((value as Record<string, unknown>)[f.name] as string | number | boolean | undefined) ?? f.default;
    checkPasswordCharacters(f, fields[f.name]);
  }
  op.checkFields?.(fields);
  return fields;
}

/** JSON Schema of one field (OpenAPI 3.0.3 compatible subset). */
export function fieldJsonSchema(field: FieldSpec): Record<string, unknown> {
  if (field.type === 'integer') {
    return {
      type: 'integer', description: field.description,
      ...(field.enum ? { enum: [...field.enum] } : {}),
      ...(field.minimum !== undefined ? { minimum: field.minimum } : {}),
      ...(field.maximum !== undefined ? { maximum: field.maximum } : {}),
      ...(field.default !== undefined ? { default: field.default } : {}),
    };
  }
  if (field.type === 'number') {
    return {
      type: 'number', description: field.description,
      ...(field.minimum !== undefined ? { minimum: field.minimum } : {}),
      ...(field.maximum !== undefined ? { maximum: field.maximum } : {}),
      ...(field.default !== undefined ? { default: field.default } : {}),
    };
  }
  if (field.type === 'boolean') {
    return { type: 'boolean', description: field.description, ...(field.default !== undefined ? { default: field.default } : {}) };
  }
  return {
    type: 'string', description: field.description,
    ...(field.enum ? { enum: [...field.enum] } : {}),
    ...(field.minLength !== undefined ? { minLength: field.minLength } : {}),
    ...(field.maxLength !== undefined ? { maxLength: field.maxLength } : {}),
    ...(field.maxBytes !== undefined ? { maxLength: field.maxBytes } : {}),
    ...(field.maxUtf8Bytes !== undefined ? { maxLength: field.maxUtf8Bytes } : {}),
    ...(field.default !== undefined ? { default: field.default } : {}),
    ...(field.secret ? { format: 'password' } : {}),
    ...(field.password ? { pattern: PASSWORD_PATTERN } : {}),
    ...(field.pattern ? { pattern: field.pattern.regex } : {}),
  };
}

/**
 * The multipart form as a JSON Schema: the file part(s) or file_url field(s) in their place
 * (together, in order, as many as the operation takes), the operation's fields, and how the
 * result leaves (the same `delivery` and `deliver_to` as the JSON body and the MCP tools).
 */
export function formJsonSchema(op: Operation): Record<string, unknown> {
  const fileSchema = { type: 'string', format: 'binary', description: fileDescription(op) };
  const urlSchema = { type: 'string', maxLength: 8192, description: 'An https URL the service fetches the file from, in place of a file part.' };
  const multiple = op.input.count.max > 1;
  // Each file is either a part or a URL, so neither field is required on its own.
  const files = (schema: Record<string, unknown>, description: string) => multiple
    ? { type: 'array', items: schema, maxItems: op.input.count.max, description }
    : { ...schema, description };
  const required = op.fields.filter((f) => f.required).map((f) => f.name);
  const named = op.input.namedFile;
  const namedProps = named ? {
    [named.name]: { type: 'string', format: 'binary', description: `${named.description} Or give it as ${named.name}_url.` },
    [`${named.name}_url`]: { type: 'string', maxLength: 8192, description: `An https URL the service fetches "${named.name}" from, in place of its part.` },
  } : {};
  return {
    type: 'object',
    // OpenAPI 3.0 allows no empty list of required properties.
    ...(required.length ? { required } : {}),
    properties: {
      ...(op.input.count.max === 0 ? {} : {
        file: files(fileSchema, `${fileDescription(op)} Or give it as file_url.`),
        file_url: files(urlSchema, multiple
          ? `https URLs the service fetches files from, in place of file parts; files and URLs count together, in the order sent.`
          : 'An https URL the service fetches the file from, in place of the file part.'),
      }),
      ...namedProps,
      ...Object.fromEntries(op.fields.map((f) => [f.name, fieldJsonSchema(f)])),
      ...DELIVERY_ARGUMENTS,
    },
  };
}

export function fileDescription(op: Operation): string {
  const named = INPUT_KINDS[op.input.kind].file;
  const kind = named.charAt(0).toUpperCase() + named.slice(1);
  const size = `${Math.round(op.input.maxBytes / (1024 * 1024))} MB`;
  if (op.input.count.max > 1) return `${kind}, repeated ${op.input.count.min} to ${op.input.count.max} times (at most ${size} each, ${Math.round(op.input.maxTotalBytes / (1024 * 1024))} MB in all), in order.`;
  return `${kind} of at most ${size}${op.input.maxPages ? ` and ${op.input.maxPages} pages` : ''}.`;
}

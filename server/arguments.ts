// A paid request's arguments as the MCP tools and the JSON request bodies carry them: the file
// as `{ data }` (standard base64) or `{ url }`, merges' `files` as an array of those, a named file
// (stamp's `image`) the same way under its own name, the
// operation's fields, and how the result leaves (`delivery`, `deliver_to`). Multipart bodies
// give the same raw request (plugins/multipart.ts); everything after this is shared.
import type { Operation } from '../operations/define.js';
import { fail } from '../core/errors.js';
import type { Delivery, FileInput, RawRequest } from './pipeline.js';
import type { DeclaredType } from '../checks/office.js';
import { MCP_MAX_DECODED_BYTES } from '../core/protocol.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeData(data: string, where: string): Buffer {
  if (data.length % 4 !== 0 || !BASE64.test(data)) {
    fail('FIELD_INVALID', `${where}.data is not standard base64 (RFC 4648 alphabet with padding, no whitespace or URL-safe characters)`, { field: where });
  }
  const decodedLength = (data.length / 4) * 3 - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
  if (decodedLength > MCP_MAX_DECODED_BYTES) {
    fail('PAYLOAD_TOO_LARGE', `${where} decodes to ${decodedLength} bytes; a call takes at most ${MCP_MAX_DECODED_BYTES} bytes of base64 files: give larger files as { "url": … }`, { field: where });
  }
  return Buffer.from(data, 'base64');
}

/** One file argument: `{ data, mediaType? }` or `{ url }`, and the media type it declares. */
function fileArgument(value: unknown, where: string): { input: FileInput; declared?: DeclaredType } {
  const given = typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
  if (given && typeof given.url === 'string' && given.data === undefined) return { input: { url: given.url, field: `${where}.url` } };
  if (given && typeof given.data === 'string' && given.url === undefined) {
    return { input: decodeData(given.data, where), ...(typeof given.mediaType === 'string' ? { declared: { mediaType: given.mediaType.toLowerCase() } } : {}) };
  }
  return fail('FIELD_INVALID', `${where} must be an object { "data": <standard base64>, "mediaType"? } or { "url": "https://…" }`, { field: where });
}

/**
 * Takes `delivery` and `deliver_to` out of the fields (they are the service's, not the
 * operation's) and says how the result leaves: in the answer (inline, the default), as a
 * one-time link, or pushed to the buyer's URL.
 */
export function takeDelivery(fields: Record<string, unknown>): Delivery {
  const { delivery, deliver_to: deliverTo } = fields;
  delete fields.delivery;
  delete fields.deliver_to;
  if (delivery !== undefined && delivery !== '' && delivery !== 'inline' && delivery !== 'link') {
    fail('FIELD_INVALID', `"delivery" must be one of "inline", "link"; received ${typeof delivery === 'string' ? JSON.stringify(delivery.slice(0, 40)) : typeof delivery}`, { field: 'delivery' });
  }
  if (deliverTo !== undefined && deliverTo !== '') {
    if (typeof deliverTo !== 'string') fail('FIELD_INVALID', '"deliver_to" must be an https URL the result is PUT to', { field: 'deliver_to' });
    if (delivery === 'link') fail('FIELD_INVALID', '"deliver_to" and "delivery": "link" cannot be combined: the result is either pushed to your URL or kept for a link', { field: 'deliver_to' });
    return { kind: 'push', url: deliverTo };
  }
  return delivery === 'link' ? { kind: 'link' } : { kind: 'inline' };
}

/** Tool arguments, or a JSON request body, as the raw request a multipart body gives. */
export function readArguments(op: Operation, args: Record<string, unknown> | undefined): RawRequest {
  const { file, files, ...fields } = args ?? {};
  const namedName = op.input.namedFile?.name;
  const namedValue = namedName === undefined ? undefined : fields[namedName];
  if (namedName !== undefined) delete fields[namedName];
  const namedFile = namedValue === undefined ? undefined : fileArgument(namedValue, namedName!).input;
  const multiple = op.input.count.max > 1;
  let given: Array<ReturnType<typeof fileArgument>>;
  if (multiple) {
    if (file !== undefined) fail('FIELD_INVALID', `${op.tool} takes "files" (an array), not "file"`, { field: 'file' });
    if (files === undefined) given = [];
    else if (!Array.isArray(files)) fail('FIELD_INVALID', '"files" must be an array of { data } or { url } objects', { field: 'files' });
    else given = files.map((f, i) => fileArgument(f, `files[${i}]`));
  } else {
    if (files !== undefined) fail('FIELD_INVALID', `${op.tool} takes one "file", not "files"`, { field: 'files' });
    given = file === undefined ? [] : [fileArgument(file, 'file')];
  }
  const uploads = given.map((g) => g.input);
  const total = [...uploads, ...(namedFile ? [namedFile] : [])].reduce((s, b) => s + (b instanceof Uint8Array ? b.length : 0), 0);
  if (total > MCP_MAX_DECODED_BYTES) fail('PAYLOAD_TOO_LARGE', `the files decode to ${total} bytes; a call takes at most ${MCP_MAX_DECODED_BYTES} bytes of base64 files: give larger files as { "url": … }`, { field: 'files' });
  const delivery = takeDelivery(fields);
  return { uploads, fields, delivery, declared: given.map((g) => g.declared), ...(namedFile ? { namedFile } : {}) };
}

// multipart/form-data bodies for the operation routes. The whole body is read first (body.ts:
// size limit, upload time limit; hapi decodes gzip and deflate and checks the content type); the parts are then found with
// @remix-run/multipart-parser, which searches for the boundary with Buffer's native indexOf, so
// every upload is a view into the one body buffer: no per-part copy and no byte-by-byte scan.
// The refusals keep the wording of hapi's own multipart parser.
import { disposition as parseDisposition, type as parseContentType } from '@hapi/content';
import { parseMultipart, MaxHeaderSizeExceededError, MaxPartsExceededError, type MultipartPart } from '@remix-run/multipart-parser';
import { fail } from '../../core/errors.js';
import type { FileInput, RawRequest } from '../pipeline.js';
import type { DeclaredType } from '../../checks/office.js';
import { takeDelivery } from '../arguments.js';

// Real part headers (a disposition with a file name, a content type) take a few hundred bytes.
const MAX_PART_HEADER_BYTES = 16 * 1024;

function malformed(reason: string): never {
  fail('MALFORMED_BODY', `the request body could not be parsed as multipart/form-data: ${reason}`);
}

function partsOf(body: Buffer, boundary: string, maxParts: number): MultipartPart[] {
  // A preamble before the first boundary is allowed, ended by CRLF (RFC 2046).
  const start = body.indexOf(`--${boundary}`);
  if (start < 0) malformed('incomplete multipart payload');
  if (start > 0 && (start < 2 || body[start - 2] !== 0x0d || body[start - 1] !== 0x0a)) malformed('preamble missing CRLF terminator');
  try {
    return [...parseMultipart(body.subarray(start), {
      boundary, maxParts, maxHeaderSize: MAX_PART_HEADER_BYTES, maxFileSize: body.length, maxTotalSize: body.length,
    })];
  } catch (err) {
    if (err instanceof MaxPartsExceededError) malformed('maximum parts exceeded');
    if (err instanceof MaxHeaderSizeExceededError) malformed(`the headers of a part are longer than ${MAX_PART_HEADER_BYTES} bytes`);
    malformed('incomplete multipart payload');
  }
}

/** What a file part says it is: its name's extension only (the name itself is not kept) and its Content-Type. */
function declaredType(filename: string | undefined, contentType: string | undefined): DeclaredType | undefined {
  const extension = filename && /\.([A-Za-z0-9]{1,8})$/.exec(filename)?.[1]?.toLowerCase();
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (!extension && !mediaType) return undefined;
  return { ...(extension ? { extension } : {}), ...(mediaType ? { mediaType } : {}) };
}

function bytesOf(part: MultipartPart): Uint8Array {
  return part.content.length === 1 ? part.content[0] : part.bytes;
}

/**
 * Splits a multipart body into uploads (the `file` parts and `file_url` fields, in order), the
 * operation's named file (a part called `namedFile`, or `<namedFile>_url`), text fields and the delivery.
 */
export function readMultipart(body: unknown, contentType: unknown, maxParts: number, namedFile?: string): RawRequest {
  if (!Buffer.isBuffer(body) || typeof contentType !== 'string') fail('UNSUPPORTED_MEDIA', 'the request body must be multipart/form-data with a "file" part');
  // hapi has checked the media type against the route's list; this is its own reading of it.
  const { mime, boundary } = parseContentType(contentType);
  if (mime !== 'multipart/form-data' || boundary === undefined) fail('UNSUPPORTED_MEDIA', 'the request body must be multipart/form-data with a "file" part');
  const uploads: FileInput[] = [];
  const declared: Array<DeclaredType | undefined> = [];
  const fields: Record<string, string | string[]> = {};
  const namedInputs: FileInput[] = [];
  for (const part of partsOf(body, boundary, maxParts)) {
    let headers: MultipartPart['headers'];
    try {
      headers = part.headers;
    } catch {
      malformed('the headers of a part are not UTF-8 (RFC 7578)');
    }
    let named: { name: string; filename?: string };
    try {
      named = parseDisposition(headers['content-disposition']) as typeof named;
    } catch (err) {
      const reason = (err as Error).message;
      malformed(reason.charAt(0).toLowerCase() + reason.slice(1));
    }
    const { name } = named;
    // A file sent without a filename is still the file's bytes.
    if (name === 'file') {
      uploads.push(bytesOf(part));
      declared.push(declaredType(named.filename, headers['content-type']));
      continue;
    }
    if (namedFile !== undefined && name === namedFile) {
      namedInputs.push(bytesOf(part));
      continue;
    }
    if (named.filename !== undefined) {
      fail('FIELD_INVALID', `"${name}" was sent as a file; only ${namedFile ? `"file" and "${namedFile}" carry files` : '"file" carries a file'}`, { field: name });
    }
    const bytes = bytesOf(part);
    const value = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    // A URL in place of a file part takes the file's place in the order of the files.
    if (name === 'file_url') {
      uploads.push({ url: value, field: 'file_url' });
      declared.push(undefined);
      continue;
    }
    if (namedFile !== undefined && name === `${namedFile}_url`) {
      namedInputs.push({ url: value, field: name });
      continue;
    }
    const previous = fields[name];
    fields[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  if (namedInputs.length > 1) fail('FIELD_INVALID', `"${namedFile}" was sent ${namedInputs.length} times (as a part or ${namedFile}_url); send one`, { field: namedFile });
  return { uploads, fields, delivery: takeDelivery(fields), declared, ...(namedInputs.length ? { namedFile: namedInputs[0] } : {}) };
}

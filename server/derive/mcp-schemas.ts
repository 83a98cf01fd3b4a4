// MCP tool input schemas: the operation's fields as JSON values plus the file argument(s),
// standard base64 in `file.data` (merge tools: a `files` array), and an operation's named file
// (stamp's `image`) the same way. Derived from the table.
import type { Operation } from '../../operations/define.js';
import { fieldJsonSchema, fileDescription } from './fields.js';
import { INPUT_KINDS } from '../../operations/input-kinds.js';
import { IMAGE_MEDIA_TYPES } from '../../checks/image.js';

export function mediaTypesFor(op: Operation): string[] {
  return [...INPUT_KINDS[op.input.kind].mediaTypes];
}

function fileArgument(mediaTypes: readonly string[]): Record<string, unknown> {
  return {
    anyOf: [
      {
        type: 'object',
        required: ['url'],
        additionalProperties: false,
        properties: { url: { type: 'string', maxLength: 8192, description: 'An https URL the service fetches the file from (preferred for files that are online: nothing to encode).' } },
      },
      {
        type: 'object',
        required: ['data'],
        additionalProperties: false,
        properties: {
          data: { type: 'string', contentEncoding: 'base64', description: 'The file as standard base64 (RFC 4648, with padding).' },
          mediaType: { type: 'string', enum: [...mediaTypes], description: 'The file\'s media type (optional; the bytes decide).' },
        },
      },
    ],
  };
}

/** How the result leaves, on every paid operation (server/arguments.ts reads them). */
export const DELIVERY_ARGUMENTS = {
  delivery: { type: 'string', enum: ['inline', 'link'], default: 'inline', description: 'inline: the result in the answer; link: a one-time download link instead (for large results).' },
  deliver_to: { type: 'string', maxLength: 8192, description: 'An https URL (e.g. a presigned upload URL) the result is PUT to; the call is charged only after it answers 2xx.' },
} as const;

export function mcpInputSchema(op: Operation): Record<string, unknown> {
  const multiple = op.input.count.max > 1;
  const takesFile = op.input.count.max > 0;
  const fileProps = !takesFile ? {} : multiple
    ? { files: { type: 'array', minItems: op.input.count.min, maxItems: op.input.count.max, items: fileArgument(mediaTypesFor(op)), description: fileDescription(op) } }
    : { file: { ...fileArgument(mediaTypesFor(op)), description: fileDescription(op) } };
  const named = op.input.namedFile;
  const namedProps = named
    ? { [named.name]: { ...fileArgument(named.formats.map((f) => IMAGE_MEDIA_TYPES[f])), description: named.description } }
    : {};
  const fieldProps = Object.fromEntries(op.fields.map((f) => [f.name, fieldJsonSchema(f)]));
  return {
    type: 'object',
    additionalProperties: false,
    required: [...(takesFile ? [multiple ? 'files' : 'file'] : []), ...op.fields.filter((f) => f.required).map((f) => f.name)],
    properties: { ...fileProps, ...namedProps, ...fieldProps, ...DELIVERY_ARGUMENTS },
  };
}

// The service's tools as the bridge offers them: a file argument may also be a local { path }, and the
// description says the bridge pays (the service's own payment instructions are for payers, not hosts).
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

const PATH_ARGUMENT = {
  type: 'object',
  required: ['path'],
  additionalProperties: false,
  properties: {
    path: {
      type: 'string',
      description: 'A local file path inside the bridge\'s files folder (its working directory, or PAYDOC_FILES_ROOT); relative paths start there.',
    },
  },
};

const THROUGH_THE_BRIDGE = ' Through this bridge: pass a local file as { "path": "…" } (or as the service takes files); the bridge quotes, pays from its wallet within its caps, and writes file results to its output folder, returning their paths (a result delivered as a link, or to deliver_to, comes back as the service sends it).';

/** The service's tool as this bridge offers it: files may also be local paths, and the bridge pays. */
export function bridgedTool(tool: Tool): Tool {
  const schema = structuredClone(tool.inputSchema) as { properties?: Record<string, Record<string, unknown>> };
  const props = schema.properties ?? {};
  const either = (original: Record<string, unknown>) => {
    const { description, ...rest } = original;
    // An upstream file argument that is already a choice ({ data } or { url }) keeps every choice, beside { path }.
    const alternatives = rest.anyOf ?? rest.oneOf;
    const choices = Object.keys(rest).length === 1 && Array.isArray(alternatives) ? alternatives as unknown[] : [rest];
    return { ...(description ? { description } : {}), anyOf: [PATH_ARGUMENT, ...choices] };
  };
  if (props.file) props.file = either(props.file);
  if (props.files?.items) props.files = { ...props.files, items: either(props.files.items as Record<string, unknown>) };
  const description = tool.description?.replace(/ Paid with x402 \(([^)]*)\):.*$/s, ' Price: $1.') ?? '';
  return { ...tool, inputSchema: schema as Tool['inputSchema'], description: `${description}${THROUGH_THE_BRIDGE}` };
}

/** A result the service hands over elsewhere (a download link, or a push to deliver_to) is not written here. */
export function deliveredElsewhere(args: Record<string, unknown>): boolean {
  return args.delivery === 'link' || args.deliver_to !== undefined;
}

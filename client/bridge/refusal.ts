// How the bridge says no: a Refusal is a call it will not make (nothing signed or sent), returned to
// the host as a tool error; what the untrusted upstream names is shown bounded, on one line.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export class Refusal extends Error {}

export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** An upstream string shown in a message: bounded, on one line. */
export const shown = (value: unknown) => String(value).replace(/\s+/g, ' ').slice(0, 80);

// How an operation describes itself on this deployment: the catalog, OpenAPI, MCP tools, the
// 402's resources and /llms.txt all say the same, including where a local engine keeps the content.
import type { Operation } from '../../operations/define.js';
import { resolveContent } from '../content-route.js';
import type { PublicView } from './view.js';

/**
 * Whether the operation sends file content to the third-party provider on this deployment:
 * the catalog's sendsContent and the MCP tool's openWorldHint both say it.
 */
export function sendsContent(op: Operation, app: PublicView): boolean {
  return resolveContent(app.config, op).sendsContent;
}

/** The operation's description as this deployment runs it: on a local engine it says where the content stays. */
export function operationDescription(op: Operation, app: PublicView): string {
  const what = resolveContent(app.config, op).localEngine?.readsHere;
  if (what === undefined) return op.description;
  return `${op.description} On this service ${what}: the file's content stays on the server and is sent to no third party.`;
}

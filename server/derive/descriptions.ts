// How an operation describes itself on this deployment: the catalog, OpenAPI, MCP tools, the
// 402's resources and /llms.txt all say the same, including where a local engine keeps the content.
import type { Operation } from '../../operations/define.js';
import { runsLocally } from '../config.js';
import type { PublicView } from './view.js';

/**
 * Whether the operation sends file content to the third-party provider on this deployment:
 * the catalog's sendsContent and the MCP tool's openWorldHint both say it.
 */
export function sendsContent(op: Operation, app: PublicView): boolean {
  return op.thirdParty && !runsLocally(app.config, op);
}

/** The operation's description as this deployment runs it: on a local engine it says where the content stays. */
export function operationDescription(op: Operation, app: PublicView): string {
  if (!op.thirdParty || sendsContent(op, app)) return op.description;
  const what = op.localTables ? 'the tables are read on this server by its own layout engine, from the PDF\'s text layer (pages without one yield no tables)' : 'OCR runs on this server (tesseract)';
  return `${op.description} On this service ${what}: the file's content stays on the server and is sent to no third party.`;
}

// Request bodies for the operation routes and /mcp, read here rather than by hapi: hapi's own
// reader answers a body that is too slow only after the client has finished sending it (it
// drains the rest first), so a trickling client held the route until its response timeout. Read
// here, the upload limit answers 408 on time, and hapi closes the connection of a body that was
// not read to its end.
import type { Readable } from 'node:stream';
import Wreck from '@hapi/wreck';
import type { Request, RouteOptionsPayload } from '@hapi/hapi';

/** hapi's settings for a route whose body is read by readBody (gzip and deflate still decoded by hapi). */
export function streamedPayload(allow: string[], maxBytes: number): RouteOptionsPayload {
  return { output: 'stream', parse: 'gunzip', allow, maxBytes, timeout: false };
}

/**
 * The whole body, within `timeoutMs` of the start of reading (Boom 408 otherwise) and `maxBytes`
 * (Boom 413, hapi's own wording, whatever the Content-Length said).
 */
export function readBody(request: Request, timeoutMs: number): Promise<Buffer> {
  const { maxBytes } = request.route.settings.payload as { maxBytes: number };
  return Wreck.read(request.payload as Readable, { timeout: timeoutMs, maxBytes });
}

// Loopback HTTP sites for the web-page tests: a site that answers its pages by path, and a trap (a
// site without pages) that must see no connection.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A page: its HTML, or its content type and body. */
export type SitePage = string | [contentType: string, body: string | Buffer];
export interface LoopbackSite { port: number; connections: number; requested: string[]; close(): Promise<void> }

/** What every path without a page answers (200): a printed result must never hold it. */
export const TRAPPED = 'trapped';

/**
 * A loopback HTTP site answering `pages` by path and TRAPPED to any other path, never answering the
 * paths in `hang` (a page that never finishes loading); it counts connections and records the paths
 * asked for.
 */
export async function serveSite(pages: Record<string, SitePage> = {}, hang: readonly string[] = []): Promise<LoopbackSite> {
  const server = http.createServer((req, res) => {
    site.requested.push(req.url!);
    if (hang.includes(req.url!)) return;
    const page = pages[req.url!];
    if (page === undefined) {
      res.end(TRAPPED);
      return;
    }
    const [type, body] = typeof page === 'string' ? ['text/html; charset=utf-8', page] : page;
    res.writeHead(200, { 'content-type': type }).end(body);
  });
  const close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  const site: LoopbackSite = { port: 0, connections: 0, requested: [], close };
  server.on('connection', () => { site.connections += 1; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  site.port = (server.address() as AddressInfo).port;
  return site;
}

// The free endpoints (health, OpenAPI, discovery, the x402 well-known document, llms.txt,
// metrics, the icon) and the one log line per request.
import type { Plugin, Request } from '@hapi/hapi';
import { openapiDocument } from '../derive/openapi.js';
import { catalog } from '../derive/catalog.js';
import { llmsTxt, wellKnownX402 } from '../derive/agent-docs.js';
import type { App } from '../app.js';

// The service's icon: a page on the service's colour. The web page links it; agent directories
// and wallets show it next to the service (@agentcash/discovery looks for the page's
// <link rel="icon">, then /favicon.ico, .png or .svg). Every current browser draws an SVG icon,
// so /favicon.ico answers the same SVG rather than a second drawing of it.
const FAVICON_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
  + '<rect width="32" height="32" rx="6" fill="#0b5cad"/>'
  + '<path d="M9 5h10l6 6v16H9z" fill="#fff"/><path d="M19 5v6h6" fill="#b9d3f0"/>'
  + '<path d="M12.5 16h9M12.5 19.5h9M12.5 23h5.5" stroke="#0b5cad" stroke-width="1.6"/>'
  + '</svg>';

declare module '@hapi/hapi' {
  interface PluginsStates { paydoc?: { operation: string } }
}

function responseBytes(request: Request): number | undefined {
  const res = request.response as { source?: unknown; headers?: Record<string, unknown> } | null;
  const len = res?.headers?.['content-length'];
  if (len !== undefined) return Number(len);
  const src = res?.source;
  if (Buffer.isBuffer(src)) return src.length;
  if (typeof src === 'string') return Buffer.byteLength(src);
  return undefined;
}

export const freePlugin: Plugin<{ app: App }> = {
  name: 'free',
  register(server, { app }) {
    server.route({
      method: 'GET', path: '/v1/health',
      handler: (_request, h) => {
        const missing = Object.entries(app.engines).filter(([, ok]) => !ok).map(([name]) => name);
        const body = {
          status: missing.length ? 'degraded' : 'ok',
          version: app.version,
          // The engines' commands, each installed or not, under the key clients already read.
          binaries: app.engines,
          ...(missing.length ? { missing } : {}),
          payments: { mode: app.config.payments, networks: app.gate.chains.map((c) => c.network), facilitators: app.gate.facilitators() },
          modelProvider: app.config.modelBaseUrl !== '' || app.config.modelApiKey !== '',
          ocrEngine: app.config.ocrEngine,
          // Whether /v1/pdf/markdown reads scanned pages (locally) or leaves a note for each.
          markdownOcr: app.config.markdownOcr,
          tablesEngine: app.config.tablesEngine,
          workers: app.config.workers,
          queueDepth: app.pool.queueDepth,
        };
        return h.response(body).code(missing.length ? 503 : 200).header('cache-control', 'no-store');
      },
    });
    const openapi = (_r: Request, h: import('@hapi/hapi').ResponseToolkit) => h.response(openapiDocument(app)).type('application/json');
    server.route({ method: 'GET', path: '/openapi.json', handler: openapi });
    server.route({ method: 'GET', path: '/v1/openapi.json', handler: openapi });
    server.route({ method: 'GET', path: '/v1/discovery', handler: () => catalog(app) });
    server.route({ method: 'GET', path: '/.well-known/x402', handler: () => wellKnownX402(app) });
    server.route({ method: 'GET', path: '/llms.txt', handler: (_r, h) => h.response(llmsTxt(app)).type('text/markdown; charset=utf-8') });
    for (const path of ['/favicon.svg', '/favicon.ico']) {
      server.route({
        method: 'GET', path,
        handler: (_r, h) => h.response(FAVICON_SVG).type('image/svg+xml').header('cache-control', 'public, max-age=86400'),
      });
    }
    server.route({
      method: 'GET', path: '/metrics',
      handler: async (_r, h) => h.response(await app.metrics.registry.metrics()).type(app.metrics.registry.contentType),
    });

    // One line per request: id, operation, status, sizes and duration. Never names, contents,
    // passwords, schemas or text: the payload is not logged at all.
    server.events.on('response', (request) => {
      const operation = request.plugins.paydoc?.operation ?? request.route.path;
      const status = (request.response as { statusCode?: number } | null)?.statusCode ?? 0;
      const ms = Date.now() - request.info.received;
      if (request.plugins.paydoc) {
        app.metrics.requests.inc({ operation, status: String(status) });
        app.metrics.duration.observe({ operation }, ms / 1000);
      }
      app.logger.info({
        reqId: request.info.id,
        method: request.method.toUpperCase(),
        route: request.route.path,
        operation,
        status,
        inBytes: Number(request.headers['content-length'] ?? 0),
        outBytes: responseBytes(request),
        ms,
        // A body that did not arrive in time is the client's slowness, not a failure of ours.
        ...(status === 408 ? { clientTimeout: true } : {}),
      }, 'request');
    });
  },
};

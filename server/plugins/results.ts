// GET /v1/results/{token}: the one-time download of a result bought with delivery=link. The
// bytes are answered once: the first complete download of the whole body ends the link, as does
// its expiry. A HEAD (headers only) and a Range request (206, part of the body) leave it alive, so
// a probe or a resumed download never spends what the buyer paid for.
import type { Plugin } from '@hapi/hapi';
import { ServiceError } from '../../core/errors.js';
import type { App } from '../app.js';
import { endLink, linkHolder } from '../delivery.js';
import { relayToHolder, replicaOrigin, wasForwarded } from '../replica-forward.js';

// 32 random bytes in base64url.
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function gone(): ServiceError {
  return new ServiceError('RESULT_GONE', 'this result link was already downloaded, has expired, or was never made on this instance; results are not kept');
}

export const resultsPlugin: Plugin<{ app: App }> = {
  name: 'results',
  register(server, { app }) {
    server.route({
      method: 'GET',
      path: '/v1/results/{token}',
      options: { description: 'Download a result bought with delivery=link (once)' },
      handler: async (request, h) => {
        request.plugins.paydoc = { operation: 'result-link' };
        const token = String(request.params.token);
        if (!TOKEN.test(token)) throw gone();
        const output = app.links.get(token);
        if (!output) {
          // With several replicas, the one that made the link holds it: the download is passed on
          // to it when it said where it is, else a retry through the load balancer can reach it.
          const holder = await linkHolder(app.gate.guard, token);
          if (!holder) throw gone();
          const address = replicaOrigin(holder.address);
          if (address && holder.address !== app.config.replicaUrl && !wasForwarded(request.raw.req.headers)) {
            const relayed = await relayToHolder(request, h, address, app.config.facilitatorTimeoutMs, undefined);
            if (relayed) return relayed;
          }
          throw new ServiceError('RESULT_ELSEWHERE', 'this result link is held by another instance of the service; retry in a moment (a load balancer may send the retry to the instance holding it)', { retryAfterSeconds: 1 });
        }
        // Ended by the first download of the whole body that reached the client; a cut download,
        // a HEAD and a range (206) can be followed by the full GET. Node emits 'finish' even when
        // the client reset the connection mid-body: the socket's error tells that download apart.
        const res = request.raw.res;
        const socket = request.raw.req.socket;
        res.once('finish', () => {
          if (request.method !== 'get' || res.statusCode !== 200 || socket.errored) return;
          void endLink({ links: app.links, registry: app.gate.guard }, token, app.config.resultLinkTtlS);
        });
        return h.response(Buffer.from(output.body.buffer, output.body.byteOffset, output.body.byteLength))
          .type(output.mediaType)
          .header('cache-control', 'no-store')
          .header('referrer-policy', 'no-referrer');
      },
    });
  },
};

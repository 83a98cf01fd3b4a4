// GET /v1/jobs/{token}: the state of a long job started with `Prefer: respond-async` (server/jobs.ts):
// running, failed (with the error the synchronous call would have answered), or done (with its
// one-time result link, or the receipt of the push to deliver_to). Reading it spends nothing.
import type { Plugin } from '@hapi/hapi';
import { ServiceError } from '../../core/errors.js';
import type { App } from '../app.js';
import { JOB_TOKEN, jobHolder } from '../jobs.js';
import { relayToHolder, replicaOrigin, wasForwarded } from '../replica-forward.js';

function notFound(app: App): ServiceError {
  return new ServiceError('NOT_FOUND', `no job with this token: jobs are kept ${app.config.resultLinkTtlS} s after they end`
    + ' (RESULT_LINK_TTL_S) and only in memory; it has expired, or was never made');
}

export const jobsPlugin: Plugin<{ app: App }> = {
  name: 'jobs',
  register(server, { app }) {
    server.route({
      method: 'GET',
      path: '/v1/jobs/{token}',
      options: { description: 'The state of a long job (Prefer: respond-async) and, once done, its one-time result link' },
      handler: async (request, h) => {
        request.plugins.paydoc = { operation: 'job' };
        const token = String(request.params.token);
        if (!JOB_TOKEN.test(token)) throw notFound(app);
        const job = app.jobs.get(token);
        if (!job) {
          // With several replicas, the one that accepted the job holds it: the request is passed on
          // to it when it said where it is, else a retry through the load balancer can reach it.
          const holder = await jobHolder(app.gate.guard, token);
          if (!holder) throw notFound(app);
          const address = replicaOrigin(holder.address);
          if (address && holder.address !== app.config.replicaUrl && !wasForwarded(request.raw.req.headers)) {
            const relayed = await relayToHolder(request, h, address, app.config.facilitatorTimeoutMs, undefined);
            if (relayed) return relayed;
          }
          throw new ServiceError('RESULT_ELSEWHERE',
            'this job is held by another instance of the service; retry in a moment (a load balancer may send the retry to the instance holding it)',
            { retryAfterSeconds: 1 });
        }
        return h.response({ job }).type('application/json').header('cache-control', 'no-store');
      },
    });
  },
};

// createServer(): builds and initialises the hapi server without listening. bin/ and the tests
// share it. Routes, MCP tools, OpenAPI and the catalog all come from the operation table.
import Hapi from '@hapi/hapi';
import { pino, type DestinationStream } from 'pino';
import { corsOriginList, loadConfig, workerSettings, type Config } from './config.js';
import { operations } from '../operations/index.js';
import { WorkerPool } from './pool.js';
import { createMetrics } from './metrics.js';
import { ensureJobRoot, jobDirLifetimeMs, startJobDirSweeper } from './jobdir.js';
import { createPaymentGate, startDevRigs, stopDevRigs, type DevRigs } from './payment/setup.js';
import type { PaymentGate } from './payment/gate.js';
import { InspectionCache } from '../checks/cache.js';
import { errorsPlugin } from './plugins/errors.js';
import { operationsPlugin } from './plugins/operations.js';
import { freePlugin } from './plugins/free.js';
import { mcpPlugin } from './plugins/mcp.js';
import { webPlugin } from './plugins/web.js';
import { resultsPlugin } from './plugins/results.js';
import { channelsPlugin } from './plugins/channels.js';
import { bodyPrecheckPlugin } from './plugins/body.js';
import { checkEngines } from './engines.js';
import { localEngines } from './content-route.js';
import { outboundRules } from './outbound/fetcher.js';
import { ResultLinks } from './delivery.js';
import { Jobs, jobLifetimeMs } from './jobs.js';
import { mostUrlInputs } from './pipeline.js';
import { ToolTasks } from './mcp-tasks.js';
import { jobsPlugin } from './plugins/jobs.js';
import type { App } from './app.js';

// How often an MCP client is told to poll tasks/get.
const TASK_POLL_INTERVAL_MS = 1000;

export interface CreateServerOptions {
  config?: Partial<Config>;
  env?: NodeJS.ProcessEnv;
  /** Local chains owned by the caller (tests share one rig across servers); otherwise dev mode starts its own. */
  rigs?: DevRigs;
  /** Where log lines go (tests capture them); stdout by default. */
  logDestination?: DestinationStream;
}

export interface Service {
  server: Hapi.Server;
  app: App;
  /** Stops accepting, lets in-flight jobs finish, then stops the pool and the rigs this service started. */
  stop(options?: { timeout?: number }): Promise<void>;
}

export { VERSION } from '../core/version.js';
import { VERSION } from '../core/version.js';
import { warmLauncher } from '../tools/process/run-tool.js';

export async function createServer(options: CreateServerOptions = {}): Promise<Service> {
  const config = loadConfig(options.config, options.env);
  const outbound = outboundRules(config);
  const logger = pino({ level: config.logLevel, base: undefined }, options.logDestination);
  // The quote's checks run engines from this thread: start its launcher while the process is small.
  warmLauncher();
  await ensureJobRoot(config.tmpDir);
  const ownRigs = config.payments === 'dev' && !options.rigs;
  const rigs: DevRigs = options.rigs ?? (config.payments === 'dev' ? await startDevRigs(config) : {});
  const pool = new WorkerPool({ workers: config.workers, queueMax: config.queueMax, settings: workerSettings(config) });
  const metrics = createMetrics({ queueDepth: () => pool.queueDepth, busyWorkers: () => pool.busy });
  let gate: PaymentGate;
  try {
    gate = await createPaymentGate(config, rigs, metrics);
  } catch (err) {
    await pool.close();
    if (ownRigs) await stopDevRigs(rigs);
    throw err;
  }
  // A local engine's program is required only where the settings choose that engine.
  const engines = await checkEngines(operations, localEngines(config, operations));
  const app: App = { config, pool, gate, metrics, logger, engines, rigs, version: VERSION, inspections: new InspectionCache({ onLookup: (hit) => metrics.inspectionCache.inc({ result: hit ? 'hit' : 'miss' }) }),
    outbound, links: new ResultLinks(config.resultLinkTtlS * 1000),
    jobs: new Jobs({ keepMs: config.resultLinkTtlS * 1000, registry: gate.guard, replicaUrl: () => config.replicaUrl || undefined }),
    tasks: new ToolTasks({ ttlMs: jobLifetimeMs(config), pollIntervalMs: TASK_POLL_INTERVAL_MS }) };

  const server = Hapi.server({
    port: config.port,
    host: config.host,
    // Request bodies are read by the routes that need them; URLs and headers stay small.
    routes: {
      cors: {
        origin: corsOriginList(config),
        // The standard x402 clients (@x402/fetch, @x402/axios) send Access-Control-Expose-Headers on
        // the paid retry: a browser app on another origin can pay only if the preflight allows it.
        additionalHeaders: ['payment-signature', 'x-payment', 'access-control-expose-headers', 'prefer', 'mcp-protocol-version', 'mcp-session-id'],
        // …and reads the operations' report headers (Paydoc-Redactions, Paydoc-Removed).
        additionalExposedHeaders: ['payment-required', 'payment-response', 'retry-after', 'location', 'preference-applied', 'mcp-session-id', ...operations.flatMap((op) => (op.output.report ? [op.output.report.header.toLowerCase()] : []))],
        maxAge: 600,
      },
      security: { noSniff: true, referrer: 'no-referrer' },
    },
    router: { stripTrailingSlash: true },
    // A gzip stream costs about a millisecond to set up and tear down, more than it saves on the
    // few kilobytes of a quote or an error; larger bodies (JSON results, the catalog) are still compressed.
    compression: { minBytes: 8 * 1024 },
  });
  server.app = app as never;
  await server.register([
    { plugin: errorsPlugin, options: { app } },
    { plugin: bodyPrecheckPlugin, options: { drainMs: config.uploadTimeoutMs } },
    { plugin: freePlugin, options: { app } },
    { plugin: operationsPlugin, options: { app } },
    { plugin: mcpPlugin, options: { app } },
    { plugin: resultsPlugin, options: { app } },
    { plugin: jobsPlugin, options: { app } },
    ...(gate.channels ? [{ plugin: channelsPlugin, options: { app } }] : []),
    { plugin: webPlugin, options: { app } },
  ]);
  // The /dev/ routes (the page's demo payer) exist only in dev mode; live mode never loads them.
  if (config.payments === 'dev') await server.register({ plugin: (await import('./plugins/dev.js')).devPlugin, options: { app } });
  await server.initialize();
  const sweeper = startJobDirSweeper(config.tmpDir, jobDirLifetimeMs(config, mostUrlInputs(operations)), (count) => {
    logger.warn({ count }, 'removed job directories left by a process that was killed');
  });

  let stopped = false;
  return {
    server,
    app,
    async stop({ timeout = 60_000 } = {}) {
      if (stopped) return;
      stopped = true;
      sweeper.stop();
      await server.stop({ timeout });
      // Long jobs and MCP tasks run on without a request: they end (settled or released) first.
      await app.jobs.idle(timeout);
      await pool.close();
      await gate.close();
      app.links.clear();
      app.jobs.clear();
      app.tasks.clear();
      if (ownRigs) await stopDevRigs(rigs);
    },
  };
}

// What the service's parts share once it is built: the settings, the pool, the payment gate and
// the stores. createServer (index.ts) builds it and hands it to every plugin; the plugins and the
// paid-call path import this type from here, never index.ts, so the server and its plugins do not
// import each other.
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { WorkerPool } from './pool.js';
import type { Metrics } from './metrics.js';
import type { DevRigs } from './payment/setup.js';
import type { PaymentGate } from './payment/gate.js';
import type { InspectionCache } from '../checks/cache.js';
import type { EngineStatus } from './engines.js';
import type { OutboundRules } from './outbound/fetcher.js';
import type { ResultLinks } from './delivery.js';
import type { Jobs } from './jobs.js';
import type { ToolTasks } from './mcp-tasks.js';

export interface App {
  config: Config;
  pool: WorkerPool;
  gate: PaymentGate;
  metrics: Metrics;
  logger: Logger;
  /** Whether each engine command the operations need is installed (the boot check, /v1/health). */
  engines: EngineStatus;
  /** Pre-payment inspection results by content digest, so a paid retry does not repeat its quote's. */
  inspections: InspectionCache;
  /** The rules of every fetch and push made for a buyer (URL_* settings). */
  outbound: OutboundRules;
  /** Results kept for their one-time links (delivery=link). */
  links: ResultLinks;
  /** Long jobs (Prefer: respond-async), by token. */
  jobs: Jobs;
  /** MCP tasks (task-augmented tools/call), by task id. */
  tasks: ToolTasks;
  rigs: DevRigs;
  version: string;
}

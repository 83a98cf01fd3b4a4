// Prometheus metrics at GET /metrics. One registry per server instance, so tests that start
// several servers in one process do not share counters.
import { Registry, Counter, Histogram, Gauge } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'operation' | 'status'>;
  duration: Histogram<'operation'>;
  jobs: Counter<'operation' | 'outcome'>;
  payments: Counter<'stage'>;
  inspectionCache: Counter<'result'>;
  queueDepth: Gauge;
  busyWorkers: Gauge;
  channelClaims: Counter;
  /** Reads the payment channels' totals at each scrape, once the gate has its channels. */
  sampleChannels(read: () => Promise<ChannelSample>): void;
}

/** What /metrics shows of the payment channels. */
export interface ChannelSample {
  openChannels: number;
  unclaimedUsd: number;
  /** Unix seconds of the last claim this process made; 0 before the first. */
  lastClaimAt: number;
}

export function createMetrics(sample: { queueDepth: () => number; busyWorkers: () => number }): Metrics {
  const registry = new Registry();
  let channels: (() => Promise<ChannelSample>) | undefined;
  let lastChannels: ChannelSample = { openChannels: 0, unclaimedUsd: 0, lastClaimAt: 0 };
  const channelGauge = (name: string, help: string, pick: (sample: ChannelSample) => number) => new Gauge({
    name, help, registers: [registry],
    // A store that cannot be read (Redis down) leaves the last value; the scrape still answers.
    async collect() { if (channels) this.set(pick(await channels().catch(() => lastChannels))); },
  });
  channelGauge('paydoc_channel_unclaimed_usd', 'USD charged through payment channels and not yet claimed on the chain.', (c) => c.unclaimedUsd);
  channelGauge('paydoc_channels_open', 'Payment channels this service holds state for.', (c) => c.openChannels);
  channelGauge('paydoc_channel_last_claim_timestamp_seconds', 'When this process last claimed vouchers on the chain (Unix seconds; 0: not yet).', (c) => c.lastClaimAt);
  return {
    channelClaims: new Counter({ name: 'paydoc_channel_vouchers_claimed_total', help: 'Channel vouchers claimed on the chain.', registers: [registry] }),
    sampleChannels(read) {
      channels = async () => (lastChannels = await read());
    },
    registry,
    requests: new Counter({ name: 'paydoc_requests_total', help: 'Requests by operation and status.', labelNames: ['operation', 'status'], registers: [registry] }),
    duration: new Histogram({
      name: 'paydoc_request_duration_seconds', help: 'Request duration by operation.', labelNames: ['operation'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300], registers: [registry],
    }),
    jobs: new Counter({ name: 'paydoc_jobs_total', help: 'Jobs handed to the worker pool: started, then one outcome each (ok, failed, timeout, cancelled when the pool refused it).', labelNames: ['operation', 'outcome'], registers: [registry] }),
    payments: new Counter({
      name: 'paydoc_payments_total', help: 'Payments by stage: verified, settled, refused, settle_failed, cancelled (the job failed), cancelled_client_gone (the client left before settlement), replay_refused, verify_error, facilitator_refused (the facilitator refused this service\'s credentials).',
      labelNames: ['stage'], registers: [registry],
    }),
    inspectionCache: new Counter({
      name: 'paydoc_inspection_cache_total', help: 'Pre-payment PDF inspections answered from the cache (hit: a paid retry reusing its quote\'s) or run (miss).',
      labelNames: ['result'], registers: [registry],
    }),
    queueDepth: new Gauge({ name: 'paydoc_queue_depth', help: 'Jobs waiting for a worker.', registers: [registry], collect() { this.set(sample.queueDepth()); } }),
    busyWorkers: new Gauge({ name: 'paydoc_busy_workers', help: 'Workers running a job.', registers: [registry], collect() { this.set(sample.busyWorkers()); } }),
  };
}

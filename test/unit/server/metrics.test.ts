// server/metrics.ts: the counters /metrics shows, read from the registry as a scrape reads them:
// one registry per server, the queue and workers sampled at the scrape, and the payment channels'
// gauges that keep their last value when the store cannot be read.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { createMetrics, type ChannelSample } from '../../../server/metrics.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('server/metrics', () => {
  it('each server has its own counters; the queue and busy workers are read at each scrape', async () => {
    let depth = 3;
    const a = createMetrics({ queueDepth: () => depth, busyWorkers: () => 2 });
    const b = createMetrics({ queueDepth: () => 0, busyWorkers: () => 0 });
    a.requests.inc({ operation: 'pdf.split', status: '200' });
    a.payments.inc({ stage: 'settled' }, 2);
    const first = await a.registry.metrics();
    expect(value(first, 'paydoc_requests_total{operation="pdf.split",status="200"}')).to.equal(1);
    expect(value(first, 'paydoc_payments_total{stage="settled"}')).to.equal(2);
    expect([value(first, 'paydoc_queue_depth'), value(first, 'paydoc_busy_workers')]).to.equal([3, 2]);
    depth = 0;
    expect(value(await a.registry.metrics(), 'paydoc_queue_depth')).to.equal(0);
    expect(value(await b.registry.metrics(), 'paydoc_requests_total{operation="pdf.split",status="200"}')).to.be.undefined();
  });

  it('the channels\' gauges: zero before the gate has channels, then each scrape\'s reading; a failed reading keeps the last', async () => {
    const metrics = createMetrics({ queueDepth: () => 0, busyWorkers: () => 0 });
    const gauges = async () => {
      const text = await metrics.registry.metrics();
      const names = ['paydoc_channels_open', 'paydoc_channel_unclaimed_usd', 'paydoc_channel_last_claim_timestamp_seconds'];
      return names.map((name) => value(text, name));
    };
    expect(await gauges()).to.equal([0, 0, 0]);
    let reading: () => Promise<ChannelSample> = async () => ({ openChannels: 2, unclaimedUsd: 0.035, lastClaimAt: 1764300000 });
    metrics.sampleChannels(() => reading());
    expect(await gauges()).to.equal([2, 0.035, 1764300000]);
    reading = async () => { throw new Error('redis timed out'); };
    expect(await gauges()).to.equal([2, 0.035, 1764300000]);
    reading = async () => ({ openChannels: 1, unclaimedUsd: 0, lastClaimAt: 1764300600 });
    expect(await gauges()).to.equal([1, 0, 1764300600]);
  });
});

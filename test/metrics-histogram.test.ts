// The upstream latency histogram keeps its observations in plain arrays (src/base/metrics.ts); what /metrics prints
// and what the cluster primary adds up must be what prom-client's own histogram would give.
import { describe, expect, it } from 'vitest';
import { AggregatorRegistry } from 'prom-client';
import { Metrics } from '../src/base/metrics.js';

const lines = (text: string) => text.split('\n').filter((l) => l.startsWith('gateway_upstream_latency_seconds'));

describe('the upstream latency histogram', () => {
  it('prints cumulative buckets by le, +Inf, the sum and the count of each label set', async () => {
    const metrics = new Metrics();
    for (const seconds of [0.003, 0.02, 100]) metrics.observeUpstream('fake', 200, seconds);
    metrics.observeUpstream('fake', 502, 0.005);
    const printed = lines(await metrics.registry.metrics());
    expect(printed).toContain('gateway_upstream_latency_seconds_bucket{le="0.005",channel="fake",status="200"} 1');
    expect(printed).toContain('gateway_upstream_latency_seconds_bucket{le="0.01",channel="fake",status="200"} 1');
    expect(printed).toContain('gateway_upstream_latency_seconds_bucket{le="0.025",channel="fake",status="200"} 2');
    expect(printed).toContain('gateway_upstream_latency_seconds_bucket{le="60",channel="fake",status="200"} 2');
    expect(printed).toContain('gateway_upstream_latency_seconds_bucket{le="+Inf",channel="fake",status="200"} 3');
    expect(printed).toContain('gateway_upstream_latency_seconds_sum{channel="fake",status="200"} 100.023');
    expect(printed).toContain('gateway_upstream_latency_seconds_count{channel="fake",status="200"} 3');
    // A value on a bound falls in that bound's bucket (le is "less than or equal").
    expect(printed).toContain('gateway_upstream_latency_seconds_bucket{le="0.005",channel="fake",status="502"} 1');
    expect(printed).toContain('gateway_upstream_latency_seconds_count{channel="fake",status="502"} 1');
    expect(printed).toHaveLength(2 * 16);
  });

  it('prints a histogram without labels from the start, and one observation a batch of request-log rows', async () => {
    const metrics = new Metrics();
    const lag = () => metrics.registry.metrics().then((text) => text.split('\n').filter((l) => l.startsWith('gateway_request_log_write_lag_seconds')));
    expect(await lag()).toContain('gateway_request_log_write_lag_seconds_count 0');
    metrics.requestLogMeter.written(3, 0.002);
    const printed = await lag();
    expect(printed).toContain('gateway_request_log_write_lag_seconds_bucket{le="0.001"} 0');
    expect(printed).toContain('gateway_request_log_write_lag_seconds_bucket{le="0.005"} 1');
    expect(printed).toContain('gateway_request_log_write_lag_seconds_bucket{le="+Inf"} 1');
    expect(printed).toContain('gateway_request_log_write_lag_seconds_sum 0.002');
    expect(printed).toContain('gateway_request_log_write_lag_seconds_count 1');
    expect((await metrics.registry.metrics()).split('\n')).toContain('gateway_request_logs_written_total 3');
  });

  it('adds up across the workers of a cluster as the primary does', async () => {
    const [a, b] = [new Metrics(), new Metrics()];
    a.observeUpstream('fake', 200, 0.003);
    b.observeUpstream('fake', 200, 0.3);
    const summed = await AggregatorRegistry.aggregate([await a.registry.getMetricsAsJSON(), await b.registry.getMetricsAsJSON()]).metrics();
    const printed = lines(summed);
    expect(printed).toContain('gateway_upstream_latency_seconds_bucket{le="0.005",channel="fake",status="200"} 1');
    expect(printed).toContain('gateway_upstream_latency_seconds_bucket{le="0.5",channel="fake",status="200"} 2');
    expect(printed).toContain('gateway_upstream_latency_seconds_count{channel="fake",status="200"} 2');
  });
});

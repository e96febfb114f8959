// Prometheus metrics: requests by route and status, upstream latency by channel, tokens and cost.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ModelRoute } from './config/types.js';
import type { Settlement } from './billing/meter.js';

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({ name: 'gateway_requests_total', help: 'Requests by route and status', labelNames: ['route', 'method', 'status'], registers: [this.registry] });
  readonly upstreamLatency = new Histogram({
    name: 'gateway_upstream_latency_seconds',
    help: 'Time to upstream response headers, by channel',
    labelNames: ['channel', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly tokens = new Counter({ name: 'gateway_tokens_total', help: 'Tokens billed, by model and direction', labelNames: ['model', 'direction'], registers: [this.registry] });
  readonly cost = new Counter({ name: 'gateway_cost_micros_total', help: 'Cost billed in micro-units, by model and currency', labelNames: ['model', 'currency'], registers: [this.registry] });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  recordUsage(route: ModelRoute, s: Settlement): void {
    if (s.inputTokens) this.tokens.inc({ model: route.model.id, direction: 'input' }, s.inputTokens);
    if (s.outputTokens) this.tokens.inc({ model: route.model.id, direction: 'output' }, s.outputTokens);
    this.cost.inc({ model: route.model.id, currency: route.model.price.currency }, s.costMicros);
  }
}

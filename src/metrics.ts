// Prometheus metrics: requests by route and status, upstream latency by channel, tokens, cost and overage.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ChargeRef, Settlement } from './billing/meter.js';

const count = (n: number | undefined) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0);

/**
 * A counter's labelled children kept by their label values, so the hot path does not build and hash a label object
 * per increment. Label values come from configuration and routing (models, routes, methods, statuses): a bounded set.
 */
function childrenOf<L extends string, C>(metric: { labels(...values: string[]): C }): (...values: string[]) => C {
  const children = new Map<string, C>();
  return (...values) => {
    const key = values.join('\u0000');
    let child = children.get(key);
    if (!child) {
      child = metric.labels(...values);
      children.set(key, child);
    }
    return child;
  };
}

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
  readonly overage = new Counter({
    name: 'gateway_overage_micros_total',
    help: 'Cost upstreams reported beyond the reservation (recorded, not charged), by model and channel',
    labelNames: ['model', 'channel'],
    registers: [this.registry],
  });

  private readonly requestsBy = childrenOf(this.requests);
  private readonly latencyBy = childrenOf(this.upstreamLatency);
  private readonly tokensBy = childrenOf(this.tokens);
  private readonly costBy = childrenOf(this.cost);

  readonly retries = new Counter({ name: 'gateway_upstream_retries_total', help: 'Upstream calls sent again (connection failure, 429, 5xx), by channel', labelNames: ['channel'], registers: [this.registry] });

  /** Run before a scrape, so what was done but not yet recorded is counted (charges waiting for their batch). */
  private readonly beforeScrape: (() => Promise<void>)[] = [];

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  onScrape(fn: () => Promise<void>): void {
    this.beforeScrape.push(fn);
  }

  /** The Prometheus text of every metric. */
  async scrape(): Promise<string> {
    for (const fn of this.beforeScrape) await fn();
    return this.registry.metrics();
  }

  /** Times an upstream call to its response headers. */
  observeUpstream(channel: string, status: number, seconds: number): void {
    this.latencyBy(channel, String(status)).observe(seconds);
  }

  /** Counts an answered request (the onResponse hook). */
  countRequest(route: string, method: string, status: number): void {
    this.requestsBy(route, method, String(status)).inc();
  }

  /** Reads circuit states when /metrics is scraped. */
  watchCircuits(read: () => Record<string, string>): void {
    const level: Record<string, number> = { closed: 0, 'half-open': 0.5, open: 1 };
    new Gauge({
      name: 'gateway_channel_circuit_open',
      help: "A channel's circuit breaker: 0 closed, 0.5 half-open, 1 open",
      labelNames: ['channel'],
      registers: [this.registry],
      collect() {
        for (const [channel, state] of Object.entries(read())) this.set({ channel }, level[state] ?? 0);
      },
    });
  }

  /** Counts a billed charge. Never throws: a metric must not be able to keep an answer from ending. */
  recordCharge(ref: ChargeRef, s: Settlement, chargedMicros: number, overageMicros: number): void {
    this.tokensBy(ref.model, 'input').inc(count(s.inputTokens));
    this.tokensBy(ref.model, 'output').inc(count(s.outputTokens));
    this.costBy(ref.model, ref.currency).inc(count(chargedMicros));
    if (overageMicros > 0) this.overage.inc({ model: ref.model, channel: s.route?.channel.id ?? ref.channel }, count(overageMicros));
  }
}

// Prometheus metrics: requests by route and status, upstream latency by channel, tokens, cost and overage.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValueWithName } from 'prom-client';

/** Statuses as label values, spelled once. */
const statusTexts = new Map<number, string>();
const statusText = (status: number) => statusTexts.get(status) ?? (statusTexts.set(status, String(status)), String(status));

const count = (n: number | undefined) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0);

interface LabelledCount {
  labels: Record<string, string>;
  value: number;
}

/**
 * A counter's values by label, kept as plain numbers that prom-client reads when /metrics is scraped: the hot path
 * adds to a number instead of validating and hashing a label object per increment. Label values come from
 * configuration and routing (models, routes, methods, statuses): a bounded set.
 */
class CountsByLabel {
  /** Entries by label values, one Map level each: the lookup hashes strings the caller already holds (no key built). */
  private readonly counts = new Map<string, Map<string, Map<string, LabelledCount>>>();
  private readonly all: LabelledCount[] = [];

  constructor(private readonly labelNames: readonly string[]) {}

  /** The count for these label values, in `labelNames` order. */
  at(a: string, b: string, c = ''): { value: number } {
    let byB = this.counts.get(a);
    if (!byB) this.counts.set(a, (byB = new Map()));
    let byC = byB.get(b);
    if (!byC) byB.set(b, (byC = new Map()));
    let entry = byC.get(c);
    if (!entry) {
      const values = [a, b, c];
      entry = { labels: Object.fromEntries(this.labelNames.map((name, i) => [name, values[i]])), value: 0 };
      byC.set(c, entry);
      this.all.push(entry);
    }
    return entry;
  }

  /** Copies the counts into `counter` (its collect hook, before each scrape). */
  copyTo(counter: Counter<string>): void {
    counter.reset();
    for (const { labels, value } of this.all) counter.inc(labels, value);
  }
}

/** A counter whose values live in a CountsByLabel. */
function countedCounter(registry: Registry, name: string, help: string, labelNames: string[]): CountsByLabel {
  const counts = new CountsByLabel(labelNames);
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      counts.copyTo(this);
    },
  });
  return counts;
}

/** One label set's observations: counts by bucket (not cumulative), their sum and number. */
interface Buckets {
  labels: Record<string, string>;
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram whose observations land in plain arrays, read by prom-client only when /metrics is scraped: an
 * observation finds its bucket and adds, where prom-client's own validates and hashes its labels each time (a few µs
 * of a request sent alone). Label values are a bounded set (channels, statuses).
 */
class BucketedHistogram extends Histogram<string> {
  private readonly sets = new Map<string, Map<string, Buckets>>();
  private readonly bounds: number[];

  constructor(name: string, help: string, private readonly names: [] | [string, string], buckets: number[], registry: Registry) {
    super({ name, help, labelNames: names, buckets, registers: [registry] });
    this.bounds = buckets;
  }

  /** The label set (a, b), made on first use; () for a histogram without labels. */
  at(a = '', b = ''): Buckets {
    let byB = this.sets.get(a);
    if (!byB) this.sets.set(a, (byB = new Map()));
    let set = byB.get(b);
    if (!set) {
      const labels = this.names.length ? { [this.names[0]]: a, [this.names[1]]: b } : {};
      byB.set(b, (set = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }));
    }
    return set;
  }

  record(set: Buckets, value: number): void {
    // prom-client refuses a value that is not finite; one would spoil the sum for good.
    if (!Number.isFinite(value)) return;
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    set.counts[i]++;
    set.sum += value;
    set.count++;
  }

  /** prom-client's shape of a histogram: cumulative buckets by `le`, then the sum and the count, per label set. */
  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const { name, help } = this as unknown as { name: string; help: string };
    const values: MetricValueWithName<string>[] = [];
    for (const byB of this.sets.values()) {
      for (const { labels, counts, sum, count } of byB.values()) {
        let running = 0;
        for (let i = 0; i <= this.bounds.length; i++) {
          running += counts[i];
          values.push({ labels: { le: i < this.bounds.length ? this.bounds[i] : '+Inf', ...labels }, value: running, metricName: `${name}_bucket` });
        }
        values.push({ labels, value: sum, metricName: `${name}_sum` }, { labels, value: count, metricName: `${name}_count` });
      }
    }
    return { name, help, type: 'histogram', values, aggregator: 'sum' } as unknown as MetricObjectWithValues<MetricValueWithName<string>>;
  }

  /** What the registry prints from: the same values (their labels already whole). */
  getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    return this.get();
  }
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = countedCounter(this.registry, 'gateway_requests_total', 'Requests by route and status', ['route', 'method', 'status']);
  private readonly upstreamLatency = new BucketedHistogram(
    'gateway_upstream_latency_seconds',
    'Time to upstream response headers, by channel',
    ['channel', 'status'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    this.registry,
  );
  private readonly routeAttempts = countedCounter(this.registry, 'gateway_route_attempts_total', 'Attempts at route targets (channel/model), by outcome: answered, failed, skipped', ['route', 'target', 'outcome']);
  private readonly routeCooldowns = countedCounter(this.registry, 'gateway_route_cooldowns_total', 'Times a route target was cooled (skipped for cooldown.seconds)', ['route', 'target']);
  private readonly routeLatency = new BucketedHistogram(
    'gateway_route_target_latency_seconds',
    'Time to a route target answer head (for a stream, its first byte), answered or failed',
    ['route', 'target'],
    [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    this.registry,
  );
  private readonly tokens = countedCounter(this.registry, 'gateway_tokens_total', 'Tokens billed, by model and direction', ['model', 'direction']);
  private readonly cost = countedCounter(this.registry, 'gateway_cost_micros_total', 'Cost billed in micro-units, by model and currency', ['model', 'currency']);
  readonly overage = new Counter({
    name: 'gateway_overage_micros_total',
    help: 'Cost upstreams reported beyond the reservation (charged, and recorded as overage), by model and channel',
    labelNames: ['model', 'channel'],
    registers: [this.registry],
  });

  private readonly keyAttempts = countedCounter(this.registry, 'gateway_upstream_key_requests_total', "Upstream calls by key pool entry (the variable naming it, never its value) and status", ['channel', 'key', 'status']);
  private readonly keyRests = countedCounter(this.registry, 'gateway_upstream_key_rests_total', 'Times a key pool entry was set to rest after the upstream refused it, by why: cooling (429) or revoked (401)', ['channel', 'key', 'reason']);

  readonly retries = new Counter({ name: 'gateway_upstream_retries_total', help: 'Upstream calls sent again (connection failure, 429, 5xx), by channel', labelNames: ['channel'], registers: [this.registry] });

  private readonly requestLogsWritten = new Counter({ name: 'gateway_request_logs_written_total', help: 'Request-log rows committed by this process', registers: [this.registry] });
  private readonly requestLogsDropped = new Counter({ name: 'gateway_request_logs_dropped_total', help: 'Request-log rows that could not be written (see the log)', registers: [this.registry] });
  private readonly requestLogLag = new BucketedHistogram(
    'gateway_request_log_write_lag_seconds',
    'Time from handing a batch of request-log rows (those of one turn of the event loop) to the spend store to its commit; one observation a batch',
    [],
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    this.registry,
  );
  private readonly requestLogLagSet = this.requestLogLag.at();

  /** What the request-log writer reports (src/request-logs/writer.ts). */
  readonly requestLogMeter = {
    written: (rows: number, lagSeconds: number) => {
      this.requestLogsWritten.inc(rows);
      this.requestLogLag.record(this.requestLogLagSet, lagSeconds);
    },
    dropped: () => this.requestLogsDropped.inc(),
  };

  /** The request log's size (rows, captured body bytes), read at most once a minute when /metrics is scraped. */
  watchRequestLogs(read: () => Promise<{ rows: number }>): void {
    let last = { rows: 0 };
    let readAt = 0;
    const rows = new Gauge({ name: 'gateway_request_logs_rows', help: 'Rows in the request log (all workspaces; refreshed at most once a minute)', registers: [this.registry] });
    this.onScrape(async () => {
      if (Date.now() - readAt < 60_000) return;
      readAt = Date.now();
      last = await read().catch(() => last);
      rows.set(last.rows);
    });
  }

  /** Run before a scrape, so what was done but not yet recorded is counted (charges waiting for their batch). */
  private readonly beforeScrape: (() => Promise<void>)[] = [];

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  onScrape(fn: () => Promise<void>): void {
    this.beforeScrape.push(fn);
  }

  /** Set in a cluster worker: a scrape reads every worker's metrics, added up by the primary. */
  private addedUp: (() => Promise<string>) | undefined;

  /** The Prometheus text of every metric (of every worker of the cluster). */
  async scrape(): Promise<string> {
    for (const fn of this.beforeScrape) await fn();
    return this.addedUp ? this.addedUp() : this.registry.metrics();
  }

  /** Scrapes answer with `addUp()` (the cluster primary's sum over the workers) instead of this process's registry. */
  scrapeWith(addUp: () => Promise<string>): void {
    this.addedUp = addUp;
  }

  /** Times an upstream call to its response headers. */
  observeUpstream(channel: string, status: number, seconds: number): void {
    this.upstreamLatency.record(this.upstreamLatency.at(channel, statusText(status)), seconds);
  }

  /** Counts an upstream call made with a key pool's entry. */
  countKeyAttempt(channel: string, key: string, status: number): void {
    this.keyAttempts.at(channel, key, statusText(status)).value++;
  }

  /** Counts a key pool entry set to rest. */
  countKeyRest(channel: string, key: string, reason: 'cooling' | 'revoked'): void {
    this.keyRests.at(channel, key, reason).value++;
  }

  /** Reads key pool entries' states when /metrics is scraped. */
  watchKeys(read: () => Record<string, Record<string, string>>): void {
    const level: Record<string, number> = { serving: 0, cooling: 0.5, revoked: 1 };
    new Gauge({
      name: 'gateway_upstream_key_resting',
      help: 'A key pool entry: 0 serving, 0.5 resting after a 429, 1 resting as revoked (401) until it serves again',
      labelNames: ['channel', 'key'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [channel, keys] of Object.entries(read())) for (const [key, state] of Object.entries(keys)) this.set({ channel, key }, level[state] ?? 0);
      },
    });
  }

  /** One attempt at a route's target: `answered`, `failed` (moved on or answered the failure) or `skipped` (cooling, or its mapping refused the request). */
  countRouteAttempt(route: string, target: string, outcome: 'answered' | 'failed' | 'skipped'): void {
    this.routeAttempts.at(route, target, outcome).value++;
  }

  /** A route's target cooled (its failures within the window reached the route's cooldown.failures). */
  countRouteCooldown(route: string, target: string): void {
    this.routeCooldowns.at(route, target).value++;
  }

  /** Time to a route target's answer head (what the latency strategy averages). */
  observeRouteTarget(route: string, target: string, seconds: number): void {
    this.routeLatency.record(this.routeLatency.at(route, target), seconds);
  }

  /** Counts an answered request (the onResponse hook). */
  countRequest(route: string, method: string, status: number): void {
    this.requests.at(route, method, String(status)).value++;
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
  recordCharge(ref: ChargedRef, s: ChargedSettlement, chargedMicros: number, overageMicros: number): void {
    this.tokens.at(ref.model, 'input').value += count(s.inputTokens);
    this.tokens.at(ref.model, 'output').value += count(s.outputTokens);
    this.cost.at(ref.model, ref.currency).value += count(chargedMicros);
    if (overageMicros > 0) this.overage.inc({ model: ref.model, channel: s.route?.channel.id ?? ref.channel }, count(overageMicros));
  }
}

/** What recordCharge reads of billing's ChargeRef (src/billing/charge.ts); declared here so metrics sit below billing. */
interface ChargedRef {
  model: string;
  channel: string;
  currency: string;
}

/** What recordCharge reads of billing's Settlement (src/billing/charge.ts). */
interface ChargedSettlement {
  inputTokens?: number;
  outputTokens?: number;
  route?: { channel: { id: string } };
}

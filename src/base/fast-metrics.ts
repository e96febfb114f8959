// Metric kinds the hot path writes cheaply: counters and histograms whose values sit in plain numbers and arrays by
// label, read by prom-client only when /metrics is scraped. Label values are a bounded set (configuration, statuses).
import { Counter, Histogram, type Registry, type MetricObjectWithValues, type MetricValueWithName } from 'prom-client';

/** Statuses as label values, spelled once. */
const statusTexts = new Map<number, string>();
export const statusText = (status: number) => statusTexts.get(status) ?? (statusTexts.set(status, String(status)), String(status));

interface LabelledCount {
  labels: Record<string, string>;
  value: number;
}

/**
 * A counter's values by label, kept as plain numbers that prom-client reads when /metrics is scraped: the hot path
 * adds to a number instead of validating and hashing a label object per increment. Label values come from
 * configuration and routing (models, routes, methods, statuses): a bounded set.
 */
export class CountsByLabel {
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
export function countedCounter(registry: Registry, name: string, help: string, labelNames: string[]): CountsByLabel {
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
export class BucketedHistogram extends Histogram<string> {
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

// Prometheus metrics: requests by route and status, upstream latency by channel, tokens, cost and overage.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { BucketedHistogram, countedCounter, statusText } from './fast-metrics.js';

const count = (n: number | undefined) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0);

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

  private readonly toolCalls = countedCounter(this.registry, 'gateway_mcp_tool_calls_total', 'MCP tool calls through the gateway, by server, tool and status (200, or the error status answered)', ['server', 'tool', 'status']);
  private readonly toolLatency = new BucketedHistogram(
    'gateway_mcp_tool_call_seconds',
    'Time of an MCP tool call through the gateway, from its check to its result, by server and tool',
    ['server', 'tool'],
    [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    this.registry,
  );

  /** Counts and times one MCP tool call (src/mcp/). Tool names are those the server lists and a grant lets through: a bounded set. */
  recordToolCall(server: string, tool: string, status: number, seconds: number): void {
    this.toolCalls.at(server, tool, statusText(status)).value++;
    this.toolLatency.record(this.toolLatency.at(server, tool), seconds);
  }
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

  private readonly guardrailVerdicts = countedCounter(this.registry, 'gateway_guardrail_verdicts_total', 'Guardrail checks by guardrail, stage (input, output, stream) and verdict (pass, flag, redact, block)', ['guardrail', 'stage', 'verdict']);
  private readonly guardrailLatency = new BucketedHistogram('gateway_guardrail_seconds', 'Time a guardrail check took, by guardrail and stage', ['guardrail', 'stage'], [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5], this.registry);

  /** One guardrail's verdict on one stage of a call (guardrail ids are the config's: a bounded set). */
  countGuardrail(guardrail: string, stage: string, verdict: string, seconds: number): void {
    this.guardrailVerdicts.at(guardrail, stage, verdict).value++;
    this.guardrailLatency.record(this.guardrailLatency.at(guardrail, stage), seconds);
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

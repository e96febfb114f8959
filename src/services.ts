// Everything a handler may use, built once from the config: database, cache, upstream pools, meter, metrics, schemas.
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import Keyv from 'keyv';
import { gatewayLogger } from './http/log-format.js';
import type { LoadedConfig } from './engine/loaded-config.js';
import type { SchemaRegistry } from './config/schemas.js';
import { dataPathFor } from './config/load.js';
import { loadConfig, type LoadOptions } from './compile/load-config.js';
import { catalogueNeedingRestart } from './compile/reload-changes.js';
import { ConfigError } from './base/errors.js';
import { Runtime } from './engine/runtime.js';
import { RemoteFetcher } from './net/remote-fetch.js';
import type { Db, OpenedDatabase } from './store/database.js';
import { openConfiguredDatabase } from './store/open.js';
import { Upstreams, type UpstreamLog } from './engine/upstream.js';
import type { GuardrailEvents } from './pipeline/guard-events.js';
import { internalCalls } from './flows/internal.js';
import type { InternalCalls } from './pipeline/deps.js';
import { webhookGuardrailEvents } from './webhooks/events.js';
import { cooldownShareFor } from './engine/routing/cooldown-share.js';
import { createReservingMeter, type Meter } from './billing/meter.js';
import { billingConfig, rateLimitsConfig } from './billing/config.js';
import { createRateLimiter, type RateLimiter } from './billing/rate-limit.js';
import type { McpGatewayDeps } from './mcp/request.js';
import { mcpDeps } from './mcp/deps.js';
import { rateStoreFor } from './billing/rate-store.js';
import { createSqliteSpendStore } from './billing/sqlite-spend-store.js';
import { createThreadedSpendStore } from './billing/threaded-spend-store.js';
import { changeVersion } from './store/change-version.js';
import { createPostgresSpendStore } from './billing/postgres-spend-store.js';
import type { SpendStore } from './billing/spend-store.js';
import { BudgetCalendar } from './config/periods.js';
import { startTracing, type Tracing } from './telemetry/tracing.js';
import { Metrics } from './base/metrics.js';
import type { BlobStore } from './files/blob-store.js';
import { openFileStore } from './files/service.js';
import type { FileSettings } from './files/file-store.js';
import { askPrimary, shareMetrics } from './base/cluster-ipc.js';
import { RequestLogWriter, type RequestLogWriterDeps } from './request-logs/writer.js';
import { requestLogsConfig } from './request-logs/config.js';
import { captureBodies, captureCallBodies } from './request-logs/bodies.js';
import { requestLogSize } from './request-logs/repository.js';
import { newProcessIdentity, type ProcessIdentity } from './billing/reservation-owners.js';
import type { TaskRunner } from './tasks/runner.js';
import type { BatchRunner } from './batches/runner.js';
import { openResponseCache, type ResponseCache } from './cache/index.js';
import { createBatchRunner, createWorkers, startBackground } from './background-runners.js';

export interface Services {
  /** The current runtime snapshot's config (a request uses the snapshot it began on: its Call's). */
  readonly config: LoadedConfig;
  /** The current runtime snapshot: config, routes, compiled mappings and upstream pools, swapped whole by `reload()`. */
  runtime: Runtime;
  /** This process among the replicas: the owner name of the leases it takes. */
  instanceId: string;
  /** This process as its reservations and heartbeat name it (src/billing/reservation-owners.ts). */
  processIdentity: ProcessIdentity;
  db: Db;
  cache: Keyv;
  /** The current runtime snapshot's upstream pools. */
  readonly upstreams: Upstreams;
  meter: Meter;
  /** Spending-cap reservations and spent totals. */
  spend: SpendStore;
  /** Where budget periods begin and end (billing.timeZone). */
  calendar: BudgetCalendar;
  /** The clock budgets count on (Unix milliseconds): Date.now, or the tests' (ServiceOverrides.now). */
  now(): number;
  /** OpenTelemetry tracing; undefined (and its SDK never loaded) unless telemetry.otlp.endpoint is set. */
  tracing?: Tracing;
  rateLimits: RateLimiter;
  metrics: Metrics;
  /** The current snapshot's schemas: a reload applies the operator's request schemas. */
  readonly schemas: SchemaRegistry;
  /** Where file bytes live (storage.blobs). */
  blobs: BlobStore;
  /** The file store's options and content-URL signer. */
  files: FileSettings;
  /** Fetches URLs clients and upstreams name, through the SSRF guard (network section). */
  remote: RemoteFetcher;
  /** Writes a request-log row per answered API request (src/request-logs/). */
  requestLogs: RequestLogWriter;
  /** The response cache (src/cache/): routes with `cache:` answer repeated requests from its store. */
  responseCache: ResponseCache;
  /** guardrail.blocked webhook events (src/webhooks/events.ts). */
  guardrailEvents: GuardrailEvents;
  /** Calls a guardrail makes to models of the catalogue (a moderation model), billed and logged as the call's (src/flows/internal.ts). */
  internalCalls: InternalCalls;
  /** What the MCP gateway's calls use (src/mcp/): the meter, limits, request logs, metrics and the upstream connections. */
  mcp: McpGatewayDeps;
  /** Submits, polls and finishes asynchronous tasks (videos, family routes); runs from creation to close. */
  tasks: TaskRunner;
  /** Runs the batches the gateway runs itself (src/batches/): their lines as ordinary calls, at a bounded rate per channel. */
  batches: BatchRunner;
  /** Resolves a path from the config relative to storage.dataDir. */
  dataPath(path: string): string;
  /**
   * Loads and checks the config file again and swaps in a new snapshot; requests in flight finish on the old one,
   * whose pools close after them. A bad config throws its ConfigError and the old snapshot keeps serving.
   */
  reload(options?: LoadOptions): Promise<LoadedConfig>;
  /** Functions run on close, last registered first. */
  onClose(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  database?: OpenedDatabase;
  cache?: Keyv;
  meter?: Meter;
  spend?: SpendStore;
  rateLimits?: RateLimiter;
  /** The meter's clock (Unix milliseconds): which budget period a reservation falls in. Tests move it across midnight. */
  now?: () => number;
  /** Where the upstream client logs a key pool's entry revoked and back (default: the gateway's log, named "upstreams"). */
  upstreamLog?: UpstreamLog;
}

export async function createServices(config: LoadedConfig, overrides: ServiceOverrides = {}): Promise<Services> {
  const database = overrides.database ?? (await openConfiguredDatabase(config));
  const metrics = new Metrics();
  const cache = overrides.cache ?? (await createCache(config));
  const closers: (() => Promise<void> | void)[] = [];
  const responseCache = await openResponseCache(config, metrics.registry, closers, overrides.now);
  const cooldowns = cooldownShareFor(cache);
  const upstreamLog = overrides.upstreamLog ?? gatewayLogger({ level: config.gateway.server.logLevel, name: 'upstreams' });
  const runtime = new Runtime({ config, upstreams: new Upstreams(config, metrics, overrides.now, cooldowns, upstreamLog) });
  const calendar = new BudgetCalendar(billingConfig(config).timeZone);
  const spend = overrides.spend ?? spendStoreFor(database, billingConfig(config).settleBatchMs, calendar);
  const { blobs, files } = await openFileStore(config, database.db, dataPathFor(config));
  const now = overrides.now ?? Date.now;
  const instanceId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const processIdentity = newProcessIdentity();
  const meter = overrides.meter ?? createReservingMeter({ store: spend, reservationTtlMs: billingConfig(config).reservationTtlSeconds * 1000, metrics, now: overrides.now, ownerTag: processIdentity.tag });
  const remote = new RemoteFetcher(networkOptions(config));
  const { tasks, webhooks } = createWorkers(runtime, { db: database.db, blobs, files, remote, meter, instanceId });
  const batches = createBatchRunner(runtime, { db: database.db, blobs, files, remote, meter, spend, schemas: config.schemas, now, instanceId, requestLogs: () => services.requestLogs });
  const requestLogs = createRequestLogWriter(runtime, { spend, db: database.db, blobs, metrics, now: overrides.now, traceId: (req) => services.tracing?.traceId(req) });
  const services: Services = {
    get config() {
      return runtime.snapshot.config;
    },
    get upstreams() {
      return runtime.snapshot.upstreams;
    },
    runtime,
    instanceId,
    processIdentity,
    db: database.db,
    cache,
    meter,
    spend,
    calendar,
    now,
    tracing: await startTracing(config),
    rateLimits: overrides.rateLimits ?? createRateLimiter(rateLimitsConfig(config), rateStoreFor(cache)),
    metrics,
    get schemas() {
      return runtime.snapshot.config.schemas;
    },
    blobs,
    files,
    remote,
    tasks,
    batches,
    requestLogs,
    responseCache,
    ...guardrailDeps(database.db, upstreamLog, () => services.requestLogs),
    mcp: mcpDeps({ meter, metrics, requestLogs, cache, now: overrides.now }, closers),
    dataPath: dataPathFor(config),
    reload: (options) => reloadSnapshot(runtime, config, options, (next) => new Upstreams(next, metrics, overrides.now, cooldowns, upstreamLog)),
    onClose: (fn) => closers.push(fn),
    close: () => closeAll(closers, { spend, runtime, cache, database }),
  };
  watchForMetrics(metrics, runtime, spend);
  await startBackground(services, closers, webhooks);
  return services;
}

/** What guardrails use: where their blocks are told (webhooks), and the calls they make to the catalogue's models. */
function guardrailDeps(db: Services['db'], log: UpstreamLog, requestLogs: () => RequestLogWriter): Pick<Services, 'guardrailEvents' | 'internalCalls'> {
  return {
    guardrailEvents: webhookGuardrailEvents(db, (err) => log.warn({ err }, 'a guardrail.blocked webhook event could not be queued')),
    internalCalls: internalCalls(requestLogs),
  };
}

/**
 * Loads the config file again, with the environment this gateway started with (a test's, or the process's; the overlay's
 * gateway.env is read afresh), and swaps it in; a catalogue change, which only a restart applies, refuses it.
 */
async function reloadSnapshot(runtime: Runtime, started: LoadedConfig, options: LoadOptions | undefined, upstreams: (next: LoadedConfig) => Upstreams): Promise<LoadedConfig> {
  const next = await loadConfig(started.file, { env: started.environment, ...options });
  const refused = catalogueNeedingRestart(runtime.snapshot.config, next);
  if (refused.length) throw new ConfigError(refused);
  runtime.swap({ config: next, upstreams: upstreams(next) });
  return next;
}

/** The request-log writer on the current snapshot's requestLogs section, its size in /metrics. */
function createRequestLogWriter(runtime: Runtime, parts: Pick<RequestLogWriterDeps, 'spend' | 'db' | 'now' | 'traceId'> & { blobs: BlobStore; metrics: Metrics }): RequestLogWriter {
  const { spend, db, blobs, metrics, now, traceId } = parts;
  const config = () => requestLogsConfig(runtime.snapshot.config);
  metrics.watchRequestLogs(() => requestLogSize(db));
  return new RequestLogWriter({
    spend,
    db,
    meter: metrics.requestLogMeter,
    log: gatewayLogger({ level: runtime.snapshot.config.gateway.server.logLevel, name: 'request-logs' }),
    config,
    captureBodies: (req, rowId) => captureBodies({ db, blobs, config: config() }, req, rowId),
    captureCall: (workspaceId, rowId, call) => captureCallBodies({ db, blobs, config: config() }, workspaceId, rowId, call),
    now,
    traceId,
  });
}

/** Runs the closers (last registered first), then closes the spend store, the snapshot's pools, the cache and the database. */
async function closeAll(closers: (() => Promise<void> | void)[], parts: { spend: SpendStore; runtime: Runtime; cache: Keyv; database: OpenedDatabase }): Promise<void> {
  const { spend, runtime, cache, database } = parts;
  for (const fn of closers.reverse()) await fn();
  await (spend.close ?? spend.commitQueued)?.call(spend);
  await runtime.close();
  await cache.disconnect?.().catch(() => undefined);
  await database.close();
}

function watchForMetrics(metrics: Metrics, runtime: Runtime, spend: SpendStore): void {
  if (cluster.isWorker) {
    // One of several workers (server.workers): the primary adds up every worker's metrics for a scrape.
    shareMetrics(metrics.registry);
    metrics.scrapeWith(() => askPrimary<string>('metrics'));
  }
  metrics.watchCircuits(() => runtime.snapshot.upstreams.circuits());
  metrics.watchKeys(() => runtime.snapshot.upstreams.keyStates());
  // Charges waiting for their batch are counted before a scrape: commit them, then let their settlements finish.
  metrics.onScrape(async () => {
    await spend.commitQueued?.();
    await new Promise((resolve) => setImmediate(resolve));
  });
}

function networkOptions(config: LoadedConfig) {
  const network = config.gateway.network as { allowHosts: string[]; maxRedirects: number; timeoutSeconds: number };
  return { allowHosts: network.allowHosts, maxRedirects: network.maxRedirects, timeoutMs: network.timeoutSeconds * 1000 };
}

/** PostgreSQL's store; on SQLite the spend thread's (an in-memory database cannot be shared with it: committed here). */
function spendStoreFor(database: OpenedDatabase, settleBatchMs: number, calendar: BudgetCalendar): SpendStore {
  const { sqlite } = database;
  if (!sqlite) return createPostgresSpendStore(database.db, calendar);
  const options = { changeVersion: () => changeVersion(database.db), settleBatchMs, calendar, timeZone: calendar.timeZone };
  const spend = sqlite.memory ? createSqliteSpendStore(sqlite, options) : createThreadedSpendStore(sqlite, { ...options, path: sqlite.name });
  // Reads of this process see every settlement it accepted: a query through the Db waits for the queue's commit first.
  database.beforeQuery?.(() => spend.commitQueued?.());
  return spend;
}

async function createCache(config: LoadedConfig): Promise<Keyv> {
  const { driver, url } = config.gateway.storage.cache;
  if (driver === 'redis') {
    const { default: KeyvRedis } = await import('@keyv/redis');
    return new Keyv({ store: new KeyvRedis(url ?? 'redis://127.0.0.1:6379'), namespace: 'gateway' });
  }
  return new Keyv({ namespace: 'gateway' });
}

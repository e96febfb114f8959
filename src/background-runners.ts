// The runners a gateway process keeps in the background (tasks, batches, webhook deliveries, its heartbeat): built on
// the current runtime snapshot, each with its own logger, started together and registered to stop in the right order.
import { gatewayLogger } from './http/log-format.js';
import type { Runtime } from './engine/runtime.js';
import type { LoadedConfig } from './engine/loaded-config.js';
import type { RemoteFetcher } from './net/remote-fetch.js';
import type { Db } from './store/database.js';
import type { SpendStore } from './billing/spend-store.js';
import type { BlobStore } from './files/blob-store.js';
import type { Tracing } from './telemetry/tracing.js';
import { TaskRunner } from './tasks/runner.js';
import { BatchRunner, type BatchRunnerDeps } from './batches/runner.js';
import type { TaskRunnerDeps } from './tasks/deps.js';
import { WebhookDeliverer } from './webhooks/deliverer.js';
import { webhookTaskEvents, webhookBatchEvents } from './webhooks/events.js';
import type { RequestLogWriter } from './request-logs/writer.js';
import { startHeartbeat, type ProcessIdentity } from './billing/reservation-owners.js';

/** What starting the runners uses of the services: the runners themselves, what closes beside them, the heartbeat's parts. */
export interface BackgroundParts {
  readonly config: LoadedConfig;
  db: Db;
  blobs: BlobStore;
  remote: RemoteFetcher;
  tasks: TaskRunner;
  batches: BatchRunner;
  tracing?: Tracing;
  processIdentity: ProcessIdentity;
  onClose(fn: () => Promise<void> | void): void;
}

/** The task runner and the webhook sender (task events become deliveries), on the current snapshot. */
export function createWorkers(runtime: Runtime, parts: Omit<TaskRunnerDeps, 'config' | 'runtime' | 'log' | 'events'>): { tasks: TaskRunner; webhooks: WebhookDeliverer } {
  const { files, db, remote, instanceId } = parts;
  const tasks = createTaskRunner(runtime, { ...parts, events: webhookTaskEvents({ get config() { return runtime.snapshot.config; }, files }) });
  return { tasks, webhooks: createWebhookDeliverer(runtime, { db, remote, instanceId }) };
}

/**
 * The batch runner on the current snapshot: each line settles on its own (the spend store's settle, no reservation row
 * to drop), a finished batch becomes a webhook delivery, each line run a request-log row of the writer `requestLogs` gives.
 */
export function createBatchRunner(
  runtime: Runtime,
  parts: Omit<BatchRunnerDeps, 'runtime' | 'config' | 'spend' | 'settleEntry' | 'events' | 'requestLogs' | 'log'> & { spend: SpendStore; requestLogs: () => RequestLogWriter },
): BatchRunner {
  const { db, blobs, files, remote, meter, spend, schemas, now, instanceId, requestLogs } = parts;
  return new BatchRunner({
    runtime,
    db,
    blobs,
    files,
    remote,
    meter,
    spend,
    schemas,
    now,
    instanceId,
    get config() {
      return runtime.snapshot.config;
    },
    settleEntry: (id, entry) => spend.settle(id, entry, false),
    events: webhookBatchEvents({ get config() { return runtime.snapshot.config; }, files }),
    get requestLogs() {
      return requestLogs();
    },
    log: gatewayLogger({ level: runtime.snapshot.config.gateway.server.logLevel, name: 'batches' }),
  });
}

/** Writes this process's heartbeat now and while it runs (what tells other processes it holds its reservations still). */
async function keepHeartbeat(services: BackgroundParts): Promise<void> {
  const log = gatewayLogger({ level: services.config.gateway.server.logLevel, name: 'heartbeat' });
  services.onClose(await startHeartbeat(services.db, services.processIdentity, (err) => log.error({ err }, 'the process heartbeat could not be written')));
}

/**
 * Starts the task runner, the webhook sender and the process heartbeat, and registers what closes with the services,
 * in the order it must close.
 */
export async function startBackground(services: BackgroundParts, closers: (() => Promise<void> | void)[], webhooks: WebhookDeliverer): Promise<void> {
  const { blobs, remote, tasks, batches, tracing } = services;
  services.onClose(() => blobs.close());
  // Registered first, so it runs last: spans of the work finished on close are exported too.
  if (tracing) closers.unshift(() => tracing.shutdown());
  services.onClose(() => remote.close());
  tasks.start();
  batches.start();
  webhooks.start();
  // Closers run last-registered first: the runner and the webhook sender stop (and finish what they hold) before the stores close.
  services.onClose(() => webhooks.stop());
  services.onClose(() => tasks.stop());
  services.onClose(() => batches.stop());
  await keepHeartbeat(services);
}

/** The webhook sender on the current snapshot, with its own logger: task events become deliveries, sent by a leased job (src/webhooks/). */
function createWebhookDeliverer(runtime: Runtime, parts: { db: Db; remote: RemoteFetcher; instanceId: string }): WebhookDeliverer {
  const log = gatewayLogger({ level: runtime.snapshot.config.gateway.server.logLevel, name: 'webhooks' });
  return new WebhookDeliverer({ get config() { return runtime.snapshot.config; }, ...parts, log });
}

/** The task runner on the current snapshot, with its own logger. */
function createTaskRunner(runtime: Runtime, parts: Omit<TaskRunnerDeps, 'config' | 'runtime' | 'log'>): TaskRunner {
  return new TaskRunner({
    get config() {
      return runtime.snapshot.config;
    },
    runtime,
    ...parts,
    log: gatewayLogger({ level: runtime.snapshot.config.gateway.server.logLevel, name: 'tasks' }),
  });
}

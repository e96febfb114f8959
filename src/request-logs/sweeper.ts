// The hourly job that deletes request-log rows older than requestLogs.retentionDays, and their captured bodies with
// them, then refreshes the planner's statistics of the log; one replica at a time (a lease), at start and every hour.
import type { FastifyBaseLogger } from 'fastify';
import type { BlobStore } from '../files/blob-store.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { Db } from '../store/db.js';
import { withLease } from '../store/leases.js';
import { requestLogsConfig } from './config.js';
import { analyzeRequestLogs, deleteRequestLogsBefore } from './repository.js';

const HOUR_MS = 3_600_000;
const BATCH = 5_000;

export interface RequestLogSweepDeps {
  readonly config: LoadedConfig;
  db: Db;
  blobs: BlobStore;
  instanceId: string;
  onClose(fn: () => Promise<void> | void): void;
}

/** Deletes what is past retention at `now`; returns how many rows went. Rows first, then their bytes. */
export async function sweepRequestLogs(deps: Pick<RequestLogSweepDeps, 'config' | 'db' | 'blobs'>, now = Date.now()): Promise<number> {
  const before = now - requestLogsConfig(deps.config).retentionDays * 24 * HOUR_MS;
  let removed = 0;
  // The workspaces that hold rows, by their counts (kept with every insert and delete).
  const workspaces = await deps.db.selectFrom('request_log_counts').select('workspace_id as id').where('row_count', '>', 0).execute();
  for (const { id } of workspaces) {
    for (;;) {
      const { deleted, bodyKeys } = await deleteRequestLogsBefore(deps.db, id, before, BATCH);
      for (const key of bodyKeys) await deps.blobs.delete(key);
      removed += deleted;
      if (deleted < BATCH) break;
    }
  }
  return removed;
}

export function requestLogSweeperJob(deps: RequestLogSweepDeps, log: FastifyBaseLogger): void {
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= withLease(deps.db, 'sweep:request-logs', deps.instanceId, HOUR_MS, async () => {
      const removed = await sweepRequestLogs(deps);
      if (removed) log.info({ removed }, 'request logs past retention deleted');
      await analyzeRequestLogs(deps.db);
    })
      .then(() => undefined)
      .catch((err) => log.error({ err }, 'request-log sweep failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(run, HOUR_MS);
  timer.unref();
  run();
  deps.onClose(async () => {
    clearInterval(timer);
    await running;
  });
}

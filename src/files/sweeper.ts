// Removes expired files (row first, then bytes) and, later, bytes that no row claims. Safe to run twice at once or to die midway.
import type { FastifyBaseLogger } from 'fastify';
import type { FileStore } from './file-store.js';
import { isBlobKey } from './blob-store.js';
import { blobKeysWithRows, deleteFileRowById, expiredFiles } from './repository.js';
import { withLease } from '../store/leases.js';

export interface SweepResult {
  expired: number;
  orphans: number;
  partials: number;
}

/**
 * Each expired row is deleted before its bytes, and only by the sweeper whose delete removed it;
 * a crash between the two leaves bytes without a row, which the orphan pass removes on a later sweep.
 */
export async function sweepExpiredFiles(services: FileStore, now = Date.now()): Promise<number> {
  const { batchSize } = services.files.options.sweep;
  let removed = 0;
  for (;;) {
    const batch = await expiredFiles(services.db, now, batchSize);
    for (const file of batch) {
      if (!(await deleteFileRowById(services.db, file.id))) continue;
      // A task whose result this was says so: its file expired (a deleted file's task reads "deleted").
      await services.db.updateTable('tasks').set({ archive_status: 'expired' }).where('file_id', '=', file.id).execute();
      await services.blobs.delete(file.blob_key);
      removed++;
    }
    if (batch.length < batchSize) return removed;
  }
}

/** Bytes with no row, old enough that no upload can still be about to write their row. */
export async function sweepOrphanBlobs(services: FileStore, now = Date.now()): Promise<number> {
  const { batchSize, orphanGraceSeconds } = services.files.options.sweep;
  const cutoff = now - orphanGraceSeconds * 1000;
  let removed = 0;
  let candidates: string[] = [];
  const flush = async () => {
    const claimed = await blobKeysWithRows(services.db, candidates);
    for (const key of candidates.filter((k) => !claimed.has(k))) {
      await services.blobs.delete(key);
      removed++;
    }
    candidates = [];
  };
  for await (const blob of services.blobs.list()) {
    if (blob.modifiedAt > cutoff || !isBlobKey(blob.key)) continue;
    candidates.push(blob.key);
    if (candidates.length >= batchSize) await flush();
  }
  await flush();
  return removed;
}

export async function sweepFiles(services: FileStore, now = Date.now()): Promise<SweepResult> {
  const expired = await sweepExpiredFiles(services, now);
  const orphans = await sweepOrphanBlobs(services, now);
  const partials = await services.blobs.sweepPartial(now - services.files.options.sweep.orphanGraceSeconds * 1000);
  return { expired, orphans, partials };
}

/** The sweeper job's needs: the file store, its lease owner name and a place to stop its timer. */
export interface FileSweepDeps extends FileStore {
  instanceId: string;
  onClose(fn: () => Promise<void>): void;
}

const FILE_SWEEP_LEASE_MS = 5 * 60_000;

/** Background job: sweep at start and then every files.sweep.intervalSeconds; a failed sweep is logged and retried next time. */
export function fileSweeperJob(services: FileSweepDeps, log: FastifyBaseLogger): void {
  let running: Promise<void> | undefined;
  const run = () => {
    // One replica sweeps at a time; a crashed sweeper's lease runs out after five minutes (a second sweep is safe anyway).
    running ??= withLease(services.db, 'sweep:files', services.instanceId, FILE_SWEEP_LEASE_MS, async () => {
      const result = await sweepFiles(services);
      if (result.expired || result.orphans || result.partials) log.info(result, 'file sweep');
    })
      .then(() => undefined)
      .catch((err) => log.error({ err }, 'file sweep failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(run, services.files.options.sweep.intervalSeconds * 1000);
  timer.unref();
  run();
  services.onClose(async () => {
    clearInterval(timer);
    await running;
  });
}

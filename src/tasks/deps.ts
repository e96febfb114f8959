// What the task modules use, named apart from the code that assembles them: the runner's needs, and what task creation
// and reads need of the runner.
import type { Logger } from 'pino';
import type { Meter } from '../billing/charge.js';
import type { FileStore, ServerConfig } from '../files/file-store.js';
import type { RemoteFetcher } from '../net/remote-fetch.js';
import type { PipelineDeps, SnapshotSource } from '../pipeline/deps.js';
import type { Db } from '../store/db.js';
import type { Submission } from './submission.js';
import type { TaskRow } from './store.js';

/** The runner as creation and status reads see it. */
export interface TaskQueue {
  /** Submits a created task in the background (once, never retried blindly). */
  submit(submission: Submission): void;
  /** Polls a due task at once, under its lease (a status request asked). */
  pollNow(row: TaskRow): Promise<void>;
}

/** Told when a task ends (completed or failed), inside the transaction that writes its final status: both land or neither. */
export interface TaskEvents {
  taskFinished(db: Db, task: TaskRow): Promise<void>;
}

/** What the runner uses: the snapshot, the lease table and file store, the remote fetcher, the meter and a logger. */
export interface TaskRunnerDeps extends FileStore, ServerConfig {
  runtime: SnapshotSource;
  remote: RemoteFetcher;
  meter: Meter;
  /** This process among the replicas: the owner name of the leases it takes. */
  instanceId: string;
  log: Logger;
  /** Told of each task that ends (webhooks). */
  events?: TaskEvents;
}

/** What task creation uses: the pipeline's needs, the runner and the lease owner name. */
export interface TaskCreateDeps extends PipelineDeps {
  instanceId: string;
  tasks: TaskQueue;
}

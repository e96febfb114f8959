// What the batch runner works with: the pipeline's services, its place among the replicas, the spend store's write of a
// settled line, the webhook events of a batch's end and the request log.
import type { Logger } from 'pino';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { RequestLogWriter } from '../request-logs/writer.js';
import type { Db } from '../store/db.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { BatchRow } from './store.js';

/** Told when a batch ends, inside the transaction that writes its final status: both land or neither. */
export interface BatchEvents {
  batchFinished(db: Db, batch: BatchRow): Promise<void>;
}

export interface BatchRunnerDeps extends PipelineDeps {
  /** This process among the replicas: the owner name of the leases it takes. */
  instanceId: string;
  log: Logger;
  /** Writes a ledger entry under a charge id once (the spend store's settle, with no reservation row to drop). */
  settleEntry: (id: string, entry: LedgerEntry) => Promise<boolean>;
  events?: BatchEvents;
  /** The request log: a row per line run, its route `batch:<endpoint>` and its request id `<batch id>:<line>`. */
  requestLogs?: Pick<RequestLogWriter, 'enabled' | 'append'>;
}

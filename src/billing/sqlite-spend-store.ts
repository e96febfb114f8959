// The SpendStore on the embedded SQLite database, committing on the event loop: batches of operations, each batch one
// IMMEDIATE transaction. The gateway runs the same batches on a thread of its own (threaded-spend-store.ts); this form
// serves an in-memory database (no second connection can open it) and tools that reserve without serving.
import type BetterSqlite3 from 'better-sqlite3';
import { BudgetCalendar } from '../config/periods.js';
import type { SpendStore } from './spend-store.js';
import { createCapsReader, uncapped } from './sqlite-spend-caps.js';
import { notHeld, SqliteSpendCore, type SpendOp } from './sqlite-spend-core.js';
import { SpendOpQueue } from './spend-op-queue.js';

export interface SqliteSpendOptions {
  /** Reads the change counter of keys and workspaces; caps are cached while it stands still. */
  changeVersion?: () => number | undefined;
  /** How long a settlement may wait for others to share its commit; 0: the next turn of the event loop. */
  settleBatchMs?: number;
  /** Where budget periods begin (default UTC). */
  calendar?: BudgetCalendar;
}

export function createSqliteSpendStore(sqlite: BetterSqlite3.Database, { changeVersion, settleBatchMs = 0, calendar = new BudgetCalendar() }: SqliteSpendOptions = {}): SpendStore {
  const caps = createCapsReader(sqlite, changeVersion);
  const core = new SqliteSpendCore(sqlite, caps, calendar);
  // Inside an open transaction of someone else's, a batch would commit or roll back with it: it waits a turn.
  const queue = new SpendOpQueue((ops) => core.runBatch(ops), settleBatchMs, () => !sqlite.inTransaction);
  return spendStoreOverQueue(queue, (keyId) => uncapped(caps.capsOf(keyId)));
}

/** The SpendStore interface over a queue of batched operations, wherever the batches commit. */
export function spendStoreOverQueue(queue: SpendOpQueue, isUncapped: (keyId: string) => boolean): SpendStore {
  const soon = <T>(op: SpendOp) => queue.push<T>(op, true);
  return {
    // Uncapped key in an uncapped workspace: nothing to hold, so no transaction and no wait for a batch.
    reserve: (request) => (isUncapped(request.keyId) ? Promise.resolve(notHeld) : soon({ op: 'reserve', request })),
    settle: (reservationId, entry, held = true) => queue.push({ op: 'settle', reservationId, entry, held }, false),
    // Waits for company like a settlement: it commits in the next batch, whatever else is in it.
    appendLogs: (rows) => queue.push({ op: 'log', rows }, false),
    commitsInBatches: true,
    commitQueued: () => queue.commitQueued(),
    release: (reservationId) => soon({ op: 'release', reservationId }),
    renew: (reservationId, expiresAt, now) => soon({ op: 'renew', reservationId, expiresAt, now }),
    sweep: (now) => soon({ op: 'sweep', now }),
    balance: (scope, id, now) => soon({ op: 'balance', scope, id, now }),
  };
}

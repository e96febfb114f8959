// The batch tables: insert a batch with its lines, read within a workspace, list by cursor, claim due batches with a
// lease on the row (the tasks' statement: `UPDATE ... WHERE lease_until < now`), and write each line's result.
import type { Updateable } from 'kysely';
import type { Db } from '../store/database.js';
import type { BatchesTable, BatchLinesTable, BatchStatus } from '../store/schema.js';
import { sortableId } from '../store/sortable-id.js';

export type BatchRow = BatchesTable;
export type BatchLineRow = BatchLinesTable;

/** The statuses a runner still works on. */
export const UNFINISHED: readonly BatchStatus[] = ['validating', 'in_progress', 'finalizing', 'cancelling'];

export function newBatchId(prefix: 'batch' | 'msgbatch', now = Date.now()): string {
  return sortableId(prefix, now);
}

/** A batch and its lines, in one transaction: both exist or neither. Lines are inserted in slices (SQLite's bound on variables). */
export async function insertBatch(db: Db, row: BatchRow, lines: BatchLineRow[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('batches').values(row).execute();
    for (let i = 0; i < lines.length; i += 500) await trx.insertInto('batch_lines').values(lines.slice(i, i + 500)).execute();
  });
}

/** The batch with this id in this workspace and of this object; another workspace's is as absent as an unknown one. */
export async function findBatch(db: Db, workspaceId: string, object: string, id: string): Promise<BatchRow | undefined> {
  return db.selectFrom('batches').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).where('object', '=', object).executeTakeFirst();
}

export async function findBatchById(db: Db, id: string): Promise<BatchRow | undefined> {
  return db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface ListBatchesQuery {
  workspaceId: string;
  object: string;
  limit: number;
  /** Newest first: the page after this id, or (`before`) the page before it. */
  after?: string;
  before?: string;
}

export async function listBatches(db: Db, q: ListBatchesQuery): Promise<{ rows: BatchRow[]; hasMore: boolean }> {
  let query = db.selectFrom('batches').selectAll().where('workspace_id', '=', q.workspaceId).where('object', '=', q.object);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.before) query = query.where('id', '>', q.before);
  const rows = await query.orderBy('id', q.before ? 'asc' : 'desc').limit(q.limit + 1).execute();
  const page = rows.slice(0, q.limit);
  return { rows: q.before ? page.reverse() : page, hasMore: rows.length > q.limit };
}

/** Unfinished batches due for work whose lease has run out. */
export async function dueBatchIds(db: Db, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('batches')
    .select('id')
    .where('status', 'in', UNFINISHED)
    .where('next_run_at', '<=', now)
    .where('lease_until', '<', now)
    .orderBy('next_run_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Takes the batch's lease for `owner` if nobody holds it; true when this process now does. */
export async function claimBatch(db: Db, id: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set({ lease_owner: owner, lease_until: now + ttlMs })
    .where('id', '=', id)
    .where('lease_until', '<', now)
    .where('status', 'in', UNFINISHED)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends a lease this process holds; false when it was lost. */
export async function renewBatch(db: Db, id: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const result = await db.updateTable('batches').set({ lease_until: now + ttlMs }).where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Writes what this process learnt and gives the lease back; false when the lease was lost meanwhile. */
export async function updateLeasedBatch(db: Db, id: string, owner: string, patch: Updateable<BatchesTable>): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set({ ...patch, lease_owner: null, lease_until: 0 })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A client's cancel: an unfinished batch moves to cancelling (whoever holds it finishes the cancel); false when it had ended. */
export async function markCancelling(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set({ status: 'cancelling', cancelling_at: Math.floor(now / 1000), next_run_at: now })
    .where('id', '=', id)
    .where('status', 'in', ['validating', 'in_progress', 'finalizing'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Pending lines of a batch due now, in input order. */
export async function duePendingLines(db: Db, batchId: string, now: number, limit: number): Promise<BatchLineRow[]> {
  return db
    .selectFrom('batch_lines')
    .selectAll()
    .where('batch_id', '=', batchId)
    .where('status', '=', 'pending')
    .where('next_at', '<=', now)
    .orderBy('line')
    .limit(limit)
    .execute();
}

/**
 * Whether any line of the batch is still pending. One index entry read, not a count: a runner asks at every look, and
 * counting a 20,000-line batch's pending entries held the event loop for milliseconds each time.
 */
export async function hasPendingLines(db: Db, batchId: string): Promise<boolean> {
  const row = await db.selectFrom('batch_lines').select('line').where('batch_id', '=', batchId).where('status', '=', 'pending').limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Lines of a batch in input order, a page at a time (the output and error files are written from them). */
export async function linesPage(db: Db, batchId: string, fromLine: number, limit: number): Promise<BatchLineRow[]> {
  return db.selectFrom('batch_lines').selectAll().where('batch_id', '=', batchId).where('line', '>=', fromLine).orderBy('line').limit(limit).execute();
}

/**
 * Writes a line's end (its charge already settled) and counts it on the batch, in one transaction, only while the line is
 * still pending: a line re-run after a crash is written once.
 */
export async function finishLine(db: Db, batchId: string, line: number, end: { status: 'succeeded' | 'failed'; result: string; costMicros: number }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const done = await trx
      .updateTable('batch_lines')
      .set({ status: end.status, result: end.result, cost_micros: end.costMicros })
      .where('batch_id', '=', batchId)
      .where('line', '=', line)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) !== 1) return;
    await trx
      .updateTable('batches')
      .set((eb) => ({
        [end.status]: eb(end.status, '+', 1),
        cost_micros: eb('cost_micros', '+', end.costMicros),
      }))
      .where('id', '=', batchId)
      .execute();
  });
}

/** A pending line's body as the input guardrails left it, before it goes to a vendor's batch (src/batches/vendor-lines.ts). */
export async function setPendingLineBody(db: Db, batchId: string, line: number, body: string): Promise<void> {
  await db.updateTable('batch_lines').set({ body }).where('batch_id', '=', batchId).where('line', '=', line).where('status', '=', 'pending').execute();
}

/** A line to try again after `atMs`. */
export async function retryLine(db: Db, batchId: string, line: number, attempts: number, atMs: number): Promise<void> {
  await db.updateTable('batch_lines').set({ attempts, next_at: atMs }).where('batch_id', '=', batchId).where('line', '=', line).where('status', '=', 'pending').execute();
}

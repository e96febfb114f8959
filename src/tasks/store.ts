// The task table: insert, read within a workspace, list by cursor, and claim due tasks with a lease on the row
// (`UPDATE ... WHERE lease_until < now`, the same statement on SQLite and PostgreSQL), so one process polls each task.
import type { Updateable } from 'kysely';
import type { Db } from '../store/database.js';
import type { TasksTable } from '../store/schema.js';
import { sortableId } from '../store/sortable-id.js';

export type TaskRow = TasksTable;

/** `<prefix>_...` (the family's idPrefix: `video_...`): creation time, a counter and randomness, so ids sort in creation order. */
export function newTaskId(prefix: string, now = Date.now()): string {
  return sortableId(prefix, now);
}

/** What a task id looks like, whatever its family's prefix (schemas/catalogue.schema.json `idPrefix`). */
export const taskIdPattern = /^[a-z][a-z0-9]{0,15}_[0-9a-f]{28}$/;

export async function insertTask(db: Db, row: TaskRow): Promise<void> {
  await db.insertInto('tasks').values(row).execute();
}

/** The task with this id in this workspace; another workspace's is as absent as an unknown one. */
export async function findTask(db: Db, workspaceId: string, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
}

export async function findTaskById(db: Db, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface ListTasksQuery {
  workspaceId: string;
  object: string;
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
}

export async function listTasks(db: Db, q: ListTasksQuery): Promise<{ rows: TaskRow[]; hasMore: boolean }> {
  let query = db.selectFrom('tasks').selectAll().where('workspace_id', '=', q.workspaceId).where('object', '=', q.object);
  if (q.after) query = query.where('id', q.order === 'asc' ? '>' : '<', q.after);
  const rows = await query.orderBy('id', q.order).limit(q.limit + 1).execute();
  return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
}

/** Unfinished tasks due for work whose lease has run out (a submitting one only when its submitter died). */
export async function dueTaskIds(db: Db, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('tasks')
    .select('id')
    .where('status', 'in', ['submitting', 'queued', 'in_progress'])
    .where('next_poll_at', '<=', now)
    .where('lease_until', '<', now)
    .orderBy('next_poll_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Takes the task's lease for `owner` if nobody holds it; true when this process now does. */
export async function claimTask(db: Db, id: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ lease_owner: owner, lease_until: now + ttlMs })
    .where('id', '=', id)
    .where('lease_until', '<', now)
    .where('status', 'in', ['submitting', 'queued', 'in_progress'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends a lease this process holds; false when it was lost (it ran out and another process took the task). */
export async function renewTask(db: Db, id: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const result = await db.updateTable('tasks').set({ lease_until: now + ttlMs }).where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Writes what this process learnt and gives the lease back; false when the lease was lost meanwhile. */
export async function updateLeasedTask(db: Db, id: string, owner: string, patch: Updateable<TasksTable>): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ ...patch, lease_owner: null, lease_until: 0 })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Tasks of this key not yet finished (submitting, queued, in progress). */
export async function countTasksInFlight(db: Db, keyId: string): Promise<number> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('key_id', '=', keyId)
    .where('status', 'in', ['submitting', 'queued', 'in_progress'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

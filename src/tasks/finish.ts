// A task's final status and the events it sets off (webhook deliveries), written in one transaction: both land or
// neither, so an event is never lost to a crash between the two, nor emitted for a status that was not written.
import type { Updateable } from 'kysely';
import type { Db } from '../store/db.js';
import type { TasksTable } from '../store/schema.js';
import type { TaskEvents } from './deps.js';
import { findTaskById, updateLeasedTask } from './store.js';

/** Writes the final status of a task this process holds and gives the lease back; false when the lease was lost. */
export async function finishLeasedTask(deps: { db: Db; events?: TaskEvents }, id: string, owner: string, patch: Updateable<TasksTable>): Promise<boolean> {
  const { events } = deps;
  if (!events) return updateLeasedTask(deps.db, id, owner, patch);
  return deps.db.transaction().execute(async (trx) => {
    if (!(await updateLeasedTask(trx, id, owner, patch))) return false;
    const row = await findTaskById(trx, id);
    if (row) await events.taskFinished(trx, row);
    return true;
  });
}

// Reading tasks: one by id within the key's workspace (another workspace's is 404), polled at once when it is due.
import type { FastifyRequest } from 'fastify';
import { requireScope } from '../auth/authenticate.js';
import { clientValue, NotFoundError } from '../base/errors.js';
import type { ServerConfig } from '../files/file-store.js';
import type { Db } from '../store/db.js';
import { taskFamilies } from './family.js';
import type { TaskQueue } from './deps.js';
import { findTask, taskIdPattern, type TaskRow } from './store.js';

/** How long a status request waits for an immediate poll before answering with what is stored. */
const POLL_NOW_WAIT_MS = 5_000;

/** The task, in the key's workspace, of `object` when one is named; the key holds the scope of the task's family (its catalogue entry). */
export async function requireTask(services: { db: Db } & ServerConfig, req: FastifyRequest, id: string, object?: string): Promise<TaskRow> {
  const row = taskIdPattern.test(id) ? await findTask(services.db, req.auth!.workspaceId, id) : undefined;
  if (!row || (object && row.object !== object)) throw new NotFoundError(`no task ${clientValue(id)} in this workspace`, 'task_not_found');
  requireScope(req.auth!, taskFamilies(services.config.endpoints).get(row.object)?.scope ?? null);
  return row;
}

/** The task, polled first when it is due and no process holds it (bounded: a slow upstream answers with the stored state). */
export async function currentTask(services: { db: Db; tasks: TaskQueue } & ServerConfig, req: FastifyRequest, id: string, object?: string): Promise<TaskRow> {
  const row = await requireTask(services, req, id, object);
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, POLL_NOW_WAIT_MS)));
  await Promise.race([services.tasks.pollNow(row).catch((err) => req.log.warn({ err }, 'an immediate task poll failed')), waited]);
  clearTimeout(timer);
  return (await findTask(services.db, req.auth!.workspaceId, id)) ?? row;
}

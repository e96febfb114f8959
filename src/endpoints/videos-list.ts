// GET /v1/videos: the workspace's video tasks as a cursor page ({object, data, first_id, last_id, has_more}), newest first.
import { ValidationError } from '../base/errors.js';
import { listTasks, taskIdPattern } from '../tasks/store.js';
import { toTaskObjects } from '../tasks/wire.js';
import type { HandlerFactory } from './types.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

const create: HandlerFactory = ({ services }) => async (req) => {
  const query = req.query as { limit?: string; order?: string; after?: string };
  const limit = query.limit === undefined ? DEFAULT_LIMIT : /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw new ValidationError(`limit must be an integer from 1 to ${MAX_LIMIT}`, 'limit');
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new ValidationError('order must be "asc" or "desc"', 'order');
  if (query.after !== undefined && !(typeof query.after === 'string' && taskIdPattern.test(query.after))) throw new ValidationError('after must be a video id from a previous page', 'after');
  const { rows, hasMore } = await listTasks(services.db, { workspaceId: req.auth!.workspaceId, object: 'video.task', limit, order, after: query.after });
  const data = await toTaskObjects(services, req, rows);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
};

export default create;

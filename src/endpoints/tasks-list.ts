// GET the workspace's tasks of one family (the entry's `options.object`: GET /v1/videos lists `video.task`) as a cursor
// page ({object, data, first_id, last_id, has_more}), newest first.
import { ValidationError } from '../base/errors.js';
import { listTasks, taskIdPattern } from '../tasks/store.js';
import { toTaskObjects } from '../tasks/wire.js';
import { nounOf, type HandlerFactory } from './types.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

const create: HandlerFactory = ({ services, endpoint }) => {
  const object = endpoint.options!.object as string;
  const noun = nounOf(object);
  return async (req) => {
    const query = req.query as { limit?: string; order?: string; after?: string };
    const limit = query.limit === undefined ? DEFAULT_LIMIT : /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= MAX_LIMIT)) throw new ValidationError(`limit must be an integer from 1 to ${MAX_LIMIT}`, 'limit');
    const order = query.order ?? 'desc';
    if (order !== 'asc' && order !== 'desc') throw new ValidationError('order must be "asc" or "desc"', 'order');
    if (query.after !== undefined && !(typeof query.after === 'string' && taskIdPattern.test(query.after))) throw new ValidationError(`after must be a ${noun} id from a previous page`, 'after');
    const { rows, hasMore } = await listTasks(services.db, { workspaceId: req.auth!.workspaceId, object, limit, order, after: query.after });
    const data = await toTaskObjects(services, req, rows);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
  };
};

export default create;

// GET a task by the id in the route's one parameter (/v1/tasks/{task_id}: any family's; /v1/videos/{video_id}: the
// entry's `options.object` only), polled at once when due, with a fresh signed URL once archived; the key holds the
// scope of the task's family.
import { currentTask } from '../tasks/read.js';
import { toTaskObject } from '../tasks/wire.js';
import { paramOf, type HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services, endpoint }) => {
  const object = endpoint.options?.object as string | undefined;
  const param = paramOf(endpoint);
  return async (req) => toTaskObject(services, req, await currentTask(services, req, (req.params as Record<string, string>)[param], object));
};

export default create;

// GET /v1/tasks/{id}: any task of the workspace (video.task or image.task), with the scope its kind needs.
import { currentTask } from '../tasks/read.js';
import { toTaskObject } from '../tasks/wire.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const { task_id: id } = req.params as { task_id: string };
  return toTaskObject(services, req, await currentTask(services, req, id));
};

export default create;

// GET /v1/videos/{id}: the video task, polled at once when due, with a fresh signed URL once archived.
import { currentTask } from '../tasks/read.js';
import { toTaskObject } from '../tasks/wire.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const { video_id: id } = req.params as { video_id: string };
  return toTaskObject(services, req, await currentTask(services, req, id, 'video.task'));
};

export default create;

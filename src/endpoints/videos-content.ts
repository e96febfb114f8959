// GET /v1/videos/{id}/content: the archived video's bytes, streamed from the file store (Range supported).
import { GatewayError } from '../base/errors.js';
import { fileNotFound } from '../files/lookup.js';
import { sendFileContent } from '../files/send-content.js';
import { findFile } from '../files/repository.js';
import { requireTask } from '../tasks/read.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req, reply) => {
  const { video_id: id } = req.params as { video_id: string };
  const task = await requireTask(services, req, id, 'video.task');
  if (task.status !== 'completed') throw new GatewayError('video_not_ready', 409, 'invalid_request_error', `video ${task.id} is ${task.status}; its content is there once it is completed`);
  const row = task.file_id ? await findFile(services.db, task.workspace_id, task.file_id) : undefined;
  if (!row) throw task.file_id ? fileNotFound(task.file_id) : new GatewayError('video_not_archived', 404, 'not_found_error', `video ${task.id} was not archived${task.provider_url ? '; its provider_url may still serve it' : ''}`);
  return sendFileContent(services, req, reply, row);
};

export default create;

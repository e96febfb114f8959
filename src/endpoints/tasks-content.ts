// GET a completed task's archived result (the entry's `options.object`: GET /v1/videos/{id}/content), streamed from the
// file store (Range supported).
import { GatewayError } from '../base/errors.js';
import { fileNotFound } from '../files/lookup.js';
import { sendFileContent } from '../files/send-content.js';
import { findFile } from '../files/repository.js';
import { requireTask } from '../tasks/read.js';
import { nounOf, paramOf, type HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services, endpoint }) => {
  const object = endpoint.options!.object as string;
  const noun = nounOf(object);
  const param = paramOf(endpoint);
  return async (req, reply) => {
    const id = (req.params as Record<string, string>)[param];
    const task = await requireTask(services, req, id, object);
    if (task.status !== 'completed') throw new GatewayError(`${noun}_not_ready`, 409, 'invalid_request_error', `${noun} ${task.id} is ${task.status}; its content is there once it is completed`);
    const row = task.file_id ? await findFile(services.db, task.workspace_id, task.file_id) : undefined;
    if (!row) throw task.file_id ? fileNotFound(task.file_id) : new GatewayError(`${noun}_not_archived`, 404, 'not_found_error', `${noun} ${task.id} was not archived${task.provider_url ? '; its provider_url may still serve it' : ''}`);
    return sendFileContent(services, req, reply, row);
  };
};

export default create;

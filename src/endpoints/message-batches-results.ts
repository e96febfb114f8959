// GET /v1/messages/batches/{message_batch_id}/results: the ended batch's results, one JSON line a request, in input order.
import { NotFoundError } from '../base/errors.js';
import { requireBatch } from '../batches/lookup.js';
import { findFile } from '../files/repository.js';
import { sendFileContent } from '../files/send-content.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req, reply) => {
  const row = await requireBatch(services.db, req, 'message_batch', 'message_batch_id');
  const file = row.output_file_id ? await findFile(services.db, row.workspace_id, row.output_file_id) : undefined;
  if (!file) throw new NotFoundError('the batch has no results yet (they are ready once processing_status is "ended")', 'results_not_ready');
  return sendFileContent(services, req, reply, file);
};

export default create;

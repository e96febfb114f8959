// GET /v1/batches/{batch_id}: a batch of the workspace as OpenAI's Batch object.
import { NotFoundError, clientValue } from '../base/errors.js';
import { batchIdPattern, toOpenAIBatch } from '../batches/openai-wire.js';
import { findBatch } from '../batches/store.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const { batch_id: id } = req.params as { batch_id: string };
  const row = batchIdPattern.test(id) ? await findBatch(services.db, req.auth!.workspaceId, 'batch', id) : undefined;
  if (!row) throw new NotFoundError(`no batch with id ${clientValue(id)}`, 'batch_not_found');
  return toOpenAIBatch(row);
};

export default create;

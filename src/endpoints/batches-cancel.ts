// POST /v1/batches/{batch_id}/cancel: an unfinished batch moves to cancelling; the runner stops starting its lines, writes
// what finished to its files and releases what its reservation still holds. An ended batch is answered as it is.
import { NotFoundError, clientValue } from '../base/errors.js';
import { batchIdPattern, toOpenAIBatch } from '../batches/openai-wire.js';
import { findBatch, markCancelling } from '../batches/store.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const { batch_id: id } = req.params as { batch_id: string };
  const workspaceId = req.auth!.workspaceId;
  const row = batchIdPattern.test(id) ? await findBatch(services.db, workspaceId, 'batch', id) : undefined;
  if (!row) throw new NotFoundError(`no batch with id ${clientValue(id)}`, 'batch_not_found');
  await markCancelling(services.db, id, services.now());
  return toOpenAIBatch((await findBatch(services.db, workspaceId, 'batch', id))!);
};

export default create;

// POST /v1/batches/{batch_id}/cancel: an unfinished batch moves to cancelling; the runner stops starting its lines, writes
// what finished to its files and releases what its reservation still holds. An ended batch is answered as it is.
import { requireBatch } from '../batches/lookup.js';
import { toOpenAIBatch } from '../batches/openai-wire.js';
import { findBatch, markCancelling } from '../batches/store.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const row = await requireBatch(services.db, req, 'batch', 'batch_id');
  await markCancelling(services.db, row.id, services.now());
  return toOpenAIBatch((await findBatch(services.db, row.workspace_id, 'batch', row.id))!);
};

export default create;

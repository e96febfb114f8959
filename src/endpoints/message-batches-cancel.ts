// POST /v1/messages/batches/{message_batch_id}/cancel: the batch moves to canceling; the runner ends it (canceled lines in its results).
import { toAnthropicBatch } from '../batches/anthropic-wire.js';
import { requireBatch } from '../batches/lookup.js';
import { findBatch, markCancelling } from '../batches/store.js';
import { publicBaseUrl } from '../files/file-object.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const row = await requireBatch(services.db, req, 'message_batch', 'message_batch_id');
  await markCancelling(services.db, row.id, services.now());
  return toAnthropicBatch((await findBatch(services.db, row.workspace_id, 'message_batch', row.id))!, publicBaseUrl(services, req));
};

export default create;

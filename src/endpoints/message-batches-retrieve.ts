// GET /v1/messages/batches/{message_batch_id}: a Message Batch of the workspace.
import { toAnthropicBatch } from '../batches/anthropic-wire.js';
import { requireBatch } from '../batches/lookup.js';
import { publicBaseUrl } from '../files/file-object.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => toAnthropicBatch(await requireBatch(services.db, req, 'message_batch', 'message_batch_id'), publicBaseUrl(services, req));

export default create;

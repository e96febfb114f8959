// GET /v1/batches/{batch_id}: a batch of the workspace as OpenAI's Batch object.
import { requireBatch } from '../batches/lookup.js';
import { toOpenAIBatch } from '../batches/openai-wire.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => toOpenAIBatch(await requireBatch(services.db, req, 'batch', 'batch_id'));

export default create;

// GET /v1/batches: the workspace's batches as a cursor page ({object, data, first_id, last_id, has_more}), newest first.
import { ValidationError } from '../base/errors.js';
import { batchIdPattern, toOpenAIBatch } from '../batches/openai-wire.js';
import { listBatches } from '../batches/store.js';
import type { HandlerFactory } from './types.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

const create: HandlerFactory = ({ services }) => async (req) => {
  const query = req.query as { limit?: string; after?: string };
  const limit = query.limit === undefined ? DEFAULT_LIMIT : /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw new ValidationError(`limit must be an integer from 1 to ${MAX_LIMIT}`, 'limit');
  if (query.after !== undefined && !batchIdPattern.test(query.after)) throw new ValidationError('after must be a batch id from a previous page', 'after');
  const { rows, hasMore } = await listBatches(services.db, { workspaceId: req.auth!.workspaceId, object: 'batch', limit, after: query.after });
  const data = rows.map(toOpenAIBatch);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
};

export default create;

// GET /v1/messages/batches: the workspace's Message Batches newest first, as Anthropic's page (before_id, after_id, limit).
import { ValidationError } from '../base/errors.js';
import { toAnthropicBatch } from '../batches/anthropic-wire.js';
import { batchIdPattern } from '../batches/openai-wire.js';
import { listBatches } from '../batches/store.js';
import { publicBaseUrl } from '../files/file-object.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const query = req.query as { limit?: string; after_id?: string; before_id?: string };
  const limit = query.limit === undefined ? 20 : /^\d{1,4}$/.test(query.limit) ? Number(query.limit) : NaN;
  if (!(limit >= 1 && limit <= 1000)) throw new ValidationError('limit must be an integer from 1 to 1000', 'limit');
  for (const name of ['after_id', 'before_id'] as const) {
    if (query[name] !== undefined && !batchIdPattern.test(query[name])) throw new ValidationError(`${name} must be a batch id from a previous page`, name);
  }
  const { rows, hasMore } = await listBatches(services.db, { workspaceId: req.auth!.workspaceId, object: 'message_batch', limit, after: query.after_id, before: query.before_id });
  const base = publicBaseUrl(services, req);
  const data = rows.map((row) => toAnthropicBatch(row, base));
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
};

export default create;

// GET /v1/files: a cursor page in the openai SDK's shape ({object, data, first_id, last_id, has_more}), newest first by default.
import { ValidationError } from '../base/errors.js';
import { publicBaseUrl, toFileObject } from '../files/file-object.js';
import { isFileId } from '../files/ids.js';
import { listFiles } from '../files/repository.js';
import type { HandlerFactory } from './types.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

interface ListQuery {
  limit?: string;
  order?: string;
  after?: string;
  purpose?: string;
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw new ValidationError(`limit must be an integer from 1 to ${MAX_LIMIT}`, 'limit');
  return limit;
}

const create: HandlerFactory = ({ services }) => async (req) => {
  const query = req.query as ListQuery;
  const limit = parseLimit(query.limit);
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new ValidationError('order must be "asc" or "desc"', 'order');
  if (query.purpose !== undefined && typeof query.purpose !== 'string') throw new ValidationError('purpose must be given once', 'purpose');
  if (query.after !== undefined && !isFileId(query.after)) throw new ValidationError('after must be a file id from a previous page', 'after');
  const { rows, hasMore } = await listFiles(services.db, { workspaceId: req.auth!.workspaceId, limit, order, after: query.after, purpose: query.purpose || undefined });
  const base = publicBaseUrl(services, req);
  const now = Date.now();
  const data = rows.map((row) => toFileObject(services, row, base, now));
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
};

export default create;

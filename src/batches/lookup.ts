// The batch a request names, of its key's workspace and of the route's kind; unknown, malformed and other workspaces'
// ids all answer the same 404.
import type { FastifyRequest } from 'fastify';
import { NotFoundError, clientValue } from '../base/errors.js';
import type { Db } from '../store/db.js';
import { batchIdPattern } from './openai-wire.js';
import { findBatch, type BatchRow } from './store.js';

export async function requireBatch(db: Db, req: FastifyRequest, object: 'batch' | 'message_batch', param: string): Promise<BatchRow> {
  const id = (req.params as Record<string, string>)[param];
  const row = batchIdPattern.test(id) ? await findBatch(db, req.auth!.workspaceId, object, id) : undefined;
  if (!row) throw new NotFoundError(`no batch with id ${clientValue(id)}`, 'batch_not_found');
  return row;
}

// Finds the file a request names, for its key's workspace; unknown, expired and other workspaces' ids all answer the same 404.
import type { FastifyRequest } from 'fastify';
import { NotFoundError, clientValue } from '../base/errors.js';
import type { Db } from '../store/db.js';
import { isFileId } from './ids.js';
import { findFile, type FileRow } from './repository.js';

export function fileNotFound(id: string): NotFoundError {
  return new NotFoundError(`no file with id ${clientValue(id)}`, 'file_not_found');
}

export async function requireFile(services: { db: Db }, req: FastifyRequest): Promise<FileRow> {
  const { file_id: id } = req.params as { file_id: string };
  const row = isFileId(id) ? await findFile(services.db, req.auth!.workspaceId, id) : undefined;
  if (!row) throw fileNotFound(id);
  return row;
}

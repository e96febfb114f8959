// DELETE /v1/files/{file_id}: removes the row, then the bytes; bytes a failed delete leaves behind go with the next sweep.
import { isFileId } from '../files/ids.js';
import { fileNotFound } from '../files/lookup.js';
import { deleteFile } from '../files/repository.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const { file_id: id } = req.params as { file_id: string };
  const row = isFileId(id) ? await deleteFile(services.db, req.auth!.workspaceId, id) : undefined;
  if (!row) throw fileNotFound(id);
  try {
    await services.blobs.delete(row.blob_key);
  } catch (err) {
    req.log.warn({ err, fileId: id }, 'file bytes not deleted; the orphan sweep will remove them');
  }
  return { id, object: 'file', deleted: true };
};

export default create;

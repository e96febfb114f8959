// GET|HEAD /api/v1/files/{file_id}/content: the bytes, by signed token alone or by an API key of the owning workspace; Range supported.
import { AuthError } from '../base/errors.js';
import { isFileId } from '../files/ids.js';
import { fileNotFound, requireFile } from '../files/lookup.js';
import { sendFileContent } from '../files/send-content.js';
import { findLiveFileById, type FileRow } from '../files/repository.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req, reply) => {
  const { file_id: id } = req.params as { file_id: string };
  const { token } = req.query as { token?: string };
  let row: FileRow | undefined;
  if (req.auth) {
    row = await requireFile(services, req);
  } else if (typeof token === 'string' && token) {
    // The signature is checked before the file is looked up, so a bad token never learns whether an id exists.
    services.files.signer.verify(id, token);
    row = isFileId(id) ? await findLiveFileById(services.db, id) : undefined;
    if (!row) throw fileNotFound(id);
  } else {
    throw new AuthError('send the signed URL with its token, or an API key', 'missing_credentials');
  }

  return sendFileContent(services, req, reply, row);
};

export default create;

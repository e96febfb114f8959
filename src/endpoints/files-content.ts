// GET|HEAD /api/v1/files/{file_id}/content: the bytes, by signed token alone or by an API key of the owning workspace; Range supported.
import { AuthError } from '../errors.js';
import { isFileId } from '../files/ids.js';
import { fileNotFound, requireFile } from '../files/lookup.js';
import { parseRange } from '../files/range.js';
import { findLiveFileById, type FileRow } from '../files/repository.js';
import type { HandlerFactory } from './types.js';

/** Images, video and audio; anything else (a PDF with its own scripts, say) is downloaded, not displayed. */
function isPassiveMedia(contentType: string): boolean {
  return /^(?:image|video|audio)\//.test(contentType);
}

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

  const range = parseRange(req.headers.range, row.bytes);
  reply.headers({
    'content-type': row.content_type,
    'x-content-type-options': 'nosniff',
    'cache-control': 'private',
    'accept-ranges': 'bytes',
    // Stored files are client content: never run as a page (sandbox), and only media the browser plays passively shown inline.
    'content-security-policy': 'sandbox',
    'content-disposition': `${isPassiveMedia(row.content_type) ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(row.filename)}`,
    'content-length': String(range ? range.end - range.start + 1 : row.bytes),
  });
  if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${row.bytes}`);
  if (req.method === 'HEAD') return reply.send();
  return reply.send(await services.blobs.get(row.blob_key, range));
};

export default create;

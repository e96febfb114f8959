// POST /v1/files: a multipart `file` and `purpose`, streamed into the blob store; answers the file object.
import { UnsupportedMediaError, ValidationError, clientValue, ECHO_LIMIT } from '../base/errors.js';
import { publicBaseUrl, toFileObject } from '../files/file-object.js';
import { commitFile, discardFileBytes, writeFileBytes, type StoredBytes } from '../files/store-file.js';
import { namedParts } from '../http/multipart-parts.js';
import { JSONL_TYPE } from '../http/sniff.js';
import type { HandlerFactory } from './types.js';

/** The purpose of a batch's input (/v1/batches). */
const BATCH_PURPOSE = 'batch';

const create: HandlerFactory = ({ services }) => {
  const { uploadPurposes } = services.files.options;
  const checkPurpose = (purpose: string) => {
    if (!uploadPurposes.includes(purpose)) throw new ValidationError(`invalid purpose ${clientValue(purpose)}; upload with one of: ${uploadPurposes.join(', ')}`, 'purpose', 'invalid_purpose');
  };

  return async (req, reply) => {
    if (!req.isMultipart()) throw new UnsupportedMediaError('send multipart/form-data with a "file" part and a "purpose" field');
    let purpose: string | undefined;
    let stored: StoredBytes | undefined;
    let filename: string | undefined;
    try {
      // The openai SDK sends `file` before `purpose`, so the bytes are stored first and the row only once both are known.
      for await (const part of namedParts(req)) {
        if (part.type === 'file') {
          if (part.fieldname !== 'file') throw new ValidationError(`unexpected file field ${clientValue(part.fieldname)}; send the file as "file"`, part.fieldname.slice(0, ECHO_LIMIT));
          if (stored) throw new ValidationError('send exactly one file', 'file');
          if (purpose !== undefined) checkPurpose(purpose);
          stored = await writeFileBytes(services, { workspaceId: req.auth!.workspaceId, stream: part.file });
          filename = part.filename;
        } else if (part.fieldname === 'purpose') {
          purpose = String(part.value);
        } else {
          throw new ValidationError(`unknown field ${clientValue(part.fieldname)}`, part.fieldname.slice(0, ECHO_LIMIT));
        }
      }
      if (purpose === undefined) throw new ValidationError('missing required field "purpose"', 'purpose');
      checkPurpose(purpose);
      if (!stored) throw new ValidationError('missing required field "file"', 'file');
      // JSON lines are a batch's input, and only that: any other purpose keeps to the media formats.
      if (purpose === BATCH_PURPOSE && stored.contentType !== JSONL_TYPE) throw new ValidationError('a file with purpose "batch" must be JSON lines (one request object a line)', 'file', 'invalid_file_format');
      if (purpose !== BATCH_PURPOSE && stored.contentType === JSONL_TYPE) throw new UnsupportedMediaError(`JSON lines are accepted only with purpose "${BATCH_PURPOSE}"`, 'file');
    } catch (err) {
      if (stored) await discardFileBytes(services, stored);
      reply.header('connection', 'close');
      throw err;
    }
    const row = await commitFile(services, stored, { filename, purpose, source: 'upload' });
    return toFileObject(services, row, publicBaseUrl(services, req));
  };
};

export default create;

// GET /v1/files/{file_id}: the file object with a freshly signed content URL.
import { publicBaseUrl, toFileObject } from '../files/file-object.js';
import { requireFile } from '../files/lookup.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const row = await requireFile(services, req);
  return toFileObject(services, row, publicBaseUrl(services, req));
};

export default create;

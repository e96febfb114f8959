// Reads an image edit form (multipart): fields, and the image files under `image` or `image[]` and an optional `mask`,
// all within one byte budget for the whole request (URL references fetched later count against what is left).
import type { Multipart } from '@fastify/multipart';
import { clientValue, ECHO_LIMIT, LimitError, NotFoundError, UnsupportedMediaError, ValidationError } from '../errors.js';
import { findFile, isFileId } from '../files/index.js';
import type { Call } from './call.js';
import type { FormImage, ImageForm } from './form.js';
import { bytesInFlight } from '../http/bytes-in-flight.js';
import { readCapped } from '../net/read-capped.js';

const EDIT_LIMIT_WORDS = '25 MiB';
import { sniffContentType, SNIFF_BYTES } from '../files/sniff.js';

export type { FormImage, ImageForm } from './form.js';

const FIELDS = new Set(['model', 'prompt', 'size', 'quality', 'n', 'response_format', 'output_format', 'output_compression', 'background', 'input_fidelity', 'moderation', 'user', 'image_url', 'image_url[]']);
const NUMBERS = new Set(['n', 'output_compression']);

const editTooLarge = () => new LimitError(`an image edit request may carry at most ${EDIT_LIMIT_WORDS}, URL references included`, 'request_too_large');

/** Reads a part's bytes, refusing the request as soon as the whole passes `budget`; each chunk is `hold`-ed as it arrives. */
function readPart(stream: AsyncIterable<Buffer>, used: number, budget: number, hold?: (bytes: number) => void): Promise<Buffer> {
  return readCapped(stream, budget, editTooLarge, { used, hold });
}

/** Holds image bytes against the process-wide budget (server.referenceBytesInFlight) until the response is done. */
export function holdForCall(call: Call): (bytes: number) => void {
  const budget = bytesInFlight(call.config.gateway.server.referenceBytesInFlight);
  return (bytes) => void call.reply.raw.once('close', budget.hold(bytes));
}

export async function readImageForm(parts: AsyncIterable<Multipart>, budget: number, hold?: (bytes: number) => void): Promise<ImageForm> {
  const form: ImageForm = { fields: {}, images: [], used: 0 };
  for await (const part of parts) {
    if (part.type === 'file') {
      const field = part.fieldname === 'image' || part.fieldname === 'image[]' ? 'image' : part.fieldname === 'mask' ? 'mask' : undefined;
      if (!field) throw new ValidationError(`unexpected file field ${clientValue(part.fieldname)}; send images as "image" or "image[]" and a mask as "mask"`, part.fieldname.slice(0, ECHO_LIMIT));
      if (field === 'mask' && form.images.some((i) => i.field === 'mask')) throw new ValidationError('send at most one mask', 'mask');
      const bytes = await readPart(part.file, form.used, budget, hold);
      form.used += bytes.length;
      const contentType = await sniffContentType(bytes.subarray(0, SNIFF_BYTES));
      if (!contentType?.startsWith('image/')) throw new UnsupportedMediaError(`${field} ${clientValue(part.filename ?? '')} is not a PNG, JPEG, WebP or GIF image (the type is read from its bytes)`, field);
      form.images.push({ field, filename: part.filename || `${field}.png`, contentType, bytes });
      continue;
    }
    if (!FIELDS.has(part.fieldname)) throw new ValidationError(`unknown field ${clientValue(part.fieldname)}`, part.fieldname.slice(0, ECHO_LIMIT));
    const value = String(part.value);
    form.used += Buffer.byteLength(value);
    if (part.fieldname.startsWith('image_url')) {
      const list = (form.fields.image_url as string[] | undefined) ?? [];
      list.push(value);
      form.fields.image_url = list;
    } else if (NUMBERS.has(part.fieldname)) {
      if (!/^\d{1,6}$/.test(value)) throw new ValidationError(`"${part.fieldname}" must be a whole number`, part.fieldname);
      form.fields[part.fieldname] = Number(value);
    } else form.fields[part.fieldname] = value;
  }
  return form;
}

/**
 * An `image_url` of an edit: a file of the key's workspace (`file_...`; another workspace's is 404) or an https URL
 * fetched through the SSRF guard; either must be an image and fit in `budget` bytes.
 */
export async function resolveImageReference(call: Call, reference: string, budget: number): Promise<FormImage> {
  const { services } = call;
  if (isFileId(reference)) {
    const row = await findFile(services.db, call.auth.workspaceId, reference);
    if (!row) throw new NotFoundError(`no file ${clientValue(reference)} in this workspace`, 'file_not_found');
    if (!row.content_type.startsWith('image/')) throw new UnsupportedMediaError(`file ${clientValue(reference)} is ${row.content_type}, not an image`, 'image_url');
    if (row.bytes > budget) throw new LimitError(`an image edit request may carry at most ${EDIT_LIMIT_WORDS}, URL references included`, 'request_too_large');
    const bytes = await readPart((await services.blobs.get(row.blob_key)) as AsyncIterable<Buffer>, 0, budget, holdForCall(call));
    return { field: 'image', filename: row.filename, contentType: row.content_type, bytes };
  }
  if (budget <= 0) throw new LimitError(`an image edit request may carry at most ${EDIT_LIMIT_WORDS}, URL references included`, 'request_too_large');
  holdForCall(call)(budget);
  const { bytes, contentType } = await services.remote.fetchImage(reference, budget, call.signal);
  return { field: 'image', filename: 'image_url.png', contentType, bytes };
}

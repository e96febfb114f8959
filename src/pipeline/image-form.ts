// An image edit's form (multipart): fields, and the image files under `image` or `image[]` and an optional `mask`, all
// within one byte budget for the whole request (URL references fetched later count against what is left).
import { clientValue, ECHO_LIMIT, LimitError, NotFoundError, UnsupportedMediaError, ValidationError } from '../base/errors.js';
import { findFile, isFileId } from '../files/index.js';
import type { Call } from './call.js';
import { readForm, type FormImage, type FormPart, type FormRules, type ImageForm } from './form.js';
import { bytesInFlight } from '../http/bytes-in-flight.js';
import { readCapped } from '../net/read-capped.js';

export type { FormImage, ImageForm } from './form.js';

const EDIT_LIMIT_WORDS = '25 MiB';
const NUMBERS = new Set(['n', 'output_compression']);

const editTooLarge = () => new LimitError(`an image edit request may carry at most ${EDIT_LIMIT_WORDS}, URL references included`, 'request_too_large');

const editRules = (budget: number): FormRules => ({
  fields: new Set(['model', 'prompt', 'size', 'quality', 'n', 'response_format', 'output_format', 'output_compression', 'background', 'input_fidelity', 'moderation', 'user', 'image_url', 'image_url[]']),
  file(fieldname, images) {
    const field = fieldname === 'image' || fieldname === 'image[]' ? 'image' : fieldname === 'mask' ? 'mask' : undefined;
    if (!field) return new ValidationError(`unexpected file field ${clientValue(fieldname)}; send images as "image" or "image[]" and a mask as "mask"`, fieldname.slice(0, ECHO_LIMIT));
    if (field === 'mask' && images.some((i) => i.field === 'mask')) return new ValidationError('send at most one mask', 'mask');
    return field;
  },
  keep(fields, name, value) {
    if (name.startsWith('image_url')) ((fields.image_url as string[] | undefined) ?? (fields.image_url = [] as string[])).push(value);
    else if (!NUMBERS.has(name)) fields[name] = value;
    else if (/^\d{1,6}$/.test(value)) fields[name] = Number(value);
    else throw new ValidationError(`"${name}" must be a whole number`, name);
  },
  budget,
  tooLarge: editTooLarge,
});

/** Holds image bytes against the process-wide budget (server.referenceBytesInFlight) until the answer is done. */
export function holdForCall(call: Call): (bytes: number) => void {
  const budget = bytesInFlight(call.config.gateway.server.referenceBytesInFlight);
  return (bytes) => call.holdUntilDone(budget.hold(bytes));
}

export function readImageForm(parts: AsyncIterable<FormPart>, budget: number, hold?: (bytes: number) => void): Promise<ImageForm> {
  return readForm(parts, editRules(budget), hold);
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
    const bytes = await readCapped((await services.blobs.get(row.blob_key)) as AsyncIterable<Buffer>, budget, editTooLarge, { hold: holdForCall(call) });
    return { field: 'image', filename: row.filename, contentType: row.content_type, bytes };
  }
  if (budget <= 0) throw new LimitError(`an image edit request may carry at most ${EDIT_LIMIT_WORDS}, URL references included`, 'request_too_large');
  holdForCall(call)(budget);
  const { bytes, contentType } = await services.remote.fetchImage(reference, budget, call.signal);
  return { field: 'image', filename: 'image_url.png', contentType, bytes };
}

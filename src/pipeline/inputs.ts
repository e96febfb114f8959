// The inputs stage: what a body references is fetched and checked before anything is reserved or mapped. Responses
// `input_image` parts naming a `file_id` become data URLs of the workspace file's bytes (another workspace's id is 404).
import { clientValue, LimitError, NotFoundError, ValidationError } from '../errors.js';
import { findFile, isFileId } from '../files/index.js';
import type { Call } from './call.js';
import { ownsProviderId } from '../store/provider-ids.js';
import type { ModelRoute } from '../config/types.js';
import { operationDialect } from '../engine/translators.js';
import { forgetSourceText } from '../http/json-text.js';
import { holdForCall } from './image-form.js';

/** Inline images a request may carry in all, as file ids resolved to bytes. */
const INPUT_IMAGES_LIMIT = 25 * 1024 * 1024;

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * Provider-side ids a Responses request names (`previous_response_id`, an `input_file` or `input_file`'s provider
 * `file_id`) must have been handed to this workspace by this gateway: another workspace's, or one it never handed out,
 * is 404 before any upstream call (a provider account is shared by every workspace).
 */
async function checkProviderIds(call: Call, parts: Record<string, unknown>[]): Promise<void> {
  const { db } = call.services;
  const workspace = call.auth.workspaceId;
  const previous = call.body.previous_response_id;
  if (previous !== undefined && previous !== null) {
    if (typeof previous !== 'string' || !(await ownsProviderId(db, 'response', previous, workspace))) throw new NotFoundError(`no response ${clientValue(String(previous))} in this workspace`, 'response_not_found');
  }
  for (const part of parts) {
    if (!part || part.type !== 'input_file' || part.file_id === undefined || part.file_id === null) continue;
    if (typeof part.file_id !== 'string' || !(await ownsProviderId(db, 'file', part.file_id, workspace))) throw new NotFoundError(`no file ${clientValue(String(part.file_id))} in this workspace`, 'file_not_found');
  }
}

/** Every `{type: "input_image", file_id}` in a Responses input, resolved in place to `image_url: data:...`. */
async function responsesFileInputs(call: Call, routes: readonly ModelRoute[]): Promise<void> {
  const input = call.body.input;
  const parts = Array.isArray(input) ? input.flatMap((item) => (item && typeof item === 'object' && Array.isArray((item as { content?: unknown }).content) ? ((item as { content: unknown[] }).content as Record<string, unknown>[]) : [])) : [];
  // Only a route that passes Responses through forwards provider ids (a translated one refuses them with 400 itself).
  if (routes.some((route) => operationDialect(route, 'responses') === 'openai-responses')) await checkProviderIds(call, parts);
  let used = 0;
  for (const part of parts) {
    if (!part || part.type !== 'input_image' || part.file_id === undefined || part.file_id === null) continue;
    const id = part.file_id;
    if (typeof id !== 'string' || !isFileId(id)) throw new ValidationError(`input_image file_id ${clientValue(String(id))} is not a file id`, 'input');
    const row = await findFile(call.services.db, call.auth.workspaceId, id);
    if (!row) throw new NotFoundError(`no file ${clientValue(id)} in this workspace`, 'file_not_found');
    if (!row.content_type.startsWith('image/')) throw new ValidationError(`file ${clientValue(id)} is ${row.content_type}, not an image, so it cannot be an input_image`, 'input', 'not_an_image');
    used += row.bytes;
    if (used > INPUT_IMAGES_LIMIT) throw new LimitError('input images named by file_id may hold at most 25 MiB in all', 'request_too_large', 'input');
    // The bytes (and their data URL, a third larger) are held against the process-wide budget until the response is done.
    holdForCall(call)(row.bytes * 2);
    const bytes = await readAll((await call.services.blobs.get(row.blob_key)) as AsyncIterable<Buffer>);
    // The body changes in place: its text no longer says what it holds.
    forgetSourceText(call.body);
    delete part.file_id;
    part.image_url = `data:${row.content_type};base64,${bytes.toString('base64')}`;
  }
}

const byDialect: Record<string, (call: Call, routes: readonly ModelRoute[]) => Promise<void>> = {
  'openai-responses': responsesFileInputs,
};

/** Resolves what the request references, or returns undefined at once when its dialect references nothing. */
export function resolveInputs(call: Call, routes: readonly ModelRoute[]): Promise<void> | undefined {
  return byDialect[call.dialect]?.(call, routes);
}

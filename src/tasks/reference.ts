// A video's `input_reference`: an uploaded file part, a file of the workspace, a signed file URL of this gateway (within its
// hour), or an https URL. A multipart operation gets the image bytes as a file part; a JSON operation gets a URL.
import { clientValue, LimitError, NotFoundError, UnsupportedMediaError, ValidationError } from '../base/errors.js';
import { findFile, isFileId, signContentUrl } from '../files/index.js';
import { findLiveFileById, type FileRow } from '../files/repository.js';
import type { Call } from '../pipeline/call.js';

export interface ReferenceImage {
  filename: string;
  contentType: string;
  /** In memory (an upload, a fetched URL, a file of a store that cannot stream one), held against the bytes-in-flight budget. */
  bytes?: Buffer;
  /** A workspace file read from storage as it is sent upstream: never copied into memory. */
  blob?: Blob;
}

/** The Blob a multipart operation sends: the stored file itself, or the bytes in memory (not copied again). */
export const referenceBlob = (image: ReferenceImage) => image.blob ?? new Blob([image.bytes as Uint8Array<ArrayBuffer>]);

/** What the client named: an uploaded part, or a string (file id or URL). */
export type ReferenceInput = { upload: ReferenceImage } | { named: string };

const signedPath = /^\/api\/v1\/files\/(file_[0-9a-f]{28})\/content$/;

async function readFile(call: Call, row: FileRow, maxBytes: number, hold: (bytes: number) => void): Promise<ReferenceImage> {
  if (!row.content_type.startsWith('image/')) throw new UnsupportedMediaError(`file ${clientValue(row.id)} is ${row.content_type}, not an image`, 'input_reference');
  if (row.bytes > maxBytes) throw new LimitError(`input_reference is larger than ${maxBytes} bytes`, 'request_too_large', 'input_reference');
  const { blobs } = call.services;
  if (blobs.openBlob) return { filename: row.filename, contentType: row.content_type, blob: await blobs.openBlob(row.blob_key) };
  hold(row.bytes);
  const chunks: Buffer[] = [];
  for await (const chunk of (await call.services.blobs.get(row.blob_key)) as AsyncIterable<Buffer>) chunks.push(chunk);
  return { filename: row.filename, contentType: row.content_type, bytes: Buffer.concat(chunks) };
}

/** A signed content URL this gateway issued: its file, once the token checks out (403 when it does not, 404 when the file is gone). */
async function ownSignedFile(call: Call, url: URL): Promise<FileRow | undefined> {
  const id = signedPath.exec(url.pathname)?.[1];
  const token = url.searchParams.get('token');
  if (!id || !token || url.origin !== new URL(call.baseUrl()).origin) return undefined;
  call.services.files.signer.verify(id, token);
  const row = await findLiveFileById(call.services.db, id);
  if (!row) throw new NotFoundError(`no file ${clientValue(id)}`, 'file_not_found');
  return row;
}

/**
 * The reference as the operation takes it: bytes for a multipart operation, a URL for a JSON one (a file of the
 * workspace becomes a signed URL of this gateway, which the provider may fetch within the hour).
 */
export async function resolveReference(call: Call, input: ReferenceInput, as: 'bytes' | 'url', maxBytes: number, hold: (bytes: number) => void): Promise<{ image?: ReferenceImage; url?: string }> {
  const { services } = call;
  if ('upload' in input) {
    if (as === 'bytes') return { image: input.upload };
    throw new ValidationError('this model takes input_reference as a file id or an https URL, not an uploaded file', 'input_reference');
  }
  const named = input.named;
  if (isFileId(named)) {
    const row = await findFile(services.db, call.auth.workspaceId, named);
    if (!row) throw new NotFoundError(`no file ${clientValue(named)} in this workspace`, 'file_not_found');
    if (as === 'bytes') return { image: await readFile(call, row, maxBytes, hold) };
    if (!row.content_type.startsWith('image/')) throw new UnsupportedMediaError(`file ${clientValue(named)} is ${row.content_type}, not an image`, 'input_reference');
    return { url: signContentUrl(services, row.id, call.baseUrl()).url };
  }
  let url: URL;
  try {
    url = new URL(named);
  } catch {
    throw new ValidationError('input_reference must be a file id ("file_...") or an https URL', 'input_reference');
  }
  const own = await ownSignedFile(call, url);
  if (own) return as === 'bytes' ? { image: await readFile(call, own, maxBytes, hold) } : { url: url.href };
  const refused = services.remote.check(url);
  if (refused) throw new ValidationError(`input_reference ${clientValue(named)} cannot be used: ${refused}`, 'input_reference');
  if (as === 'url') return { url: url.href };
  hold(maxBytes);
  const { bytes, contentType } = await services.remote.fetchImage(url.href, maxBytes, call.signal);
  return { image: { filename: 'input_reference', contentType, bytes } };
}

/** The image inline, for a JSON API that takes its bytes (`submit.inline`): base64 and the type read from the bytes. */
export async function inlineImage(image: ReferenceImage): Promise<{ base64: string; mime_type: string }> {
  const bytes = image.bytes ?? Buffer.from(await image.blob!.arrayBuffer());
  return { base64: bytes.toString('base64'), mime_type: image.contentType };
}

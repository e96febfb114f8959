// Stores one file: sniff its type, stream its bytes into the blob store while counting them, then write its row.
import type { Readable } from 'node:stream';
import { LimitError, UnsupportedMediaError } from '../base/errors.js';
import type { FileStore } from './file-store.js';
import { blobKeyFor } from './blob-store.js';
import { newFileId } from './ids.js';
import { insertFile, type FileRow } from './repository.js';
import { ACCEPTED_FORMATS, SNIFF_BYTES, sniffContentType } from '../http/sniff.js';

export interface StoredBytes {
  id: string;
  workspaceId: string;
  blobKey: string;
  bytes: number;
  contentType: string;
  createdAt: number;
}

export interface WriteBytesInput {
  workspaceId: string;
  /** A Node stream, any (async) iterable of chunks, or one buffer. */
  stream: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array> | Uint8Array;
  /** Defaults to files.maxUploadBytes. An archive of a generated video passes its own cap. */
  maxBytes?: number;
  now?: number;
}

export interface FileLabels {
  filename: string | undefined;
  purpose: string;
  source: FileRow['source'];
  /** What generated it: the model, the request, the asynchronous task. */
  model?: string | null;
  requestId?: string | null;
  taskId?: string | null;
}

/**
 * Writes the bytes under a new file id, refusing an unaccepted type (415) or more than maxBytes (413)
 * with nothing left in the blob store. The file does not exist until commitFile writes its row.
 */
export async function writeFileBytes(services: FileStore, input: WriteBytesInput): Promise<StoredBytes> {
  const maxBytes = input.maxBytes ?? services.files.options.maxUploadBytes;
  const now = input.now ?? Date.now();
  const iterator = chunksOf(input.stream)[Symbol.asyncIterator]();
  try {
    const head = await readHead(iterator, SNIFF_BYTES);
    const contentType = head.length ? await sniffContentType(head) : undefined;
    if (!contentType) throw new UnsupportedMediaError(`unsupported file type; accepted formats: ${ACCEPTED_FORMATS} (the type is read from the file's bytes)`, 'file');
    const id = newFileId(now);
    const blobKey = blobKeyFor(input.workspaceId, id);
    let refusal: Error | undefined;
    const counted = async function* () {
      let bytes = head.length;
      if (bytes > maxBytes) throw (refusal = tooLarge(maxBytes));
      yield head;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        bytes += next.value.length;
        if (bytes > maxBytes) throw (refusal = tooLarge(maxBytes));
        yield next.value;
      }
    };
    try {
      const bytes = await services.blobs.put(blobKey, counted(), contentType);
      return { id, workspaceId: input.workspaceId, blobKey, bytes, contentType, createdAt: Math.floor(now / 1000) };
    } catch (err) {
      await services.blobs.delete(blobKey).catch(() => undefined);
      throw refusal ?? err;
    }
  } finally {
    await iterator.return?.();
  }
}

/** Writes the row for stored bytes; if that fails the bytes are removed, so neither outlives the other. */
export async function commitFile(services: FileStore, stored: StoredBytes, labels: FileLabels): Promise<FileRow> {
  const row: FileRow = {
    id: stored.id,
    workspace_id: stored.workspaceId,
    filename: labelOf(labels.filename),
    purpose: labels.purpose,
    content_type: stored.contentType,
    bytes: stored.bytes,
    source: labels.source,
    blob_key: stored.blobKey,
    created_at: stored.createdAt,
    expires_at: stored.createdAt + Math.round(services.files.options.ttlDays * 86400),
    model: labels.model?.slice(0, 200) ?? null,
    request_id: labels.requestId?.slice(0, 200) ?? null,
    task_id: labels.taskId?.slice(0, 200) ?? null,
  };
  try {
    await insertFile(services.db, row);
  } catch (err) {
    await discardFileBytes(services, stored);
    throw err;
  }
  return row;
}

export async function discardFileBytes(services: FileStore, stored: StoredBytes): Promise<void> {
  await services.blobs.delete(stored.blobKey).catch(() => undefined);
}

/** Streams a file into the store and creates its row: the entry point for archiving generated images and videos. */
export async function storeFile(services: FileStore, input: WriteBytesInput & FileLabels): Promise<FileRow> {
  const stored = await writeFileBytes(services, input);
  return commitFile(services, stored, input);
}

function chunksOf(stream: WriteBytesInput['stream']): AsyncIterable<Uint8Array> {
  if (stream instanceof Uint8Array) return chunksOf([stream]);
  if (Symbol.asyncIterator in stream) return stream as AsyncIterable<Uint8Array>;
  const chunks = stream as Iterable<Uint8Array>;
  return (async function* () {
    yield* chunks;
  })();
}

function tooLarge(maxBytes: number): LimitError {
  return new LimitError(`file is larger than the ${maxBytes}-byte limit`, 'file_too_large', 'file');
}

async function readHead(iterator: AsyncIterator<Uint8Array>, size: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) break;
    chunks.push(next.value);
    length += next.value.length;
  }
  return Buffer.concat(chunks, length);
}

/** The client's name is only a label: no path, no control characters, bounded length. */
export function labelOf(filename: string | undefined): string {
  const base = (filename ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return clean || 'file';
}

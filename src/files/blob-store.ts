// Where file bytes live: one interface, a local directory (default) or S3-compatible storage, chosen in storage.blobs.
import type { Readable } from 'node:stream';

export interface BlobInfo {
  key: string;
  size: number;
  /** Unix milliseconds of the last write. */
  modifiedAt: number;
}

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

export interface BlobStore {
  readonly kind: 'local' | 's3';
  /** Streams body under key; the key then holds every byte or, on any failure, nothing. Returns the byte count. */
  put(key: string, body: AsyncIterable<Uint8Array>, contentType: string): Promise<number>;
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** The bytes as a Blob read from storage as it is sent (never copied into memory), where the store can (a local file). */
  openBlob?(key: string): Promise<Blob>;
  stat(key: string): Promise<BlobInfo | undefined>;
  /** Idempotent: deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  list(): AsyncIterable<BlobInfo>;
  /** Removes leftovers of writes that never finished (a crash mid-upload), older than the given time. */
  sweepPartial(olderThanMs: number): Promise<number>;
  close(): Promise<void>;
}

const keyPattern = /^[A-Za-z0-9_-]{1,128}\/[A-Za-z0-9_-]{1,128}$/;

/** Keys are made by the gateway (`<workspace>/<file>`); anything else is a bug, never a path to follow. */
export function checkBlobKey(key: string): string {
  if (!keyPattern.test(key)) throw new Error(`invalid blob key "${key}"`);
  return key;
}

/** Whether a listed key is one the gateway could have made (foreign objects in a shared bucket are left alone). */
export function isBlobKey(key: string): boolean {
  return keyPattern.test(key);
}

export function blobKeyFor(workspaceId: string, fileId: string): string {
  return checkBlobKey(`${workspaceId}/${fileId}`);
}

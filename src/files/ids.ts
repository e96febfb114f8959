// File ids that sort in creation order: "file_" + millisecond time + a per-process counter + randomness.
import { sortableId } from '../store/sortable-id.js';

/** Ids compare (as strings) in the order they were made, so list cursors need no lookup. */
export function newFileId(now = Date.now()): string {
  return sortableId('file', now);
}

export const fileIdPattern = /^file_[0-9a-f]{28}$/;

export function isFileId(value: unknown): value is string {
  return typeof value === 'string' && fileIdPattern.test(value);
}

// File ids that sort in creation order: "file_" + millisecond time + a per-process counter + randomness.
import { randomBytes } from 'node:crypto';

let lastMs = 0;
let counter = 0;

/** Ids compare (as strings) in the order they were made, so list cursors need no lookup. */
export function newFileId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  } else if (++counter > 0xffff) {
    lastMs += 1;
    counter = 0;
  }
  return `file_${lastMs.toString(16).padStart(12, '0')}${counter.toString(16).padStart(4, '0')}${randomBytes(6).toString('hex')}`;
}

export const fileIdPattern = /^file_[0-9a-f]{28}$/;

export function isFileId(value: unknown): value is string {
  return typeof value === 'string' && fileIdPattern.test(value);
}

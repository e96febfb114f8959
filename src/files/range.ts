// Parses a single `Range: bytes=...` header against a known size (RFC 9110 section 14).
import { GatewayError } from '../base/errors.js';
import type { ByteRange } from './blob-store.js';

export class RangeNotSatisfiableError extends GatewayError {
  constructor(size: number) {
    super('range_not_satisfiable', 416, 'invalid_request_error', `the requested range is outside the file's ${size} bytes`, { headers: { 'content-range': `bytes */${size}` } });
  }
}

/**
 * The one range asked for, or undefined to send the whole file: no header, a malformed one, or several
 * ranges (which a server may answer in full). A well-formed range that starts past the end is 416.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) throw new RangeNotSatisfiableError(size);
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== '' && Number(match[2]) < start) return undefined;
  if (start >= size) throw new RangeNotSatisfiableError(size);
  return { start, end };
}

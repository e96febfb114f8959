// Request-log ids: "log_" + the request's start time in 12 hex digits + 16 more, so ids sort by arrival and a time
// range is a range of ids.
import { randomHex } from '../store/sortable-id.js';

/** The last start time an id was made for, and it in hex: spelled once a millisecond, not once a row. */
let idMs = -1;
let idMsHex = '';

/** "log_" + the start time in 12 hex digits + 64 random bits in 16: ids sort by the request's arrival. */
export function requestLogId(startMs: number): string {
  const ms = Math.max(0, Math.floor(startMs));
  if (ms !== idMs) {
    idMs = ms;
    idMsHex = ms.toString(16).padStart(12, '0');
  }
  return `log_${idMsHex}${randomHex(8)}`;
}

/** The smallest id of a row that arrived at or after `ms` (a time range is a range of ids). */
export function requestLogIdAt(ms: number): string {
  return `log_${Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')}`;
}

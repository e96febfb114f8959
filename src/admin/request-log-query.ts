// The query of a request-log list as the admin API, the CLI and the dashboard's Logs page spell it, checked once into
// the repository's filter: a bad field is a 400 naming it. The filtered rows as CSV, for all three.
import { ValidationError } from '../base/errors.js';
import { listRequestLogs, type RequestLogFilter } from '../request-logs/repository.js';
import { csvHeader, csvLine, requestLogView } from '../request-logs/views.js';
import type { Db } from '../store/database.js';

/** The query of a list, as a page, the API and the CLI spell it. */
export interface RequestLogQuery {
  status?: string;
  model?: string;
  key_id?: string;
  route?: string;
  guardrail?: string;
  since?: string;
  until?: string;
  cursor?: string;
  limit?: number;
}

const idPattern = /^log_[0-9a-f]{28}$/;

/** An ISO 8601 time (or a date) as Unix milliseconds; a bad one is a 400 naming the field. */
function time(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const match = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.exec(value);
  // A time without a zone (a browser's datetime-local field) is UTC, like the dates.
  const ms = match ? Date.parse(match[0].length > 10 && !match[1] ? `${value.replace(' ', 'T')}Z` : value) : NaN;
  if (!Number.isFinite(ms)) throw new ValidationError(`${field} must be an ISO 8601 time, e.g. 2026-01-31T12:00:00Z`, field);
  return ms;
}

const optional = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

/** The filter a query asks for, in one workspace; a bad field is a 400 naming it. */
export function parseRequestLogQuery(workspaceId: string, q: RequestLogQuery, defaultLimit = 50): RequestLogFilter {
  const limit = q.limit ?? defaultLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new ValidationError('limit must be an integer from 1 to 500', 'limit');
  const status = optional(q.status);
  if (status !== undefined && status !== 'success' && status !== 'error') throw new ValidationError('status must be "success" or "error"', 'status');
  const guardrail = optional(q.guardrail);
  if (guardrail !== undefined && guardrail !== 'block' && guardrail !== 'redact' && guardrail !== 'flag') throw new ValidationError('guardrail must be "block", "redact" or "flag"', 'guardrail');
  const cursor = optional(q.cursor);
  if (cursor !== undefined && !idPattern.test(cursor)) throw new ValidationError('cursor must be the next_cursor of a previous page', 'cursor');
  return {
    workspaceId,
    status,
    model: optional(q.model),
    keyId: optional(q.key_id),
    route: optional(q.route),
    guardrail,
    since: time(q.since, 'since'),
    until: time(q.until, 'until'),
    cursor,
    limit,
  };
}


/** Rows one CSV export holds at most. */
export const CSV_MAX_ROWS = 100_000;

/**
 * Every row the filter matches (from its cursor on, up to CSV_MAX_ROWS) as CSV lines, the header first, read 500 rows
 * at a time as they are consumed: the dashboard's export, the admin API's `Accept: text/csv` and `logs --csv`.
 * Fields a spreadsheet would run as a formula are defused (`csvLine`).
 */
export async function* requestLogCsv(db: Db, filter: RequestLogFilter): AsyncGenerator<string> {
  yield csvHeader;
  let cursor = filter.cursor;
  for (let sent = 0; sent < CSV_MAX_ROWS; ) {
    const page = await listRequestLogs(db, { ...filter, cursor, limit: 500 });
    for (const row of page.rows) yield csvLine(requestLogView(row));
    sent += page.rows.length;
    if (!page.hasMore || !page.rows.length) return;
    cursor = page.rows[page.rows.length - 1].id;
  }
}

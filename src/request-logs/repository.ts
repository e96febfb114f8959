// Reading the request log: a workspace's rows newest first, filtered and paged by id (ids sort by arrival, so a time
// range is a range of ids, and a filter reads the workspace's rows newest first until a page is full), one row with its
// key's name, the sweep and the table's size.
import { sql } from 'kysely';
import type { Db } from '../store/db.js';
import { isPostgres } from '../store/dialect.js';
import type { RequestLogsTable } from '../store/request-log-table.js';
import { requestLogIdAt } from './ids.js';

export interface RequestLogFilter {
  workspaceId: string;
  status?: 'success' | 'error';
  model?: string;
  keyId?: string;
  route?: string;
  /** Only rows on which a guardrail gave this verdict. */
  guardrail?: 'block' | 'redact' | 'flag';
  /** Unix milliseconds, inclusive. */
  since?: number;
  /** Unix milliseconds, exclusive. */
  until?: number;
  /** The last id of the previous page: this page starts below it. */
  cursor?: string;
  limit: number;
}

export type RequestLogRow = RequestLogsTable & { key_name: string | null };

/** The row shape a page shows: every column and the key's name (the key may have been renamed since: its name now). */
function withKeyName(db: Db) {
  return db
    .selectFrom('request_logs as r')
    .leftJoin('api_keys as k', 'k.id', 'r.key_id')
    .selectAll('r')
    .select('k.name as key_name');
}

/** One page, newest first, and whether more rows follow it. */
export async function listRequestLogs(db: Db, f: RequestLogFilter): Promise<{ rows: RequestLogRow[]; hasMore: boolean }> {
  const rows = (await requestLogPage(db, f).execute()) as RequestLogRow[];
  return { rows: rows.slice(0, f.limit), hasMore: rows.length > f.limit };
}

/** The query of one page (one row more than the limit: whether more follow). */
export function requestLogPage(db: Db, f: RequestLogFilter) {
  let query = withKeyName(db).where('r.workspace_id', '=', f.workspaceId);
  // A literal, not a parameter: a planner reads the failures' partial index (failed = 1) only for a query it can see
  // match, and SQLite only once it has statistics (analyzeRequestLogs).
  if (f.status) query = query.where('r.failed', '=', sql.lit(f.status === 'error' ? 1 : 0));
  if (f.model !== undefined) query = query.where('r.model', '=', f.model);
  if (f.keyId !== undefined) query = query.where('r.key_id', '=', f.keyId);
  if (f.route !== undefined) query = query.where('r.route', '=', f.route);
  // The column is the verdicts as JSON.stringify wrote them (no spaces): the same LIKE on SQLite and PostgreSQL.
  if (f.guardrail !== undefined) query = query.where('r.guardrails', 'like', `%"verdict":"${f.guardrail}"%`);
  if (f.since !== undefined) query = query.where('r.id', '>=', requestLogIdAt(f.since));
  if (f.until !== undefined) query = query.where('r.id', '<', requestLogIdAt(f.until));
  if (f.cursor !== undefined) query = query.where('r.id', '<', f.cursor);
  return query.orderBy('r.id', 'desc').limit(f.limit + 1);
}

/**
 * Refreshes the planner's statistics of the request log (a sample of it: SQLite's analysis_limit). Without them SQLite
 * walks a workspace's rows for the errors filter instead of reading the failures' index (4 ms against 0.2 ms at a
 * million rows). Run by the hourly sweep.
 */
export async function analyzeRequestLogs(db: Db): Promise<void> {
  if (!isPostgres(db as never)) await sql`pragma analysis_limit = 1000`.execute(db);
  await sql`analyze request_logs`.execute(db);
}

/** One row of a workspace; undefined for an unknown id or another workspace's. */
export async function findRequestLog(db: Db, workspaceId: string, id: string): Promise<RequestLogRow | undefined> {
  return (await withKeyName(db).where('r.id', '=', id).where('r.workspace_id', '=', workspaceId).executeTakeFirst()) as RequestLogRow | undefined;
}

/**
 * A workspace's rows that arrived before `before` (Unix ms), a batch at a time (the table is keyed by workspace, then
 * id): the body keys they held, then the rows, taken from the workspace's count in the same transaction.
 */
export async function deleteRequestLogsBefore(db: Db, workspaceId: string, before: number, batchSize: number): Promise<{ deleted: number; bodyKeys: string[] }> {
  const bound = requestLogIdAt(before);
  const old = await db
    .selectFrom('request_logs')
    .select(['id', 'body_key'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '<', bound)
    .orderBy('id')
    .limit(batchSize)
    .execute();
  if (!old.length) return { deleted: 0, bodyKeys: [] };
  const last = old[old.length - 1].id;
  const deleted = await db.transaction().execute(async (trx) => {
    const result = await trx.deleteFrom('request_logs').where('workspace_id', '=', workspaceId).where('id', '<=', last).executeTakeFirst();
    const count = Number(result.numDeletedRows);
    await addToRequestLogCount(trx, workspaceId, -count);
    return count;
  });
  return { deleted, bodyKeys: old.flatMap((r) => (r.body_key ? [r.body_key] : [])) };
}

/** Adds `rows` (negative: takes them) to a workspace's count of request-log rows. */
export async function addToRequestLogCount(db: Db, workspaceId: string, rows: number): Promise<void> {
  await db
    .insertInto('request_log_counts')
    .values({ workspace_id: workspaceId, row_count: rows })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ row_count: sql`request_log_counts.row_count + excluded.row_count` }))
    .execute();
}

/** Body keys among `keys` that a request-log row still holds (the file sweeper keeps those bytes). */
export async function bodyKeysWithRows(db: Db, keys: string[]): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const rows = await db.selectFrom('request_logs').select('body_key').where('body_key', 'in', keys).execute();
  return new Set(rows.map((r) => r.body_key!));
}

/** Rows in the log, all workspaces: the workspaces' counts (a count of the rows themselves reads them all). */
export async function requestLogSize(db: Db): Promise<{ rows: number }> {
  const row = await db.selectFrom('request_log_counts').select(sql<number>`coalesce(sum(row_count), 0)`.as('rows')).executeTakeFirstOrThrow();
  return { rows: Number(row.rows) };
}

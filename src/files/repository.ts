// File metadata rows: every query is scoped to a workspace and hides expired rows, except the sweeper's.
import type { Db } from '../store/database.js';
import type { FilesTable } from '../store/schema.js';

export type FileRow = FilesTable;

const nowSeconds = (now: number) => Math.floor(now / 1000);

export async function insertFile(db: Db, row: FileRow): Promise<void> {
  await db.insertInto('files').values(row).execute();
}

/** A live file of this workspace; another workspace's id and an expired file both read as absent. */
export async function findFile(db: Db, workspaceId: string, id: string, now = Date.now()): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).where('expires_at', '>', nowSeconds(now)).executeTakeFirst();
}

/** A live file by id alone, for the signed-token path (the token names the file). */
export async function findLiveFileById(db: Db, id: string, now = Date.now()): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).where('expires_at', '>', nowSeconds(now)).executeTakeFirst();
}

export interface ListFilesQuery {
  workspaceId: string;
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
  purpose?: string;
  now?: number;
}

/** One page plus whether more follow; ids sort in creation order, so `after` is a plain comparison. */
export async function listFiles(db: Db, q: ListFilesQuery): Promise<{ rows: FileRow[]; hasMore: boolean }> {
  let query = db
    .selectFrom('files')
    .selectAll()
    .where('workspace_id', '=', q.workspaceId)
    .where('expires_at', '>', nowSeconds(q.now ?? Date.now()));
  if (q.purpose) query = query.where('purpose', '=', q.purpose);
  if (q.after) query = query.where('id', q.order === 'asc' ? '>' : '<', q.after);
  const rows = await query.orderBy('id', q.order).limit(q.limit + 1).execute();
  return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
}

/** Deletes a live file's row and returns it, or undefined when there was none to delete. */
export async function deleteFile(db: Db, workspaceId: string, id: string, now = Date.now()): Promise<FileRow | undefined> {
  return db
    .deleteFrom('files')
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('expires_at', '>', nowSeconds(now))
    .returningAll()
    .executeTakeFirst();
}

export async function expiredFiles(db: Db, now: number, limit: number): Promise<Pick<FileRow, 'id' | 'blob_key'>[]> {
  return db.selectFrom('files').select(['id', 'blob_key']).where('expires_at', '<=', nowSeconds(now)).orderBy('expires_at').limit(limit).execute();
}

/** True when this call removed the row; false when another sweeper (or a delete) got there first. */
export async function deleteFileRowById(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('files').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Which of these blob keys still have a row. */
export async function blobKeysWithRows(db: Db, keys: string[]): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const rows = await db.selectFrom('files').select('blob_key').where('blob_key', 'in', keys).execute();
  // A request-log row's captured bodies (src/request-logs/bodies.ts) are claimed by that row.
  const logs = await db.selectFrom('request_logs').select('body_key').where('body_key', 'in', keys).execute();
  return new Set([...rows.map((r) => r.blob_key), ...logs.map((r) => r.body_key!)]);
}

// The generated media a workspace's Files page shows: whatever a family archived (images, videos, an operator's music
// family's audio: any purpose the catalogue names), never uploads. Kinds are the media type's top level, not families.
import { signContentUrl } from '../files/file-object.js';
import { isFileId } from '../files/ids.js';
import { deleteFile, type FileRow } from '../files/repository.js';
import type { DashboardDeps } from './deps.js';
import { appendAudit, type Actor } from '../store/audit.js';
import type { Db } from '../store/database.js';

const MEDIA_KINDS = ['image', 'video', 'audio'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];
export const PAGE_SIZE = 24;

export function parseKind(value: unknown): MediaKind | undefined {
  return MEDIA_KINDS.find((kind) => kind === value);
}

/** How a file previews: by its sniffed content type's top level; anything else is offered as a download. */
export function kindOf(contentType: string): MediaKind | 'other' {
  const top = contentType.slice(0, contentType.indexOf('/'));
  return MEDIA_KINDS.find((kind) => kind === top) ?? 'other';
}

/** One page, newest first; `before` is the last id of the previous page (ids sort in creation order). */
export async function listGeneratedMedia(db: Db, workspaceId: string, q: { kind?: MediaKind; before?: string; limit?: number }, now = Date.now()) {
  const limit = q.limit ?? PAGE_SIZE;
  let query = db
    .selectFrom('files')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('source', '=', 'generated')
    .where('expires_at', '>', Math.floor(now / 1000));
  if (q.kind) query = query.where('content_type', 'like', `${q.kind}/%`);
  if (q.before && isFileId(q.before)) query = query.where('id', '<', q.before);
  const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute();
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

/** A live generated file of this workspace; uploads and other workspaces' files read as absent. */
export async function findGeneratedMedia(db: Db, workspaceId: string, id: string, now = Date.now()): Promise<FileRow | undefined> {
  if (!isFileId(id)) return undefined;
  return db
    .selectFrom('files')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('source', '=', 'generated')
    .where('expires_at', '>', Math.floor(now / 1000))
    .executeTakeFirst();
}

/**
 * Removes the row and writes its audit row in one transaction, then the bytes (bytes a failed delete leaves behind go
 * with the next orphan sweep).
 */
export async function deleteGeneratedMedia(services: DashboardDeps, workspaceId: string, id: string, log: { warn(obj: object, msg: string): void }, actor: Actor): Promise<boolean> {
  if (!(await findGeneratedMedia(services.db, workspaceId, id))) return false;
  const row = await services.db.transaction().execute(async (trx) => {
    const deleted = await deleteFile(trx, workspaceId, id);
    if (deleted) {
      const { id: fileId, filename, purpose, content_type, bytes, model, request_id, task_id, created_at } = deleted;
      await appendAudit(trx, actor, { action: 'file.delete', workspaceId, targetId: fileId, before: { filename, purpose, content_type, bytes, model, request_id, task_id, created_at }, after: null });
    }
    return deleted;
  });
  if (!row) return false;
  await services.blobs.delete(row.blob_key).catch((err: unknown) => log.warn({ err, fileId: id }, 'file bytes not deleted; the orphan sweep will remove them'));
  return true;
}

export interface MediaView {
  id: string;
  kind: MediaKind | 'other';
  url: string;
  filename: string;
  contentType: string;
  size: string;
  created: string;
  expires: string;
  model: string;
  /** "Task" for an asynchronous task's output, else "Request". */
  madeByLabel: string;
  madeBy: string;
}

const stamp = (seconds: number) => new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** What a template shows of a file, with a signed same-origin content URL. */
export function mediaView(services: DashboardDeps, row: FileRow): MediaView {
  return {
    id: row.id,
    kind: kindOf(row.content_type),
    url: signContentUrl(services, row.id, '').url,
    filename: row.filename,
    contentType: row.content_type,
    size: formatBytes(Number(row.bytes)),
    created: stamp(Number(row.created_at)),
    expires: stamp(Number(row.expires_at)),
    model: row.model ?? 'unknown',
    madeByLabel: row.task_id ? 'Task' : 'Request',
    madeBy: row.task_id ?? row.request_id ?? 'unknown',
  };
}

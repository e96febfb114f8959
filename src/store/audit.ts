// The audit log's rows: appended inside the transaction of the change they record, listed newest first.
import type { Kysely } from 'kysely';
import type { AuditActorKind, AuditLogTable, Database } from './schema.js';
import { sortableId } from './sortable-id.js';

export type AuditRow = AuditLogTable;

/** Who made a change, and from where. */
export interface Actor {
  kind: AuditActorKind;
  id: string;
  /** The client address (null from the CLI). */
  address: string | null;
}

export interface AuditEntry {
  action: string;
  workspaceId: string | null;
  targetId: string | null;
  before?: unknown;
  after?: unknown;
}

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

/** Appends one row; pass the transaction of the change so both land or neither does. */
export async function appendAudit(db: Kysely<Database>, actor: Actor, entry: AuditEntry, now = Date.now()): Promise<AuditRow> {
  const row: AuditRow = {
    id: sortableId('aud', now),
    at: now,
    actor_kind: actor.kind,
    actor_id: actor.id,
    action: entry.action,
    workspace_id: entry.workspaceId,
    target_id: entry.targetId,
    before: json(entry.before),
    after: json(entry.after),
    address: actor.address,
  };
  await db.insertInto('audit_log').values(row).execute();
  return row;
}

export interface AuditQuery {
  /** Only these workspaces' rows (undefined: every row). */
  workspaceIds?: string[];
  /** Rows older than this id (the previous page's last). */
  before?: string;
  limit: number;
}

export async function listAudit(db: Kysely<Database>, query: AuditQuery): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_log').selectAll();
  if (query.workspaceIds) {
    if (!query.workspaceIds.length) return [];
    q = q.where('workspace_id', 'in', query.workspaceIds);
  }
  if (query.before) q = q.where('id', '<', query.before);
  return q.orderBy('id', 'desc').limit(query.limit).execute();
}

// Webhook endpoints and deliveries in the metadata database. Deliveries are claimed with a lease on their row
// (`UPDATE ... WHERE lease_until < now`, the same statement on SQLite and PostgreSQL), so one process sends each attempt.
import type { Updateable } from 'kysely';
import type { Db } from '../store/database.js';
import { isPostgres } from '../store/dialect.js';
import { sortableId } from '../store/sortable-id.js';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from '../store/webhook-tables.js';

export type EndpointRow = WebhookEndpointsTable;
export type DeliveryRow = WebhookDeliveriesTable;

/** An endpoint as the admin API shows it and the audit log records it (never its secrets). */
export interface EndpointView {
  id: string;
  workspace_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  created_at: number;
}

export function endpointView(row: EndpointRow): EndpointView {
  return { id: row.id, workspace_id: row.workspace_id, url: row.url, events: JSON.parse(row.events) as string[], enabled: row.enabled === 1, created_at: row.created_at };
}

export const endpointIdPattern = /^whep_[0-9a-f]{28}$/;
export const newEndpointId = (now = Date.now()) => sortableId('whep', now);
export const newDeliveryId = (now = Date.now()) => sortableId('msg', now);

export async function insertEndpoint(db: Db, row: EndpointRow): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

export async function findEndpoint(db: Db, id: string): Promise<EndpointRow | undefined> {
  if (!endpointIdPattern.test(id)) return undefined;
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Within a transaction: holds off other registrations for this workspace until it ends, so a count of its endpoints
 * stays true until the insert. PostgreSQL locks the workspace's row; SQLite's transactions already begin with the
 * database's write lock (src/store/database.ts).
 */
export async function lockWorkspaceEndpoints(trx: Db, workspaceId: string): Promise<void> {
  if (isPostgres(trx as never)) await trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forUpdate().execute();
}

export async function listEndpoints(db: Db, workspaceId: string): Promise<EndpointRow[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
}

export async function updateEndpoint(db: Db, id: string, patch: Updateable<WebhookEndpointsTable>): Promise<void> {
  await db.updateTable('webhook_endpoints').set(patch).where('id', '=', id).execute();
}

/** Removes the endpoint and its deliveries (pending ones are never sent). */
export async function deleteEndpoint(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
  await db.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
}

/** The enabled endpoints of a workspace that take this event type. */
export async function subscribedEndpoints(db: Db, workspaceId: string, eventType: string): Promise<EndpointRow[]> {
  const rows = await db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).where('enabled', '=', 1).execute();
  return rows.filter((row) => (JSON.parse(row.events) as string[]).includes(eventType));
}

export async function insertDeliveries(db: Db, rows: DeliveryRow[]): Promise<void> {
  if (rows.length) await db.insertInto('webhook_deliveries').values(rows).execute();
}

/** An endpoint's deliveries, newest first. */
export async function recentDeliveries(db: Db, endpointId: string, limit: number, before?: string): Promise<DeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId);
  if (before) query = query.where('id', '<', before);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** Pending deliveries due for an attempt whose lease has run out. */
export async function dueDeliveryIds(db: Db, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where('lease_until', '<', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Takes the delivery's lease for `owner` if it is still due and nobody holds it; true when this process now does. */
export async function claimDelivery(db: Db, id: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: owner, lease_until: now + ttlMs })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where('lease_until', '<', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records an attempt's outcome and gives the lease back; false when the lease was lost meanwhile. */
export async function recordAttempt(db: Db, id: string, owner: string, patch: Updateable<WebhookDeliveriesTable>): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ ...patch, lease_owner: null, lease_until: 0 })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

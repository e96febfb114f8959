// Provider-side ids and the workspace each was handed to (migration 011). The first workspace an id is recorded for owns it.
import type { Db } from './database.js';

export type ProviderIdKind = 'response' | 'file' | 'item';

/** Longest provider id recorded or looked up; longer ones are never a provider's. */
export const MAX_PROVIDER_ID = 256;

export async function recordProviderId(db: Db, kind: ProviderIdKind, providerId: string, workspaceId: string, now = Date.now()): Promise<void> {
  if (!providerId || providerId.length > MAX_PROVIDER_ID) return;
  await db
    .insertInto('provider_ids')
    .values({ kind, provider_id: providerId, workspace_id: workspaceId, created_at: Math.floor(now / 1000) })
    .onConflict((oc) => oc.columns(['kind', 'provider_id']).doNothing())
    .execute();
}

/** True when `providerId` was handed to this workspace. */
export async function ownsProviderId(db: Db, kind: ProviderIdKind, providerId: string, workspaceId: string): Promise<boolean> {
  if (!providerId || providerId.length > MAX_PROVIDER_ID || providerId.includes('\0')) return false;
  const row = await db.selectFrom('provider_ids').select('workspace_id').where('kind', '=', kind).where('provider_id', '=', providerId).executeTakeFirst();
  return row?.workspace_id === workspaceId;
}

/** Output items kept per translated response, and the JSON each may take: larger ones are not kept (a reference to one is 404). */
export const ITEMS_PER_RESPONSE = 64;
export const ITEM_BYTES = 1024 * 1024;
/** How long an item can be referenced: as long as OpenAI keeps a stored response. */
export const ITEM_TTL_SECONDS = 30 * 24 * 3600;
/** Expired items are deleted by the process that records, at most this often. */
const SWEEP_EVERY_MS = 60_000;
let lastSweep = 0;

/** Keeps a translated response's output items (those with an id, within the bounds) for this workspace. */
export async function recordResponseItems(db: Db, workspaceId: string, items: unknown[], now = Date.now()): Promise<void> {
  const rows = [];
  for (const item of items.slice(0, ITEMS_PER_RESPONSE)) {
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || !id || id.length > MAX_PROVIDER_ID) continue;
    const data = JSON.stringify(item);
    if (data.length > ITEM_BYTES) continue;
    rows.push({ kind: 'item', provider_id: id, workspace_id: workspaceId, created_at: Math.floor(now / 1000), data });
  }
  if (rows.length) await db.insertInto('provider_ids').values(rows).onConflict((oc) => oc.columns(['kind', 'provider_id']).doNothing()).execute();
  if (now - lastSweep >= SWEEP_EVERY_MS) {
    lastSweep = now;
    await db.deleteFrom('provider_ids').where('kind', '=', 'item').where('created_at', '<', Math.floor(now / 1000) - ITEM_TTL_SECONDS).execute();
  }
}

/** The kept items of this workspace among `ids` (unexpired), by id. */
export async function findResponseItems(db: Db, workspaceId: string, ids: string[], now = Date.now()): Promise<Map<string, unknown>> {
  const wanted = [...new Set(ids.filter((id) => id && id.length <= MAX_PROVIDER_ID && !id.includes('\0')))];
  const found = new Map<string, unknown>();
  if (!wanted.length) return found;
  const rows = await db
    .selectFrom('provider_ids')
    .select(['provider_id', 'data'])
    .where('kind', '=', 'item')
    .where('workspace_id', '=', workspaceId)
    .where('provider_id', 'in', wanted)
    .where('created_at', '>=', Math.floor(now / 1000) - ITEM_TTL_SECONDS)
    .execute();
  for (const row of rows) if (row.data) found.set(row.provider_id, JSON.parse(row.data));
  return found;
}

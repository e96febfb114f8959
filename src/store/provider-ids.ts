// Provider-side ids and the workspace each was handed to (migration 011). The first workspace an id is recorded for owns it.
import type { Db } from './database.js';

export type ProviderIdKind = 'response' | 'file';

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

// How a workspace or a key narrows the operator's response cache (docs/caching.md), in the admin service: read, and set
// in one transaction with its audit row (`workspace.cache`, `key.cache`). Settings only narrow: off, a shorter life,
// fewer endpoint families, smaller entries; a route without `cache:` stays uncached whatever they say.
import { ValidationError } from '../base/errors.js';
import { CACHE_AS_SET, storedCacheSettings, type CacheSettings } from '../config/cache.js';
import { appendAudit } from '../store/audit.js';
import type { AdminScope } from './scope.js';

export type CacheSettingsScope = 'workspace' | 'key';

/** The subject in reach (404 otherwise), the workspace its audit row belongs to, and its settings now. */
async function subject(admin: AdminScope, scope: CacheSettingsScope, id: string): Promise<{ id: string; workspaceId: string; stored: string | null | undefined }> {
  if (scope === 'key') {
    const key = await admin.keyRow(id);
    return { id: key.id, workspaceId: key.workspace_id, stored: key.cache };
  }
  const workspace = await admin.workspace(id);
  return { id: workspace.id, workspaceId: workspace.id, stored: (workspace as { cache?: string | null }).cache };
}

export async function getCacheSettings(admin: AdminScope, scope: CacheSettingsScope, id: string): Promise<CacheSettings> {
  return storedCacheSettings((await subject(admin, scope, id)).stored);
}

/** Sets how the workspace or key narrows the cache (fields left out: not narrowed); a family the catalogue does not serve is refused. */
export async function setCacheSettings(admin: AdminScope, scope: CacheSettingsScope, id: string, input: Partial<CacheSettings>): Promise<CacheSettings> {
  const target = await subject(admin, scope, id);
  const families = input.families === undefined || input.families === null ? null : [...new Set(input.families)];
  const known = admin.cacheFamilies?.();
  const unknown = known && families ? families.filter((f) => !known.has(f)) : [];
  if (unknown.length) throw new ValidationError(`no endpoint family ${JSON.stringify(unknown[0])} (families: ${[...known!].sort().join(', ')})`, 'families');
  const after: CacheSettings = { enabled: input.enabled !== false, ttlSeconds: input.ttlSeconds ?? null, families, maxEntryBytes: input.maxEntryBytes ?? null };
  const before = storedCacheSettings(target.stored);
  const asSet = after.enabled && after.ttlSeconds === null && after.families === null && after.maxEntryBytes === null;
  await admin.db.transaction().execute(async (trx) => {
    const value = asSet ? null : JSON.stringify(after);
    if (scope === 'key') await trx.updateTable('api_keys').set({ cache: value }).where('id', '=', target.id).execute();
    else await trx.updateTable('workspaces').set({ cache: value }).where('id', '=', target.id).execute();
    await appendAudit(trx, admin.actor, { action: `${scope}.cache`, workspaceId: target.workspaceId, targetId: target.id, before: { cache: before }, after: { cache: after } }, admin.now());
  });
  return asSet ? CACHE_AS_SET : after;
}

// API keys in the admin service: list, show, create (the key shown once), change and revoke, each change in one
// transaction with its audit row. Views carry what the key spent all time and in its cap's current period.
import { issueApiKey } from '../auth/keys.js';
import { parseBudgetPeriod } from '../config/periods.js';
import { NotFoundError } from '../base/errors.js';
import { findApiKeyById, listApiKeys, type ApiKeyRow } from '../store/api-keys.js';
import { appendAudit } from '../store/audit.js';
import type { AdminScope } from './scope.js';
import { auditedKey, capMicros, checkExpiry, checkName, checkScopes, keyOf, type KeyInput, type KeyView } from './views.js';

type KeyChange = Partial<Pick<ApiKeyRow, 'name' | 'scopes' | 'expires_at' | 'spend_cap_micros' | 'spend_cap_period'>>;

/** Key views with their spend, read after any transaction has committed. */
async function views(admin: AdminScope, rows: ApiKeyRow[]): Promise<KeyView[]> {
  const spends = await admin.spends('key', rows);
  return rows.map((r) => keyOf(r, spends.get(r.id)?.lifetimeMicros, spends.get(r.id)));
}

export async function listKeys(admin: AdminScope, workspaceId: string): Promise<KeyView[]> {
  const workspace = await admin.workspace(workspaceId);
  return views(admin, await listApiKeys(admin.db, workspace.id));
}

export async function getKey(admin: AdminScope, id: string): Promise<KeyView> {
  return (await views(admin, [await admin.keyRow(id)]))[0];
}

/** Creates a key; the answer holds the key itself, which is never shown again. */
export async function createKey(admin: AdminScope, workspaceId: string, input: KeyInput, now = admin.now()): Promise<KeyView & { key: string }> {
  const workspace = await admin.workspace(workspaceId);
  const scopes = checkScopes(input.scopes ?? []);
  const name = checkName(input.name);
  const expiresAt = checkExpiry(input.expires_at, now);
  const cap = capMicros(input.spend_cap ?? null);
  const period = parseBudgetPeriod(input.spend_cap_period, 'spend_cap_period');
  const { row, key } = await admin.db.transaction().execute(async (trx) => {
    const issued = await issueApiKey(trx, workspace, { scopes, name, expiresAt, spendCapMicros: cap, spendCapPeriod: period, now });
    const created = (await findApiKeyById(trx, issued.id))!;
    await appendAudit(trx, admin.actor, { action: 'key.create', workspaceId: workspace.id, targetId: issued.id, after: auditedKey(keyOf(created)) }, now);
    return { row: created, key: issued.key };
  });
  return { ...(await views(admin, [row]))[0], key };
}

function keyChange(input: KeyInput, now: number): KeyChange {
  const set: KeyChange = {};
  if (input.name !== undefined) set.name = checkName(input.name);
  if (input.scopes !== undefined) set.scopes = JSON.stringify(checkScopes(input.scopes));
  if (input.expires_at !== undefined) set.expires_at = checkExpiry(input.expires_at, now);
  if (input.spend_cap !== undefined) set.spend_cap_micros = capMicros(input.spend_cap);
  if (input.spend_cap_period !== undefined) set.spend_cap_period = parseBudgetPeriod(input.spend_cap_period, 'spend_cap_period');
  return set;
}

/** The audit action of a change: `key.cap` for the cap alone, `key.scopes` etc. for one field, else `key.update`. */
function actionOf(set: KeyChange): string {
  const fields = Object.keys(set);
  if (fields.every((k) => k === 'spend_cap_micros' || k === 'spend_cap_period')) return 'key.cap';
  return fields.length === 1 ? { scopes: 'key.scopes', expires_at: 'key.expiry', name: 'key.rename' }[fields[0]]! : 'key.update';
}

/** Changes a key's cap, scopes, expiry or name; fields left out stay as they are. */
export async function updateKey(admin: AdminScope, id: string, input: KeyInput, now = admin.now()): Promise<KeyView> {
  await admin.keyRow(id);
  const set = keyChange(input, now);
  const after = await admin.db.transaction().execute(async (trx) => {
    const before = await findApiKeyById(trx, id);
    if (!before) throw new NotFoundError(`no key with id "${id}"`, 'key_not_found');
    if (!Object.keys(set).length) return before;
    await trx.updateTable('api_keys').set(set).where('id', '=', id).execute();
    // A changed cap or period starts its period's spend again from the ledger.
    if (set.spend_cap_micros !== undefined || set.spend_cap_period !== undefined) await trx.deleteFrom('spend_periods').where('scope', '=', 'key').where('subject_id', '=', id).where('model', '=', '').execute();
    const next = { ...before, ...set };
    await appendAudit(trx, admin.actor, { action: actionOf(set), workspaceId: before.workspace_id, targetId: id, before: auditedKey(keyOf(before)), after: auditedKey(keyOf(next)) }, now);
    return next;
  });
  return (await views(admin, [after]))[0];
}

/** Revokes a key; revoking one already revoked changes nothing and writes no row. */
export async function revokeKey(admin: AdminScope, id: string, now = admin.now()): Promise<KeyView> {
  await admin.keyRow(id);
  const after = await admin.db.transaction().execute(async (trx) => {
    const before = await findApiKeyById(trx, id);
    if (!before) throw new NotFoundError(`no key with id "${id}"`, 'key_not_found');
    if (before.revoked_at !== null) return before;
    const next = { ...before, revoked_at: Math.floor(now / 1000) };
    await trx.updateTable('api_keys').set({ revoked_at: next.revoked_at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    await appendAudit(trx, admin.actor, { action: 'key.revoke', workspaceId: before.workspace_id, targetId: id, before: auditedKey(keyOf(before)), after: auditedKey(keyOf(next)) }, now);
    return next;
  });
  return (await views(admin, [after]))[0];
}

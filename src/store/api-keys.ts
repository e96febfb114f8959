// API key records: stored as SHA-256 with a display prefix, never in the clear.
import type { Db } from './database.js';
import type { ApiKeysTable } from './schema.js';
import type { BudgetPeriod } from '../config/periods.js';
import { setSubjectBudget } from './budgets.js';

export type ApiKeyRow = ApiKeysTable;

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function findApiKeyByHash(db: Db, hash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
}

/** A key row with what its workspace adds: its guardrails and how it narrows the response cache. */
export type ApiKeyAuthRow = ApiKeyRow & { workspace_guardrails: string | null; workspace_cache: string | null };

/** A key, by its hash or (a relay token names it) by its id, with its workspace's guardrails and cache settings: what authentication reads, in one query. */
export async function findApiKeyForAuth(db: Db, hash: string, by: 'hash' | 'id' = 'hash'): Promise<ApiKeyAuthRow | undefined> {
  return db
    .selectFrom('api_keys')
    .leftJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .selectAll('api_keys')
    .select(['workspaces.guardrails as workspace_guardrails', 'workspaces.cache as workspace_cache'])
    .where(by === 'hash' ? 'api_keys.hash' : 'api_keys.id', '=', hash)
    .executeTakeFirst() as Promise<ApiKeyAuthRow | undefined>;
}

export async function findApiKeyById(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listApiKeys(db: Db, workspaceId: string): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').execute();
}

export async function revokeApiKey(db: Db, id: string, now = Date.now()): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ revoked_at: Math.floor(now / 1000) }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Sets the key's cap on all models; `period` absent keeps the one it had. False when there is no such key. */
export function setApiKeySpendCap(db: Db, id: string, capMicros: number | null, period?: BudgetPeriod): Promise<boolean> {
  return setSubjectBudget(db, 'key', id, { capMicros, period });
}

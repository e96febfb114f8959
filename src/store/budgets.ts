// Spending caps as records: the cap of a key or a workspace with its period, and caps on single models.
// `write*` run inside a caller's transaction (the admin service's, with its audit row); `set*` open their own.
import type { Kysely } from 'kysely';
import type { BudgetPeriod } from '../config/periods.js';
import type { Db } from './database.js';
import type { Database, SpendModelCapsTable } from './schema.js';

export type BudgetScope = 'key' | 'workspace';
export type ModelCap = SpendModelCapsTable;

export interface BudgetChange {
  /** Null removes the cap. */
  capMicros: number | null;
  /** Absent keeps the period the cap had. */
  period?: BudgetPeriod;
}

const tableOf = (scope: BudgetScope) => (scope === 'key' ? 'api_keys' : 'workspaces');

/**
 * Sets the cap of a key or a workspace on all models; false when there is no such subject. The period rows kept for
 * it are dropped with the change: the next reservation starts them again from the ledger.
 */
export async function writeSubjectBudget(trx: Kysely<Database>, scope: BudgetScope, id: string, change: BudgetChange): Promise<boolean> {
  const set = change.period ? { spend_cap_micros: change.capMicros, spend_cap_period: change.period } : { spend_cap_micros: change.capMicros };
  const result = await trx.updateTable(tableOf(scope)).set(set).where('id', '=', id).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await trx.deleteFrom('spend_periods').where('scope', '=', scope).where('subject_id', '=', id).where('model', '=', '').execute();
  return true;
}

/** Sets (or with `capMicros: null` removes) the cap of a key or a workspace on one model. */
export async function writeModelCap(trx: Kysely<Database>, scope: BudgetScope, id: string, model: string, change: BudgetChange): Promise<void> {
  if (change.capMicros === null) {
    await trx.deleteFrom('spend_model_caps').where('scope', '=', scope).where('subject_id', '=', id).where('model', '=', model).execute();
  } else {
    const row = { scope, subject_id: id, model, cap_micros: change.capMicros, period: change.period ?? 'total' };
    await trx
      .insertInto('spend_model_caps')
      .values(row)
      .onConflict((oc) => oc.columns(['scope', 'subject_id', 'model']).doUpdateSet(change.period ? { cap_micros: row.cap_micros, period: row.period } : { cap_micros: row.cap_micros }))
      .execute();
  }
  await trx.deleteFrom('spend_periods').where('scope', '=', scope).where('subject_id', '=', id).where('model', '=', model).execute();
}

export function setSubjectBudget(db: Db, scope: BudgetScope, id: string, change: BudgetChange): Promise<boolean> {
  return db.transaction().execute((trx) => writeSubjectBudget(trx, scope, id, change));
}

export function setModelCap(db: Db, scope: BudgetScope, id: string, model: string, change: BudgetChange): Promise<void> {
  return db.transaction().execute((trx) => writeModelCap(trx, scope, id, model, change));
}

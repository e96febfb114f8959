// The usage ledger: one row per billed request, with the price that produced its cost.
import type { Db } from './database.js';
import type { UsageLedgerTable } from './schema.js';
import type { Insertable } from 'kysely';

export type LedgerEntry = Insertable<UsageLedgerTable>;

export async function ledgerForRequest(db: Db, requestId: string) {
  return db.selectFrom('usage_ledger').selectAll().where('request_id', '=', requestId).execute();
}

// What an upstream reported beyond the reservation: charged at most the reservation, the rest kept here for operators.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_ledger').addColumn('overage_micros', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

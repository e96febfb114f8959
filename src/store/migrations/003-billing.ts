// Spend reservations, spent totals per key and workspace, and one ledger row per reservation at most.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('spend_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    // Milliseconds, so short test expiries need no sleeps.
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('spend_reservations_key').on('spend_reservations').columns(['key_id', 'expires_at']).execute();
  await db.schema.createIndex('spend_reservations_workspace').on('spend_reservations').columns(['workspace_id', 'expires_at']).execute();
  await db.schema.createIndex('spend_reservations_expiry').on('spend_reservations').column('expires_at').execute();

  // The ledger summed per key and per workspace, so reserving reads one row instead of summing the ledger.
  await db.schema
    .createTable('spend_totals')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('spent_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('spend_totals_pk', ['scope', 'subject_id'])
    .execute();

  // A charge billed twice (a retry, a second code path) finds its row already there and charges nothing.
  await db.schema.alterTable('usage_ledger').addColumn('reservation_id', 'text').execute();
  await db.schema.createIndex('usage_ledger_reservation').on('usage_ledger').column('reservation_id').unique().where(sql.ref('reservation_id'), 'is not', null).execute();

  await sql`insert into spend_totals (scope, subject_id, spent_micros) select 'key', key_id, sum(cost_micros) from usage_ledger group by key_id`.execute(db);
  await sql`insert into spend_totals (scope, subject_id, spent_micros) select 'workspace', workspace_id, sum(cost_micros) from usage_ledger group by workspace_id`.execute(db);
}

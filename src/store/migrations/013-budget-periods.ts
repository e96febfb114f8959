// Budgets that reset: a period on every key and workspace cap, caps per model, spend per period, and which period a
// reservation and its ledger row belong to (the one it was made in, whenever it settles).
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  // 'total' (never resets, the caps made before periods existed), 'daily', 'weekly' or 'monthly'.
  await db.schema.alterTable('api_keys').addColumn('spend_cap_period', 'text', (c) => c.notNull().defaultTo('total')).execute();
  await db.schema.alterTable('workspaces').addColumn('spend_cap_period', 'text', (c) => c.notNull().defaultTo('total')).execute();

  // A cap on one model's spend by a key or a workspace, beside its cap on all models.
  await db.schema
    .createTable('spend_model_caps')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('cap_micros', 'bigint', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull().defaultTo('total'))
    .addPrimaryKeyConstraint('spend_model_caps_pk', ['scope', 'subject_id', 'model'])
    .execute();

  // What a capped key or workspace spent in one period (model '' = all models), started from the ledger when a
  // budget first looks at the period and kept by every settlement after; all-model lifetime spend stays in spend_totals.
  await db.schema
    .createTable('spend_periods')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    // Unix milliseconds; 0 for 'total'.
    .addColumn('period_start', 'bigint', (c) => c.notNull())
    .addColumn('spent_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('spend_periods_pk', ['scope', 'subject_id', 'model', 'period', 'period_start'])
    .execute();

  await db.schema.alterTable('spend_reservations').addColumn('model', 'text', (c) => c.notNull().defaultTo('')).execute();
  // Unix milliseconds of the reservation a ledger row billed: its period, however late it settled. Null on older rows.
  await db.schema.alterTable('usage_ledger').addColumn('reserved_at', 'bigint').execute();
  await db.schema.createIndex('usage_ledger_key_time').on('usage_ledger').columns(['key_id', 'created_at']).execute();

  // A cap change must reach the caches of caps, as a key or workspace change does (migration 004).
  if (isPostgres(db)) {
    await sql`create trigger spend_model_caps_bumps_auth after insert or update or delete on spend_model_caps for each statement execute function bump_auth_version()`.execute(db);
    return;
  }
  for (const event of ['insert', 'update', 'delete']) {
    await sql.raw(`create trigger spend_model_caps_${event}_bumps_auth after ${event} on spend_model_caps begin update change_counters set version = version + 1 where name = 'auth'; end`).execute(db);
  }
}

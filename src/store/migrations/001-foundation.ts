// Workspaces, API keys, the usage ledger and gateway settings.
import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('spend_cap_micros', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text')
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('spend_cap_micros', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_workspace').on('api_keys').column('workspace_id').execute();
  await db.schema
    .createTable('usage_ledger')
    // SQLite's integer primary key is its rowid; PostgreSQL needs an identity column.
    .addColumn('id', isPostgres(db) ? 'bigint' : 'integer', (c) => (isPostgres(db) ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey()))
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('input_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cached_input_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('units', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_micros', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('price', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('usage_ledger_workspace_time').on('usage_ledger').columns(['workspace_id', 'created_at']).execute();
  await db.schema
    .createTable('settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

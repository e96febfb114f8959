// Asynchronous tasks (videos, model-family routes): one row per task, claimed for polling with a lease on the row itself.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('object', 'text', (c) => c.notNull())
    .addColumn('task', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('progress', 'integer')
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('upstream_id', 'text')
    .addColumn('charge', 'text', (c) => c.notNull())
    .addColumn('file_id', 'text')
    .addColumn('archive_status', 'text')
    .addColumn('provider_url', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('cost_micros', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    // Unix milliseconds from here on.
    .addColumn('deadline_at', 'bigint', (c) => c.notNull())
    .addColumn('next_poll_at', 'bigint', (c) => c.notNull())
    .addColumn('poll_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('not_found_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('tasks_workspace_id').on('tasks').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('tasks_due').on('tasks').columns(['status', 'next_poll_at']).execute();
}

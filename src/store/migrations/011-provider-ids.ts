// Provider-side ids the gateway handed to a workspace (a Responses id, a provider file id): a request naming one is
// checked against this table, so one workspace can never continue or read another's state on a shared provider account.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('provider_ids')
    // "response" or "file".
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('provider_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('provider_ids_pk', ['kind', 'provider_id'])
    .execute();
}

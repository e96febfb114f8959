// The audit log: one append-only row per admin change (keys, caps, scopes, users, roles, reload, file deletes), whoever
// made it (a dashboard user, an admin token, the CLI). Rows are never updated: a trigger refuses it on both engines.
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    // Sortable: "aud_" + creation time, so the newest-first listing pages by id.
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Unix milliseconds.
    .addColumn('at', 'bigint', (c) => c.notNull())
    // "user", "admin_token" or "cli".
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    // e.g. "key.create", "key.update", "user.role", "config.reload", "file.delete".
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('target_id', 'text')
    // JSON of the changed record before and after, never a secret; null when there was none.
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    // The client address of the change (the CLI: null).
    .addColumn('address', 'text')
    .execute();
  await db.schema.createIndex('audit_log_workspace').on('audit_log').columns(['workspace_id', 'id']).execute();
  if (isPostgres(db)) {
    await sql`create or replace function audit_log_append_only() returns trigger language plpgsql as $$ begin raise exception 'audit_log rows are append-only'; end $$`.execute(db);
    await sql`create trigger audit_log_no_update before update on audit_log for each row execute function audit_log_append_only()`.execute(db);
    return;
  }
  await sql`create trigger audit_log_no_update before update on audit_log begin select raise(abort, 'audit_log rows are append-only'); end`.execute(db);
}

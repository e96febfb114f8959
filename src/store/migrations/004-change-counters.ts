// A counter bumped by triggers on every change to keys or workspaces, so the auth cache knows when to drop what it holds.
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('change_counters')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`insert into change_counters (name, version) values ('auth', 0)`.execute(db);
  if (isPostgres(db)) {
    await sql`create or replace function bump_auth_version() returns trigger language plpgsql as $$ begin update change_counters set version = version + 1 where name = 'auth'; return null; end $$`.execute(db);
    for (const table of ['api_keys', 'workspaces']) {
      await sql.raw(`create trigger ${table}_bumps_auth after insert or update or delete on ${table} for each statement execute function bump_auth_version()`).execute(db);
    }
    return;
  }
  for (const table of ['api_keys', 'workspaces']) {
    for (const event of ['insert', 'update', 'delete']) {
      await sql
        .raw(`create trigger ${table}_${event}_bumps_auth after ${event} on ${table} begin update change_counters set version = version + 1 where name = 'auth'; end`)
        .execute(db);
    }
  }
}

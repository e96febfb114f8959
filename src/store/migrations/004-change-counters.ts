// A counter bumped by triggers on every change to keys or workspaces, so the auth cache knows when to drop what it holds.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('change_counters')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`insert into change_counters (name, version) values ('auth', 0)`.execute(db);
  for (const table of ['api_keys', 'workspaces']) {
    for (const event of ['insert', 'update', 'delete']) {
      await sql
        .raw(`create trigger ${table}_${event}_bumps_auth after ${event} on ${table} begin update change_counters set version = version + 1 where name = 'auth'; end`)
        .execute(db);
    }
  }
}

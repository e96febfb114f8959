// Leases on background work, so each unit of it runs on one replica at a time and a crashed holder's lease runs out.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    // Unix milliseconds.
    .addColumn('until', 'bigint', (c) => c.notNull())
    .execute();
}

// Request logs say what the response cache did (routes' cache:, docs/caching.md): hit, miss or bypass; null for a
// request whose route does not cache.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('cache', 'text').execute();
}

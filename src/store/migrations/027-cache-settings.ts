// The response cache (docs/caching.md): workspaces and keys carry how they narrow the operator's cache, JSON of
// {enabled, ttlSeconds, families, maxEntryBytes} (src/cache/limits.ts), null when they leave it as the operator set it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('cache', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('cache', 'text').execute();
}

// Request logs name every attempt of a routed request (routes/, docs/routing.md): JSON of
// [{channel, model, status, latency_ms, cost}], null for a request that was not routed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('attempts', 'text').execute();
}

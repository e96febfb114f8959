// Output items of the Responses answers the gateway translated (kind "item"), kept with the id record so a later request's
// `item_reference` to one resolves in the same workspace: `data` holds the item's JSON, bounded and expiring (store/provider-ids.ts).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('provider_ids').addColumn('data', 'text').execute();
}

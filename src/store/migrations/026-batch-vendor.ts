// Batches relayed to a vendor's batch API (docs/batches.md): the channel whose protocol declares it, chosen at creation
// (null: the gateway runs the lines), the step the relay is at, the vendor batch's id once made, and why it failed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batches').addColumn('vendor_channel', 'text').execute();
  // submit (nothing sent yet) | creating (the create was sent; a crash here fails the batch) | polling | cancelling
  await db.schema.alterTable('batches').addColumn('vendor_step', 'text').execute();
  await db.schema.alterTable('batches').addColumn('vendor_batch_id', 'text').execute();
  // Unix milliseconds the vendor batch was made: the poll interval grows with the time since.
  await db.schema.alterTable('batches').addColumn('vendor_since', 'bigint').execute();
  // JSON {code, message} of a failed vendor batch: the batch's `errors`.
  await db.schema.alterTable('batches').addColumn('vendor_error', 'text').execute();
}

// A batch's pending lines in input order, straight from the index. The index of migration 021 ended in next_at, so the
// runner's look (`status = 'pending' and next_at <= now order by line limit n`) read every pending line of the batch,
// bodies included, and sorted them to keep the first few: about 4 ms on the event loop a look for 20,000 small lines,
// growing with the batch and its bodies. Ordered by line, the look reads the lines it starts (and the few a retry put
// off) and stops.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('batch_lines_pending').execute();
  await db.schema.createIndex('batch_lines_pending_order').on('batch_lines').columns(['batch_id', 'status', 'line']).execute();
}

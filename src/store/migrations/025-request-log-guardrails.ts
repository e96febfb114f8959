// Request logs carry each guardrail's verdict (guardrails/, docs/guardrails.md): JSON of
// [{id, stage, verdict, matches, ms}] (matches are counts by detector, never the text), null when none ran.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('guardrails', 'text').execute();
}

// Guardrails (guardrails/, docs/guardrails.md): request logs carry each guardrail's verdict, JSON of
// [{id, stage, verdict, matches, ms}] (matches are counts by detector, never the text), null when none ran; workspaces
// and keys carry the guardrails they add to the operator's (a JSON array of offered ids), null when none.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_logs').addColumn('guardrails', 'text').execute();
  await db.schema.alterTable('workspaces').addColumn('guardrails', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('guardrails', 'text').execute();
}

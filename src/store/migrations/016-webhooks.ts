// Task webhooks: the endpoints a workspace registers, and one delivery row per event per endpoint, leased to the process
// that sends it (like tasks), so each attempt goes out from one replica and a crashed sender's delivery is sent again.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    // "whep_" + creation time, sortable.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    // The signing secret as shown once ("whsec_" + base64): kept so deliveries can be signed (see src/webhooks/secret.ts).
    .addColumn('secret', 'text', (c) => c.notNull())
    // After a rotation the old secret also signs until previous_until (Unix milliseconds).
    .addColumn('previous_secret', 'text')
    .addColumn('previous_until', 'bigint')
    // JSON array of event types.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_workspace').on('webhook_endpoints').columns(['workspace_id', 'id']).execute();
  await db.schema
    .createTable('webhook_deliveries')
    // "msg_" + creation time: the webhook-id header, the same on every attempt.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    // The task the event is about.
    .addColumn('subject_id', 'text', (c) => c.notNull())
    // The JSON body, exactly as signed and sent.
    .addColumn('payload', 'text', (c) => c.notNull())
    // "pending", "delivered" or "failed".
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // Unix milliseconds from here on.
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();
}

// Request logs: one row per API request the gateway answered (src/request-logs/), beside the usage ledger, which billing
// alone reads. Ids sort by the request's start time, so every filter pages on (workspace_id, <filter>, id) and a time
// range is a range of ids; the sweep deletes by id.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('request_logs')
    // "log_" + 12 hex digits of the start time in milliseconds + 16 random hex digits.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    // Unix milliseconds when the request arrived.
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // The catalogue endpoint's name (chat_completions, messages, ...).
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    // The model the gateway served, else the one the client named; '' when none.
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    // 1 when status >= 400: the status filter's index.
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('error_type', 'text')
    .addColumn('error_code', 'text')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    // Time to the first streamed event; null for answers that were not streams.
    .addColumn('ttft_ms', 'integer')
    .addColumn('input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('output_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cached_input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('units', 'real', (c) => c.notNull())
    .addColumn('cost_micros', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    // The x-request-id answer header.
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('trace_id', 'text')
    // The blob holding the captured request and response bodies (requestLogs.captureBodies); null when not captured.
    .addColumn('body_key', 'text')
    .execute();
  // Each index costs every insert: the filters the page offers (status, model, key); a route or time filter walks the
  // workspace's ids (time is a range of them).
  for (const column of ['model', 'key_id', 'failed']) {
    await db.schema.createIndex(`request_logs_workspace_${column}`).on('request_logs').columns(['workspace_id', column, 'id']).execute();
  }
  await db.schema.createIndex('request_logs_workspace').on('request_logs').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('request_logs_body').on('request_logs').columns(['body_key']).where(sql.ref('body_key'), 'is not', null).execute();
}

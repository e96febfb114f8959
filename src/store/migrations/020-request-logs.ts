// Request logs: one row per API request the gateway answered (src/request-logs/), beside the usage ledger, which billing
// alone reads. Ids sort by the request's start time, so a time range is a range of ids.
//
// Every index costs every insert, and an insert is most of what logging costs a request (bench/README.md, "Issue 36"):
// the table is keyed (workspace_id, id), on SQLite clustered by it (WITHOUT ROWID), so a workspace's page newest first
// walks its own rows in order and a filter reads on until the page is full. The one other index holds only failures
// (rare, and the filter most asked for). A filter that matches nothing reads the workspace's rows: about 0.1 s at a
// million rows on SQLite. The sweep deletes a workspace's oldest ids at a time.
//
// request_log_counts keeps each workspace's number of rows, added to by the batch that inserts them and taken from by
// the sweep that deletes them, so /metrics reads the log's size without counting a million rows.
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('request_logs')
    // "log_" + 12 hex digits of the start time in milliseconds + 16 random hex digits.
    .addColumn('id', 'text', (c) => c.notNull())
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
    .addPrimaryKeyConstraint('request_logs_pkey', ['workspace_id', 'id'])
    // SQLite only (PostgreSQL has no such modifier and no clustered tables).
    .modifyEnd(isPostgres(db) ? sql`` : sql`without rowid`)
    .execute();
  await db.schema
    .createTable('request_log_counts')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey())
    .addColumn('row_count', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('request_logs_failures').on('request_logs').columns(['workspace_id', 'id']).where(sql.ref('failed'), '=', 1).execute();
  await db.schema.createIndex('request_logs_body').on('request_logs').columns(['body_key']).where(sql.ref('body_key'), 'is not', null).execute();
}

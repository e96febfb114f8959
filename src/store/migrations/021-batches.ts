// Batches the gateway runs (/v1/batches, /v1/messages/batches): a row per batch, leased to the process that works on it
// (like tasks: `UPDATE ... WHERE lease_until < now`), and a row per input line whose state is written once the line's
// charge settled, so a crash re-runs at most the lines in flight and the ledger (keyed by the line's charge id) bills each once.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await createBatches(db);
  await createBatchLines(db);
}

/** The batch rows and their indexes: a workspace's list, and the due batches a runner looks for. */
async function createBatches(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('batches')
    // "batch_" or "msgbatch_" + creation time, sortable.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    // The wire object: "batch" (OpenAI) or "message_batch" (Anthropic).
    .addColumn('object', 'text', (c) => c.notNull())
    // The catalogue path every line goes to (/v1/chat/completions, /v1/messages, ...).
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('input_file_id', 'text')
    .addColumn('completion_window', 'text', (c) => c.notNull())
    // validating | in_progress | finalizing | completed | failed | expired | cancelling | cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    // JSON of the ChargeRef of the batch's worst case, released when the batch ends.
    .addColumn('charge', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .addColumn('output_file_id', 'text')
    .addColumn('error_file_id', 'text')
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('succeeded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    // Unix seconds of each step; null until it happens.
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('in_progress_at', 'bigint')
    .addColumn('finalizing_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('expired_at', 'bigint')
    .addColumn('cancelling_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    // Unix milliseconds.
    .addColumn('next_run_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('batches_workspace').on('batches').columns(['workspace_id', 'object', 'id']).execute();
  await db.schema.createIndex('batches_due').on('batches').columns(['status', 'next_run_at']).execute();
}

/** A row per input line, and the index of a batch's pending lines. */
async function createBatchLines(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('batch_lines')
    .addColumn('batch_id', 'text', (c) => c.notNull())
    // The line's place in the input (0 first): results are written in this order.
    .addColumn('line', 'integer', (c) => c.notNull())
    .addColumn('custom_id', 'text', (c) => c.notNull())
    // The line's request body (JSON), bounded by tasks.batches.maxLineBytes.
    .addColumn('body', 'text', (c) => c.notNull())
    // pending | succeeded | failed
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // Unix milliseconds before which a retried line waits.
    .addColumn('next_at', 'bigint', (c) => c.notNull().defaultTo(0))
    // JSON: { status_code, request_id, body } of the answer, or { error: { code, message } }.
    .addColumn('result', 'text')
    .addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('batch_lines_pkey', ['batch_id', 'line'])
    .execute();
  await db.schema.createIndex('batch_lines_pending').on('batch_lines').columns(['batch_id', 'status', 'next_at']).execute();
}

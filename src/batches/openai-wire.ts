// A batch as OpenAI's Batch object (openai SDK `Batch`): its statuses, step times and request_counts.
import type { BatchRow } from './store.js';

const num = (v: number | null) => (v === null ? null : Number(v));

export function toOpenAIBatch(row: BatchRow): Record<string, unknown> {
  return {
    id: row.id,
    object: 'batch',
    endpoint: row.endpoint,
    // A relayed batch whose vendor batch failed says why, as OpenAI's own failed batches do.
    errors: row.vendor_error ? { object: 'list', data: [{ ...(JSON.parse(row.vendor_error) as object), line: null, param: null }] } : null,
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: Number(row.created_at),
    in_progress_at: num(row.in_progress_at),
    expires_at: Number(row.expires_at),
    finalizing_at: num(row.finalizing_at),
    completed_at: num(row.completed_at),
    failed_at: num(row.failed_at),
    expired_at: num(row.expired_at),
    cancelling_at: num(row.cancelling_at),
    cancelled_at: num(row.cancelled_at),
    request_counts: { total: Number(row.total), completed: Number(row.succeeded), failed: Number(row.failed) },
    metadata: row.metadata ? (JSON.parse(row.metadata) as unknown) : null,
    // The gateway's own: what the batch's lines were charged so far (at batch prices).
    cost: { amount: Number(row.cost_micros) / 1e6 },
  };
}

export const batchIdPattern = /^(?:batch|msgbatch)_[0-9a-f]{28}$/;

// A batch as Anthropic's MessageBatch (@anthropic-ai/sdk `MessageBatch`): processing_status, request_counts by outcome,
// RFC 3339 times, and results_url once it ended.
import { ValidationError, clientValue } from '../base/errors.js';
import type { InputLine } from './plan.js';
import type { BatchRow } from './store.js';

const iso = (seconds: number | null) => (seconds === null ? null : new Date(Number(seconds) * 1000).toISOString());

const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

export function toAnthropicBatch(row: BatchRow, baseUrl: string): Record<string, unknown> {
  const ended = ENDED.has(row.status);
  const total = Number(row.total), succeeded = Number(row.succeeded), errored = Number(row.failed);
  const rest = total - succeeded - errored;
  return {
    id: row.id,
    type: 'message_batch',
    processing_status: ended ? 'ended' : row.status === 'cancelling' ? 'canceling' : 'in_progress',
    request_counts: {
      processing: ended ? 0 : rest,
      succeeded,
      errored,
      canceled: row.status === 'cancelled' ? rest : 0,
      expired: row.status === 'expired' ? rest : 0,
    },
    ended_at: iso(row.completed_at ?? row.cancelled_at ?? row.expired_at ?? row.failed_at),
    created_at: iso(row.created_at),
    expires_at: iso(row.expires_at),
    archived_at: null,
    cancel_initiated_at: iso(row.cancelling_at),
    results_url: ended ? `${baseUrl}/v1/messages/batches/${row.id}/results` : null,
  };
}

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** The `requests` of a Message Batch as lines: `{custom_id, params}` each, within the line limit. */
export function parseBatchRequests(body: Record<string, unknown>, limits: { maxLines: number; maxLineBytes: number }): InputLine[] {
  const unknown = Object.keys(body).find((k) => k !== 'requests');
  if (unknown !== undefined) throw new ValidationError(`unknown field ${clientValue(unknown)}`, unknown.slice(0, 64));
  const { requests } = body;
  if (!Array.isArray(requests) || requests.length === 0) throw new ValidationError('"requests" must be a non-empty array', 'requests');
  if (requests.length > limits.maxLines) throw new ValidationError(`"requests" has more than ${limits.maxLines} entries`, 'requests');
  return requests.map((request: unknown, i) => {
    const where = `requests[${i}]`;
    if (!request || typeof request !== 'object' || Array.isArray(request)) throw new ValidationError(`${where} must be an object`, where);
    const { custom_id: customId, params, ...rest } = request as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw new ValidationError(`${where}: unknown field ${clientValue(extra)}`, `${where}.${extra.slice(0, 64)}`);
    if (typeof customId !== 'string' || !CUSTOM_ID.test(customId)) throw new ValidationError(`${where}.custom_id must be 1 to 64 letters, digits, _ or -`, `${where}.custom_id`);
    if (!params || typeof params !== 'object' || Array.isArray(params)) throw new ValidationError(`${where}.params must be an object`, `${where}.params`);
    const bytes = Buffer.byteLength(JSON.stringify(params));
    if (bytes > limits.maxLineBytes) throw new ValidationError(`${where}.params is ${bytes} bytes, over the ${limits.maxLineBytes}-byte limit of a batch line`, `${where}.params`, 'line_too_large');
    return { customId, body: params as Record<string, unknown>, where };
  });
}

// The request-log row of a batch line that ended: the batch's key, route `batch:<endpoint>`, what its charge settled for.
import type { GatewayError } from '../base/errors.js';
import { requestLogId } from '../request-logs/ids.js';
import { requestLogColumns } from '../store/request-log-table.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { BatchRow } from './store.js';

/** How a line ended, as its row records it. */
export interface LineEnd {
  /** The route's endpoint name (the batch's endpoint until the catalogue resolved it). */
  endpoint: string;
  requestId: string;
  startedMs: number;
  status: number;
  entry: LedgerEntry | undefined;
  error: GatewayError | undefined;
  /** The model the line asked for, used when no charge names one. */
  asked: unknown;
}

/** The row's values in the order of requestLogColumns. */
export function lineLogRow(batch: BatchRow, end: LineEnd): unknown[] {
  const { endpoint, requestId, startedMs, status, entry, error, asked } = end;
  // By column name, so a column added to the table later is null here rather than shifting the others.
  const row: Partial<Record<(typeof requestLogColumns)[number], unknown>> = {
    id: requestLogId(startedMs),
    workspace_id: batch.workspace_id,
    key_id: batch.key_id,
    created_at: startedMs,
    route: `batch:${endpoint}`.slice(0, 128),
    method: 'POST',
    model: entry?.model ?? (typeof asked === 'string' ? asked.slice(0, 128) : ''),
    channel: entry?.channel ?? '',
    status,
    failed: status >= 400 ? 1 : 0,
    error_type: error?.type ?? null,
    error_code: error?.code ?? null,
    latency_ms: Date.now() - startedMs,
    input_tokens: Number(entry?.input_tokens ?? 0),
    output_tokens: Number(entry?.output_tokens ?? 0),
    cached_input_tokens: Number(entry?.cached_input_tokens ?? 0),
    units: Number(entry?.units ?? 0),
    cost_micros: Number(entry?.cost_micros ?? 0),
    currency: entry?.currency ?? '',
    request_id: requestId,
  };
  return requestLogColumns.map((column) => row[column] ?? null);
}

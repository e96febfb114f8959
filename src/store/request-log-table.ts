// The request_logs table (migration 020): one row per API request answered, in the order of requestLogColumns.
export interface RequestLogsTable {
  id: string;
  workspace_id: string;
  key_id: string;
  /** Unix milliseconds when the request arrived. */
  created_at: number;
  route: string;
  method: string;
  model: string;
  channel: string;
  status: number;
  /** 1 when status >= 400. */
  failed: number;
  error_type: string | null;
  error_code: string | null;
  latency_ms: number;
  ttft_ms: number | null;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  units: number;
  cost_micros: number;
  currency: string;
  request_id: string;
  trace_id: string | null;
  body_key: string | null;
  /** A routed request's attempts, as JSON (request-logs/record.ts); null when the request was not routed. */
  attempts: string | null;
  /** What the response cache did: hit, miss or bypass; null where the route does not cache. */
  cache: string | null;
  /** Each guardrail's verdict, as JSON (request-logs/record.ts); null when no guardrail ran. */
  guardrails: string | null;
}

/** The request_log_counts table: each workspace's number of request-log rows, kept by the writes and the sweep. */
export interface RequestLogCountsTable {
  workspace_id: string;
  row_count: number;
}

/** Where a row's workspace is among its values. */
export const WORKSPACE_COLUMN = 1;

/** The columns as a row travels (a flat array, cheap to clone to the spend thread and to send as JSON), in this order. */
export const requestLogColumns = [
  'id', 'workspace_id', 'key_id', 'created_at', 'route', 'method', 'model', 'channel', 'status', 'failed', 'error_type',
  'error_code', 'latency_ms', 'ttft_ms', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'units', 'cost_micros',
  'currency', 'request_id', 'trace_id', 'body_key', 'attempts', 'cache', 'guardrails',
] as const satisfies readonly (keyof RequestLogsTable)[];

/** One row as its values in requestLogColumns order. */
export type RequestLogValues = unknown[];

/** PostgreSQL types of the columns, for reading rows out of a JSON array (one statement inserts a batch). */
export const requestLogPgTypes: Record<(typeof requestLogColumns)[number], string> = {
  id: 'text', workspace_id: 'text', key_id: 'text', created_at: 'bigint', route: 'text', method: 'text', model: 'text', channel: 'text',
  status: 'integer', failed: 'integer', error_type: 'text', error_code: 'text', latency_ms: 'integer', ttft_ms: 'integer', input_tokens: 'bigint',
  output_tokens: 'bigint', cached_input_tokens: 'bigint', units: 'real', cost_micros: 'bigint', currency: 'text', request_id: 'text', trace_id: 'text', body_key: 'text', attempts: 'text', cache: 'text', guardrails: 'text',
};

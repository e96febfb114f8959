// How a request-log row is shown: the admin API, the CLI, the dashboard and the CSV export.
import { renderCost } from '../billing/cost.js';
import type { RequestLogRow } from './repository.js';

export interface RequestLogView {
  id: string;
  request_id: string;
  created_at: string;
  workspace_id: string;
  key_id: string;
  key_name: string | null;
  route: string;
  method: string;
  model: string;
  channel: string;
  status: number;
  error_type: string | null;
  error_code: string | null;
  latency_ms: number;
  ttft_ms: number | null;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  units: number;
  /** In `currency`, as a plain decimal (the answer's cost.amount). */
  cost: number;
  currency: string;
  trace_id: string | null;
  bodies_captured: boolean;
  /** A routed request's attempts at its targets, in order (docs/routing.md); null when the request was not routed. */
  attempts: RequestLogAttempt[] | null;
}

export interface RequestLogAttempt {
  channel: string;
  model: string;
  status: number;
  latency_ms: number;
  /** In the row's currency: what the attempt that answered was charged; 0 for a failed one. */
  cost: number;
  /** Why an answering attempt's stream broke when another target continued it (its error code); absent otherwise. */
  broken?: string;
}

/** The stored attempts (JSON with costs in micro-units) as shown. */
function attemptsView(text: string | null, currency: string): RequestLogAttempt[] | null {
  if (!text) return null;
  const stored = JSON.parse(text) as (Omit<RequestLogAttempt, 'cost'> & { cost_micros: number })[];
  return stored.map(({ cost_micros, ...attempt }) => ({ ...attempt, cost: renderCost({ micros: cost_micros, currency }).amount }));
}

export function requestLogView(r: RequestLogRow): RequestLogView {
  return {
    id: r.id,
    request_id: r.request_id,
    created_at: new Date(Number(r.created_at)).toISOString(),
    workspace_id: r.workspace_id,
    key_id: r.key_id,
    key_name: r.key_name ?? null,
    route: r.route,
    method: r.method,
    model: r.model,
    channel: r.channel,
    status: Number(r.status),
    error_type: r.error_type,
    error_code: r.error_code,
    latency_ms: Number(r.latency_ms),
    ttft_ms: r.ttft_ms === null ? null : Number(r.ttft_ms),
    input_tokens: Number(r.input_tokens),
    output_tokens: Number(r.output_tokens),
    cached_input_tokens: Number(r.cached_input_tokens),
    units: Number(r.units),
    cost: renderCost({ micros: Number(r.cost_micros), currency: r.currency || 'USD' }).amount,
    currency: r.currency || 'USD',
    trace_id: r.trace_id,
    bodies_captured: r.body_key !== null,
    attempts: attemptsView(r.attempts, r.currency || 'USD'),
  };
}

/** A CSV field: quoted when it holds a comma, a quote or a line break; a leading formula character is defused. */
function csvField(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value === 'string') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvColumns = ['created_at', 'request_id', 'status', 'route', 'model', 'channel', 'key_id', 'key_name', 'error_code', 'latency_ms', 'ttft_ms', 'input_tokens', 'output_tokens', 'cost', 'currency'] as const;

export const csvHeader = `${csvColumns.join(',')}\r\n`;

export function csvLine(view: RequestLogView): string {
  return `${csvColumns.map((c) => csvField(view[c])).join(',')}\r\n`;
}

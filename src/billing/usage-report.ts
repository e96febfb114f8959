// The usage report: a workspace's ledger grouped by day (UTC), model and key, with requests, tokens and cost, and how
// many of the requests were response-cache hits (docs/caching.md).
import { sql } from 'kysely';
import { ValidationError } from '../base/errors.js';
import type { Db } from '../store/database.js';
import { isPostgres } from '../store/dialect.js';

export interface UsageRange {
  /** Unix seconds, inclusive. */
  since?: number;
  /** Unix seconds, exclusive. */
  until?: number;
}

export interface UsageRow {
  date: string;
  model: string;
  key_id: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  units: number;
  cost: { amount: number; currency: string };
  /** How many of `requests` were answered from the response cache (ledger kind cache_hit), not by an upstream call. */
  cache_hits: number;
  /** What those hits saved: the cost of the answers they replayed less what the hits were charged, in `cost.currency`. */
  cache_saved: number;
}

const DAY = 86_400;

/** A cache hit's saving, as its ledger row's price records it (src/cache/hit.ts); SQL's JSON reads differ by engine. */
const savedMicros = (db: Db) => (isPostgres(db as never) ? sql`coalesce((price::jsonb->>'savedMicros')::bigint, 0)` : sql`coalesce(json_extract(price, '$.savedMicros'), 0)`);

export async function usageReport(db: Db, workspaceId: string, range: UsageRange = {}): Promise<UsageRow[]> {
  // Integer division by a day reads the same on SQLite and PostgreSQL, unlike their date functions.
  const day = sql<number>`created_at / ${sql.lit(DAY)}`;
  let query = db
    .selectFrom('usage_ledger')
    .select((eb) => [
      day.as('day'),
      'model',
      'key_id',
      'currency',
      eb.fn.countAll<number>().as('requests'),
      eb.fn.sum<number>('input_tokens').as('input_tokens'),
      eb.fn.sum<number>('output_tokens').as('output_tokens'),
      eb.fn.sum<number>('cached_input_tokens').as('cached_input_tokens'),
      eb.fn.sum<number>('units').as('units'),
      eb.fn.sum<number>('cost_micros').as('cost_micros'),
      sql<number>`sum(case when kind = 'cache_hit' then 1 else 0 end)`.as('cache_hits'),
      sql<number>`sum(case when kind = 'cache_hit' then ${savedMicros(db)} else 0 end)`.as('cache_saved_micros'),
    ])
    .where('workspace_id', '=', workspaceId);
  if (range.since !== undefined) query = query.where('created_at', '>=', range.since);
  if (range.until !== undefined) query = query.where('created_at', '<', range.until);
  const rows = await query.groupBy([day, 'model', 'key_id', 'currency']).orderBy('day').orderBy('model').orderBy('key_id').execute();
  return rows.map((r) => ({
    date: new Date(Number(r.day) * DAY * 1000).toISOString().slice(0, 10),
    model: r.model,
    key_id: r.key_id,
    requests: Number(r.requests),
    input_tokens: Number(r.input_tokens),
    output_tokens: Number(r.output_tokens),
    cached_input_tokens: Number(r.cached_input_tokens),
    units: Number(r.units),
    cost: { amount: Number(r.cost_micros) / 1e6, currency: r.currency },
    cache_hits: Number(r.cache_hits),
    cache_saved: Number(r.cache_saved_micros) / 1e6,
  }));
}

/** Sums per currency, so mixed-currency prices never add up into one wrong number. */
export function usageTotals(rows: UsageRow[]) {
  const totals = new Map<string, { currency: string; requests: number; input_tokens: number; output_tokens: number; micros: number; cache_hits: number; savedMicros: number }>();
  for (const r of rows) {
    const t = totals.get(r.cost.currency) ?? { currency: r.cost.currency, requests: 0, input_tokens: 0, output_tokens: 0, micros: 0, cache_hits: 0, savedMicros: 0 };
    t.requests += r.requests;
    t.cache_hits += r.cache_hits;
    t.savedMicros += Math.round(r.cache_saved * 1e6);
    t.input_tokens += r.input_tokens;
    t.output_tokens += r.output_tokens;
    t.micros += Math.round(r.cost.amount * 1e6);
    totals.set(r.cost.currency, t);
  }
  return [...totals.values()].map(({ micros, savedMicros, ...t }) => ({ ...t, cost: { amount: micros / 1e6, currency: t.currency }, cache_saved: savedMicros / 1e6 }));
}

/** Whether YYYY-MM-DD names a day that exists: Date.parse would roll 2025-02-30 over to March 2. */
function isCalendarDate(text: string): boolean {
  const ms = Date.parse(`${text}T00:00:00Z`);
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === text;
}

/**
 * `2025-01-31` (a whole UTC day: since takes its start, until includes it), an ISO date-time,
 * or unix seconds. Returns unix seconds on the inclusive-since / exclusive-until scale.
 */
export function parseUsageBound(value: unknown, name: 'since' | 'until'): number | undefined {
  if (value === undefined || value === '') return undefined;
  const text = String(value).trim();
  let seconds: number;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) seconds = isCalendarDate(text) ? Date.parse(`${text}T00:00:00Z`) / 1000 + (name === 'until' ? DAY : 0) : Number.NaN;
  else if (/^\d{1,12}$/.test(text)) seconds = Number(text);
  else if (/^\d{4}-\d{2}-\d{2}T/.test(text)) seconds = isCalendarDate(text.slice(0, 10)) ? Math.floor(Date.parse(text) / 1000) : Number.NaN;
  else seconds = Number.NaN;
  if (!Number.isFinite(seconds)) throw new ValidationError(`"${name}" must be a date (2025-01-31), an ISO date-time or unix seconds`, name, 'invalid_date');
  return seconds;
}

export function parseUsageRange(since: unknown, until: unknown): UsageRange {
  const range = { since: parseUsageBound(since, 'since'), until: parseUsageBound(until, 'until') };
  if (range.since !== undefined && range.until !== undefined && range.since >= range.until) throw new ValidationError('"since" must be before "until"', 'since', 'invalid_date');
  return range;
}

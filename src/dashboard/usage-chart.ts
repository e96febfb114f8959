// The Usage page's numbers: the last 30 days of the ledger as daily series (drawn as SVG bars) and totals by model and key.
import { usageReport, type UsageRow } from '../billing/usage-report.js';
import { formatMoney } from '../billing/spend-caps.js';
import type { Db } from '../store/database.js';
import { listApiKeys } from '../store/api-keys.js';

const DAY = 86_400;
export const DAYS = 30;

export interface Bar {
  x: number;
  y: number;
  height: number;
  label: string;
}

export interface Chart {
  width: number;
  height: number;
  bars: Bar[];
  barWidth: number;
  /** Value labels on the y axis, top to bottom. */
  ticks: { y: number; label: string }[];
  /** Dates under the x axis. */
  dates: { x: number; label: string }[];
  empty: boolean;
}

interface Totals {
  name: string;
  requests: number;
  input: number;
  output: number;
  costMicros: number;
  currency: string;
  hits: number;
  savedMicros: number;
}

const CHART = { width: 640, height: 220, left: 64, bottom: 24, top: 10, right: 8 };

/** Bars for one value per day, scaled to a rounded maximum so the axis reads in whole steps. */
export function barChart(days: string[], values: number[], format: (v: number) => string): Chart {
  const plotWidth = CHART.width - CHART.left - CHART.right;
  const plotHeight = CHART.height - CHART.top - CHART.bottom;
  const max = niceMax(Math.max(0, ...values));
  const slot = plotWidth / days.length;
  const bars = values.map((v, i) => {
    const height = max > 0 ? Math.round((v / max) * plotHeight * 10) / 10 : 0;
    return { x: Math.round((CHART.left + i * slot + slot * 0.15) * 10) / 10, y: CHART.top + plotHeight - height, height, label: `${days[i]}: ${format(v)}` };
  });
  const ticks = [1, 0.5, 0].map((f) => ({ y: CHART.top + plotHeight * (1 - f), label: format(max * f) }));
  const dates = days.map((d, i) => ({ x: CHART.left + i * slot + slot / 2, label: d.slice(5) })).filter((_, i) => (i % 7 === 0 && i < days.length - 3) || i === days.length - 1);
  return { width: CHART.width, height: CHART.height, bars, barWidth: Math.round(slot * 0.7 * 10) / 10, ticks, dates, empty: values.every((v) => v === 0) };
}

function niceMax(value: number): number {
  if (value <= 0) return 0;
  const step = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * step >= value) return m * step;
  return 10 * step;
}

export const formatTokens = (v: number) => (v >= 1e6 ? `${(v / 1e6).toFixed(1)}M` : v >= 1e3 ? `${(v / 1e3).toFixed(1)}k` : String(Math.round(v)));
const formatUsd = (micros: number) => `$${formatMoney(Math.round(micros))}`;

function totalsBy(rows: UsageRow[], nameOf: (r: UsageRow) => string): Totals[] {
  const out = new Map<string, Totals>();
  for (const r of rows) {
    const name = nameOf(r);
    const id = `${name}\u0000${r.cost.currency}`;
    const t = out.get(id) ?? { name, requests: 0, input: 0, output: 0, costMicros: 0, currency: r.cost.currency, hits: 0, savedMicros: 0 };
    t.requests += r.requests;
    t.hits += r.cache_hits;
    t.savedMicros += Math.round(r.cache_saved * 1e6);
    t.input += r.input_tokens;
    t.output += r.output_tokens;
    t.costMicros += Math.round(r.cost.amount * 1e6);
    out.set(id, t);
  }
  return [...out.values()].sort((a, b) => b.costMicros - a.costMicros || b.requests - a.requests);
}

const tableRow = (t: Totals) => ({
  name: t.name,
  requests: t.requests,
  input: formatTokens(t.input),
  output: formatTokens(t.output),
  cost: `${formatMoney(t.costMicros)} ${t.currency}`,
  hits: t.hits,
  saved: `${formatMoney(t.savedMicros)} ${t.currency}`,
});

/** Everything the Usage page draws, for the 30 UTC days ending today. */
export async function usageOverview(db: Db, workspaceId: string, now = Date.now()) {
  const today = Math.floor(now / 1000 / DAY);
  const since = (today - DAYS + 1) * DAY;
  const rows = await usageReport(db, workspaceId, { since });
  const days = Array.from({ length: DAYS }, (_, i) => new Date((since + i * DAY) * 1000).toISOString().slice(0, 10));
  const index = new Map(days.map((d, i) => [d, i]));
  const cost = new Array<number>(DAYS).fill(0);
  const tokens = new Array<number>(DAYS).fill(0);
  for (const r of rows) {
    const i = index.get(r.date);
    if (i === undefined) continue;
    // Caps and prices are in USD; a ledger row in another currency is in the tables, not the chart.
    if (r.cost.currency === 'USD') cost[i] += Math.round(r.cost.amount * 1e6);
    tokens[i] += r.input_tokens + r.output_tokens;
  }
  const keys = new Map((await listApiKeys(db, workspaceId)).map((k) => [k.id, `${k.prefix}…${k.name ? ` (${k.name})` : ''}`]));
  const totalCost = cost.reduce((a, b) => a + b, 0);
  const totalTokens = tokens.reduce((a, b) => a + b, 0);
  return {
    from: days[0],
    to: days[DAYS - 1],
    totalCost: formatUsd(totalCost),
    totalTokens: formatTokens(totalTokens),
    totalRequests: rows.reduce((a, r) => a + r.requests, 0),
    totalHits: rows.reduce((a, r) => a + r.cache_hits, 0),
    // Like the cost chart, in USD (the currency of caps and of the shipped prices).
    totalSaved: formatUsd(rows.reduce((a, r) => a + (r.cost.currency === 'USD' ? Math.round(r.cache_saved * 1e6) : 0), 0)),
    costChart: barChart(days, cost, formatUsd),
    tokenChart: barChart(days, tokens, formatTokens),
    byModel: totalsBy(rows, (r) => r.model).map(tableRow),
    byKey: totalsBy(rows, (r) => keys.get(r.key_id) ?? r.key_id).map(tableRow),
  };
}

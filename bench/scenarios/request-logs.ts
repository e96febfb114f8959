// Benchmark: the request log at a million rows (issue 36, "usable at 1 million rows"). One workspace holds 1,000,000
// rows over 30 days (five keys, three models, one request in a thousand failed, one in a hundred on Messages), another
// 100,000; each page the dashboard and the admin API ask for is timed (median of five) through listRequestLogs, on
// SQLite, and on PostgreSQL when DATABASE_URL is set (a schema of its own, dropped after), with the statistics the
// hourly sweep refreshes. Filling runs through the spend thread's own insert statement: its CPU per row is the
// insert's (a batch also adds to its workspace's count once, request_log_counts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openPostgres, openSqlite, type OpenedDatabase } from '../../src/store/database.js';
import { writeStatements } from '../../src/billing/sqlite-spend-statements.js';
import { analyzeRequestLogs, listRequestLogs, type RequestLogFilter } from '../../src/request-logs/repository.js';
import { requestLogId } from '../../src/request-logs/ids.js';
import { requestLogColumns } from '../../src/store/request-log-table.js';
import { percentile, round } from '../harness.js';

export const name = 'request logs at a million rows';

const ROWS = Number(process.env.BENCH_REQUEST_LOG_ROWS ?? 1_000_000);
const DAY_MS = 86_400_000;
const MODELS = ['gpt-5.1', 'claude-sonnet-4-6', 'gemini-3-flash'];

/** Row `i` of `count` of a workspace: spread evenly over the 30 days before `end`. */
function row(workspace: string, i: number, count: number, end: number): unknown[] {
  const start = end - 30 * DAY_MS + Math.floor((i * 30 * DAY_MS) / count);
  const failed = i % 1000 === 999;
  const values: Record<(typeof requestLogColumns)[number], unknown> = {
    id: requestLogId(start), workspace_id: workspace, key_id: `key_${workspace}_${i % 5}`, created_at: start,
    route: i % 100 === 42 ? 'messages' : 'chat_completions', method: 'POST', model: MODELS[i % 3], channel: 'openai',
    status: failed ? 502 : 200, failed: failed ? 1 : 0, error_type: failed ? 'upstream_error' : null, error_code: null,
    latency_ms: 800, ttft_ms: null, input_tokens: 1200, output_tokens: 300, cached_input_tokens: 0, units: 0, cost_micros: 4200,
    currency: 'USD', request_id: `req-${i}`, trace_id: null, body_key: null, attempts: null, cache: null, guardrails: null,
  };
  return requestLogColumns.map((c) => values[c]);
}

/** Fills SQLite through the spend thread's statement, 10,000 rows a transaction; CPU µs a row. */
function fillSqlite(opened: OpenedDatabase, workspace: string, count: number, end: number): number {
  const insert = writeStatements(opened.sqlite!).insertRequestLog;
  const batch = opened.sqlite!.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) insert.run(row(workspace, i, count, end));
  });
  const before = process.cpuUsage();
  for (let i = 0; i < count; i += 10_000) batch(i, Math.min(count, i + 10_000));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

/** Fills PostgreSQL in the server (generate_series), the same rows. */
async function fillPostgres(opened: OpenedDatabase, workspace: string, count: number, end: number): Promise<void> {
  const start = end - 30 * DAY_MS;
  await sql`
    insert into request_logs (${sql.raw(requestLogColumns.join(', '))})
    select 'log_' || lpad(to_hex(t), 12, '0') || lpad(to_hex(i), 16, '0'), ${workspace}, ${`key_${workspace}_`} || (i % 5), t,
      case when i % 100 = 42 then 'messages' else 'chat_completions' end, 'POST', (array[${sql.join(MODELS)}])[i % 3 + 1], 'openai',
      case when i % 1000 = 999 then 502 else 200 end, case when i % 1000 = 999 then 1 else 0 end,
      case when i % 1000 = 999 then 'upstream_error' end, null, 800, null, 1200, 300, 0, 0, 4200, 'USD', 'req-' || i, null, null
    from generate_series(0, ${count - 1}) as i, lateral (select ${start}::bigint + (i::bigint * ${30 * DAY_MS}) / ${count} as t) as s`.execute(opened.db);
}

/** The pages timed: what an operator asks for first, and the worst cases (a filter nothing matches). */
function pages(workspace: string, end: number): [string, Omit<RequestLogFilter, 'limit'>][] {
  const w = { workspaceId: workspace };
  return [
    ['newest page', w],
    ['errors', { ...w, status: 'error' }],
    ['one model', { ...w, model: MODELS[1] }],
    ['one key', { ...w, keyId: `key_${workspace}_3` }],
    ['route on 1 % of rows', { ...w, route: 'messages' }],
    ['model nothing matches (worst case)', { ...w, model: 'no-such-model' }],
    ['key nothing matches (worst case)', { ...w, keyId: 'key_none' }],
    ['model nothing matches, one day', { ...w, model: 'no-such-model', since: end - 10 * DAY_MS, until: end - 9 * DAY_MS }],
    ['errors of one model, one week', { ...w, status: 'error', model: MODELS[2], since: end - 7 * DAY_MS }],
  ];
}

async function timePages(opened: OpenedDatabase, workspace: string, end: number, figures: Record<string, number | string>, prefix: string): Promise<void> {
  for (const [label, filter] of pages(workspace, end)) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await listRequestLogs(opened.db, { ...filter, limit: 50 });
      times.push(performance.now() - t0);
    }
    figures[`${prefix}: ${label} (ms, median of 5)`] = round(percentile(times, 50), 2);
  }
  // Page 200 of the newest-first list, reached by following cursors.
  let cursor: string | undefined;
  const t0 = performance.now();
  for (let page = 0; page < 200; page++) cursor = (await listRequestLogs(opened.db, { workspaceId: workspace, cursor, limit: 50 })).rows.at(-1)?.id;
  figures[`${prefix}: 200 pages by cursor (ms a page)`] = round((performance.now() - t0) / 200, 2);
}

export async function run(): Promise<Record<string, number | string>> {
  const figures: Record<string, number | string> = { rows: ROWS };
  const end = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-logs-'));
  const sqlite = await openSqlite(join(dir, 'gateway.db'));
  try {
    figures['SQLite: CPU µs a row inserted (spend thread statement)'] = round(fillSqlite(sqlite, 'ws_big', ROWS, end), 2);
    fillSqlite(sqlite, 'ws_small', ROWS / 10, end);
    // What the hourly sweep does after it deletes: the planner's statistics.
    await analyzeRequestLogs(sqlite.db);
    await timePages(sqlite, 'ws_big', end, figures, 'SQLite');
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (!process.env.DATABASE_URL) return { ...figures, PostgreSQL: 'not run (no DATABASE_URL)' };
  const schema = `bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const pg = await openPostgres(process.env.DATABASE_URL, schema);
  try {
    await fillPostgres(pg, 'ws_big', ROWS, end);
    await fillPostgres(pg, 'ws_small', ROWS / 10, end);
    await analyzeRequestLogs(pg.db);
    await timePages(pg, 'ws_big', end, figures, 'PostgreSQL');
  } finally {
    await sql`drop schema ${sql.id(schema)} cascade`.execute(pg.db);
    await pg.close();
  }
  return figures;
}

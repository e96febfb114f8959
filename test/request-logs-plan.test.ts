// The request log's errors page on SQLite reads the failures' partial index, once the hourly sweep has given the
// planner statistics (analyzeRequestLogs); without them SQLite walks the workspace's rows (bench/README.md, issue 36).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompiledQuery } from 'kysely';
import { analyzeRequestLogs, listRequestLogs, requestLogPage } from '../src/request-logs/repository.js';
import { requestLogId } from '../src/request-logs/ids.js';
import { requestLogColumns } from '../src/store/request-log-table.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway({ channels: {} });
  // 3,000 answered requests, one in a thousand failed, through the spend store as the gateway writes them.
  const start = Date.now() - 3_000_000;
  const rows = Array.from({ length: 3000 }, (_, i) => {
    const failed = i % 1000 === 999;
    const values: Record<string, unknown> = {
      id: requestLogId(start + i * 1000), workspace_id: gw.workspace.id, key_id: 'key_x', created_at: start + i * 1000, route: 'chat_completions',
      method: 'POST', model: 'm', channel: 'c', status: failed ? 502 : 200, failed: failed ? 1 : 0, error_type: null, error_code: null, latency_ms: 1,
      ttft_ms: null, input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, units: 0, cost_micros: 1, currency: 'USD', request_id: `req-${i}`,
      trace_id: null, body_key: null,
    };
    return requestLogColumns.map((c) => values[c]);
  });
  await gw.services.spend.appendLogs!(rows);
});
afterAll(async () => {
  await gw?.close();
});

const plan = async () => {
  const query = requestLogPage(gw.services.db, { workspaceId: gw.workspace.id, status: 'error', limit: 50 }).compile();
  const { rows } = await gw.services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
  return rows.map((r) => r.detail).join('; ');
};

describe('the errors page of the request log on SQLite', () => {
  it('reads the failures index once the planner has statistics, and lists the failures newest first', async () => {
    await analyzeRequestLogs(gw.services.db);
    expect(await plan()).toContain('request_logs_failures');
    const page = await listRequestLogs(gw.services.db, { workspaceId: gw.workspace.id, status: 'error', limit: 50 });
    expect(page.rows.map((r) => r.request_id)).toEqual(['req-2999', 'req-1999', 'req-999']);
    expect(page.hasMore).toBe(false);
  });

  it('keeps the count of rows /metrics reads equal to the rows', async () => {
    const counted = await gw.services.db.selectFrom('request_log_counts').select('row_count').where('workspace_id', '=', gw.workspace.id).executeTakeFirstOrThrow();
    expect(Number(counted.row_count)).toBe(3000);
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { alive, childrenOf, killTree, spawnTwoWorkers, type GatewayProcess } from './kit/process.js';
import { openSqlite } from '../src/store/database.js';
import { issueApiKey } from '../src/auth/keys.js';

const METRICS_TOKEN = 'workers-metrics-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'gateway-workers-'));
let gateway: GatewayProcess | undefined;
let upstream: FakeUpstream | undefined;
afterAll(async () => {
  killTree(gateway);
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The primary's workers: its children running the gateway. */
const workersOf = (pid: number) => childrenOf(pid).filter((child) => {
  try {
    return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('dist/main.js');
  } catch {
    return false;
  }
});

/** The process's JSON log lines (the first start's banner is plain text). */
const logLines = (gw: GatewayProcess) =>
  gw.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; ms?: number });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const completion = { id: 'chatcmpl-w', object: 'chat.completion', created: 1, model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };

describe('server.workers: 2', () => {
  it('serves on one port from two processes: one-time output once, caps and rate limits exact across them, metrics added up, a dead worker replaced, SIGHUP passed on, SIGTERM drains', async () => {
    upstream = await FakeUpstream.start();
    // Slow answers, so the requests of the burst below overlap in both workers.
    upstream.route(async (req, res) => {
      if (!req.path.endsWith('/chat/completions')) return false;
      await sleep(Number(req.body?.metadata?.delay ?? 150));
      json(res, 200, completion);
      return true;
    });
    let url: string;
    ({ gateway, url } = await spawnTwoWorkers(dir, `${upstream.url}/v1`, `rate-limits:\n  perKey:\n    requestsPerMinute: 6\nmetrics:\n  token: ${METRICS_TOKEN}\n`));
    await gateway.waitFor(/"msg":"pid \d+ /);
    // The pid written is the primary's, whose children are the workers.
    const primary = (JSON.parse(readFileSync(join(dir, 'data', 'gateway.pid'), 'utf8')) as { pid: number }).pid;
    await vi.waitFor(() => expect(workersOf(primary)).toHaveLength(2), { timeout: 30_000 });
    // Two malloc arenas a worker unless the operator says otherwise (workerEnvironment in src/cluster.ts, issue 52).
    for (const worker of workersOf(primary)) expect(readFileSync(`/proc/${worker}/environ`, 'utf8').split('\0')).toContain(`MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX || '2'}`);
    expect(gateway.lines.filter((l) => l.includes('first start: created workspace'))).toHaveLength(1);
    expect(gateway.lines.filter((l) => l.includes('one-time link'))).toHaveLength(1);
    // Each startup message once for the process group: the primary says it, workers do not repeat it (issue 49).
    const startup = logLines(gateway).map((l) => l.msg);
    expect(startup.filter((msg, i) => startup.indexOf(msg) !== i)).toEqual([]);
    expect(startup.filter((msg) => /publicUrl is not set/.test(msg))).toHaveLength(1);
    expect(startup.filter((msg) => /Server listening/.test(msg))).toEqual([]);

    // A key capped at five requests' worth (one cent each), rate-limited to six a minute: 20 at once on 20 connections.
    const database = await openSqlite(join(dir, 'data', 'gateway.db'));
    const workspace = await database.db.selectFrom('workspaces').select(['id', 'name']).where('name', '=', 'default').executeTakeFirstOrThrow();
    const capped = await issueApiKey(database.db, workspace as never, { spendCapMicros: 50_000 });
    await database.close();
    const chat = (key: string, delay = 150) =>
      fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ model: 'flat-chat', messages: [{ role: 'user', content: 'hi' }], metadata: { delay } }) });
    const statuses = (await Promise.all(Array.from({ length: 20 }, () => chat(capped.key).then(async (r) => (await r.arrayBuffer(), r.status))))).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(14);
    expect(upstream.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(5);
    // One line per request at info with its milliseconds rounded; none for health probes.
    await Promise.all(Array.from({ length: 5 }, () => fetch(`${url}/healthz`, { headers: { connection: 'close' } }).then((r) => r.arrayBuffer())));
    await vi.waitFor(() => expect(logLines(gateway!).filter((l) => l.msg.startsWith('POST /v1/chat/completions '))).toHaveLength(20));
    for (const line of logLines(gateway).filter((l) => l.msg.startsWith('POST '))) expect(Number.isInteger(line.ms)).toBe(true);

    // /metrics, whichever worker answers, counts every worker's requests.
    await vi.waitFor(async () => {
      const text = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}`, connection: 'close' } }).then((r) => r.text());
      const count = (status: number) => Number(new RegExp(`gateway_requests_total\\{route="chat-completions",method="POST",status="${status}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
      expect([count(200), count(402), count(429)]).toEqual([5, 1, 14]);
    });

    // A worker that dies is replaced; the port keeps answering meanwhile.
    const [victim] = workersOf(primary);
    process.kill(victim, 'SIGKILL');
    await gateway.waitFor(new RegExp(`worker ${victim} exited \\(SIGKILL\\); starting another`));
    await vi.waitFor(() => expect(workersOf(primary).filter((p) => p !== victim)).toHaveLength(2), { timeout: 30_000 });
    expect((await fetch(`${url}/healthz`, { headers: { connection: 'close' } })).status).toBe(200);
    expect(logLines(gateway).filter((l) => /^GET \/(healthz|readyz)/.test(l.msg))).toEqual([]);

    // SIGHUP to the written pid reloads every worker; the primary says so once for the group (issue 49). The worker that
    // replaced the victim may still be starting: it reloads once it listens, said on a line of its own.
    process.kill(primary, 'SIGHUP');
    const reloaded = () => logLines(gateway!).flatMap((l) => /^reload in (\d) of 2 worker\(s\): nothing changed \(files and environment as before\)$/.exec(l.msg)?.[1] ?? []).map(Number);
    await vi.waitFor(() => expect(reloaded().reduce((a, b) => a + b, 0)).toBe(2), { timeout: 30_000 });
    expect(logLines(gateway).filter((l) => /^reload(ed)? (of|in) /.test(l.msg))).toHaveLength(reloaded().length);

    // SIGTERM drains: requests in flight in any worker are answered, then every process exits.
    const workers = workersOf(primary);
    const { key } = await (async () => {
      const db = await openSqlite(join(dir, 'data', 'gateway.db'));
      const issued = await issueApiKey(db.db, workspace as never, {});
      await db.close();
      return issued;
    })();
    const inFlight = [chat(key, 1500), chat(key, 1500)];
    await vi.waitFor(() => expect(upstream!.requests.filter((r) => r.body?.metadata?.delay === 1500)).toHaveLength(2));
    process.kill(primary, 'SIGTERM');
    expect((await Promise.all(inFlight)).map((r) => r.status)).toEqual([200, 200]);
    await vi.waitFor(() => expect([primary, ...workers].filter(alive)).toEqual([]), { timeout: 20_000 });
  }, 180_000);
});

// Request logs through HTTP: a mix of requests (two keys, two models, a 400, an upstream 500, a stream, a Messages call)
// listed by the admin API, the dashboard's Logs page and its CSV export as the clients saw them, workspace by workspace;
// bodies only where capture is on, never a key or any other secret (by name or by shape).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { issueApiKey, type IssuedKey } from '../src/auth/keys.js';
import { readBodies } from '../src/request-logs/bodies.js';
import { sweepRequestLogs } from '../src/request-logs/sweeper.js';
import { commands as auditCommands } from '../src/cli/admin/audit.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { addUser, DashboardClient } from './kit/dashboard.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { EMBEDDING_INPUT, FakeFamilies } from './kit/fake-families.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import type { Workspace } from '../src/store/workspaces.js';

const models = `  - id: fake-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
  - id: flat-chat
    upstream: upstream-chat
    kind: chat
    price: { perRequest: 0.01 }
  - id: broken-chat
    upstream: upstream-broken
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
`;
const ops = newAdminToken();
const METRICS_TOKEN = 'a-metrics-token-of-32-characters';
const PROMPT = 'the quiet prompt words 7731';
const CAPTURED_PROMPT = 'the captured prompt words 4419';

let fake: FakeUpstream;
let gw: TestGateway;
let api: AdminApi;
let a: IssuedKey;
let b: IssuedKey;
let captureWs: Workspace;
let captureKey: IssuedKey;
/** What each client saw, oldest first. */
const seen: { requestId: string; status: number; model: string; cost: number; keyId: string }[] = [];

async function post(key: string, path: string, body: object) {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, requestId: res.headers.get('x-request-id')!, text };
}

async function chat(key: IssuedKey, model: string, more: object = {}, path = '/v1/chat/completions') {
  const body = { model, max_tokens: 16, messages: [{ role: 'user', content: PROMPT }], ...more };
  const res = await post(key.key, path, body);
  let cost = 0;
  if (res.status === 200 && !('stream' in more) && path.endsWith('/messages')) cost = JSON.parse(res.text).cost?.amount ?? 0;
  else if (res.status === 200 && !('stream' in more)) cost = JSON.parse(res.text).cost?.amount ?? 0;
  if ('stream' in more) cost = Number(/"cost":\{"amount":([0-9.e-]+)/.exec(res.text)?.[1] ?? 0);
  seen.push({ requestId: res.requestId, status: res.status, model, cost, keyId: key.id });
  return res;
}

beforeAll(async () => {
  fake = await FakeUpstream.start();
  fake.route((req, res) => {
    if ((req.body as { model?: string } | undefined)?.model !== 'upstream-broken') return false;
    res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'upstream broke', type: 'server_error' } }));
    return true;
  });
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) },
    listen: true,
    env: { LOGS_METRICS_TOKEN: METRICS_TOKEN },
    extraConfig: `metrics:\n  token: \${LOGS_METRICS_TOKEN}\nadmin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\nrequestLogs:\n  workspaces:\n    capturing:\n      captureBodies: true\n`,
  });
  api = await adminApi(gw.url, ops.token);
  a = await issueApiKey(gw.services.db, gw.workspace, { name: 'alpha' });
  b = await issueApiKey(gw.services.db, gw.workspace, { name: 'beta' });
  captureWs = await gw.newWorkspace('capturing');
  captureKey = await issueApiKey(gw.services.db, captureWs, { name: 'capture' });
  await chat(a, 'fake-chat');
  await chat(b, 'flat-chat');
  await chat(a, 'fake-chat', { messages: 'not a list' });
  await chat(a, 'broken-chat');
  await chat(b, 'fake-chat', { stream: true, stream_options: { include_usage: true } });
  await chat(a, 'fake-chat', {}, '/v1/messages');
  // A row is handed to the spend store when its settlement is known, which may be just after the client read its
  // answer (settlements commit in batches): the log is complete within a batch or two (the write lag /metrics shows).
  await vi.waitFor(async () => expect((await list()).data).toHaveLength(seen.length), { timeout: 5_000, interval: 20 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const list = async (query = '') => (await api('GET', `/workspaces/${gw.workspace.id}/requests${query}`)).body;

describe('the admin API', () => {
  it('lists every request newest first with the status, model and cost the clients saw', async () => {
    const page = await list();
    expect(page.next_cursor).toBeNull();
    const expected = [...seen].reverse();
    expect(page.data.map((r: { request_id: string }) => r.request_id)).toEqual(expected.map((s) => s.requestId));
    for (const [i, row] of page.data.entries()) {
      expect(row.status).toBe(expected[i].status);
      expect(row.model).toBe(expected[i].model);
      expect(row.key_id).toBe(expected[i].keyId);
      expect(row.cost).toBeCloseTo(expected[i].cost, 9);
      expect(row.latency_ms).toBeGreaterThanOrEqual(0);
    }
    expect(expected.map((s) => s.status)).toEqual([200, 200, 400, 502, 200, 200].reverse());
    const [messages, stream, broken, invalid, , first] = page.data;
    expect(messages.route).toBe('messages');
    expect(stream.ttft_ms).toBeGreaterThanOrEqual(0);
    expect(stream.output_tokens).toBeGreaterThan(0);
    expect(broken.error_code).toBeTruthy();
    expect(invalid).toMatchObject({ error_type: 'invalid_request_error', model: 'fake-chat', cost: 0 });
    expect(first).toMatchObject({ key_name: 'alpha', channel: 'fake', input_tokens: 12, output_tokens: 7, ttft_ms: null });
  });

  it('filters by status, model, key, route and time', async () => {
    expect((await list('?status=error')).data.map((r: { status: number }) => r.status)).toEqual([502, 400]);
    expect((await list('?status=success')).data).toHaveLength(4);
    expect((await list('?model=flat-chat')).data.map((r: { key_id: string }) => r.key_id)).toEqual([b.id]);
    expect((await list(`?key_id=${b.id}`)).data).toHaveLength(2);
    expect((await list('?route=messages')).data).toHaveLength(1);
    expect((await list(`?since=${new Date(Date.now() + 60_000).toISOString()}`)).data).toHaveLength(0);
    expect((await list(`?until=${new Date(Date.now() + 60_000).toISOString()}&since=2020-01-01`)).data).toHaveLength(6);
    expect((await api('GET', `/workspaces/${gw.workspace.id}/requests?since=yesterday`)).status).toBe(400);
  });

  it('pages by cursor without duplicates', async () => {
    const ids: string[] = [];
    let cursor = '';
    for (let pages = 0; pages < 10; pages++) {
      const page = await list(`?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      ids.push(...page.data.map((r: { id: string }) => r.id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    expect(ids).toEqual([...ids].sort().reverse());
  });

  it("shows another workspace's owner nothing of this one", async () => {
    const other = await gw.newWorkspace('other');
    await addUser(gw.services, 'other-owner@example.com', [[other, 'owner']]);
    const client = new DashboardClient(gw.url);
    await client.signIn('other-owner@example.com');
    const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await api('GET', `/workspaces/${gw.workspace.id}/requests`, { token: null, headers: { cookie } });
    expect(res.status).toBe(404);
    const own = await api('GET', `/workspaces/${other.id}/requests`, { token: null, headers: { cookie } });
    expect(own).toMatchObject({ status: 200, body: { data: [] } });
    const page = await client.get('/dashboard/logs');
    expect(page.status).toBe(200);
    for (const s of seen) expect(page.html).not.toContain(s.requestId);
  });
});

describe('the Logs page', () => {
  let client: DashboardClient;
  beforeAll(async () => {
    await addUser(gw.services, 'member@example.com', [[gw.workspace, 'member']]);
    client = new DashboardClient(gw.url);
    await client.signIn('member@example.com');
  });

  it('lists the requests newest first with a link to each detail, and never the prompt', async () => {
    const page = await client.get('/dashboard/logs');
    expect(page.status).toBe(200);
    expect(page.html).toContain('href="/dashboard/logs"');
    const order = [...seen].reverse().map((s) => s.requestId);
    const rowIds = [...page.html.matchAll(/<tr id="(log_[0-9a-f]+)"/g)].map((m) => m[1]);
    expect(rowIds).toHaveLength(6);
    const { data } = await list();
    expect(rowIds).toEqual(data.map((r: { id: string }) => r.id));
    expect(data.map((r: { request_id: string }) => r.request_id)).toEqual(order);
    expect(page.html).not.toContain(PROMPT);
    const filtered = await client.get(`/dashboard/logs?status=error&key=${a.id}`);
    expect([...filtered.html.matchAll(/<tr id="(log_[0-9a-f]+)"/g)]).toHaveLength(2);
    // No guardrail ran on these requests: the verdict filter keeps none, and the form shows what it filters by.
    const guarded = await client.get('/dashboard/logs?guardrail=block');
    expect([...guarded.html.matchAll(/<tr id="(log_[0-9a-f]+)"/g)]).toHaveLength(0);
    expect(guarded.html).toContain('<option value="block" selected>blocked</option>');
  });

  it("opens a row's detail with its request id, tokens and cost", async () => {
    const first = (await list(`?status=success&model=fake-chat&key_id=${a.id}&route=chat-completions`)).data[0];
    const page = await client.get(`/dashboard/logs/${first.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain(first.request_id);
    expect(page.html).toMatch(/id="input-tokens">12</);
    expect(page.html).toMatch(/id="output-tokens">7</);
    expect(page.html).toContain(`${first.cost} USD`);
    expect(page.html).not.toContain(PROMPT);
    expect((await client.get('/dashboard/logs/log_0000000000000000000000000000')).status).toBe(404);
  });

  it('exports the filtered rows as CSV', async () => {
    const res = await client.get('/dashboard/logs.csv?status=success');
    expect(res.headers.get('content-type')).toContain('text/csv');
    const [header, ...lines] = res.html.trim().split('\r\n');
    const columns = header.split(',');
    expect(columns).toEqual(expect.arrayContaining(['request_id', 'status', 'model', 'cost']));
    const rows = lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [columns[i], v])));
    const expected = [...seen].reverse().filter((s) => s.status < 400);
    expect(rows.map((r) => r.request_id)).toEqual(expected.map((s) => s.requestId));
    for (const [i, row] of rows.entries()) {
      expect(row.model).toBe(expected[i].model);
      expect(Number(row.cost)).toBeCloseTo(expected[i].cost, 9);
      expect(row.cost).toMatch(/^\d+(\.\d+)?$/);
    }
    expect(res.html).not.toContain(PROMPT);
  });

  it('answers Accept: text/csv with every matching row, the columns of the dashboard export', async () => {
    const res = await fetch(`${gw.url}/admin/v1/workspaces/${gw.workspace.id}/requests?status=success&limit=1`, { headers: { authorization: `Bearer ${ops.token}`, accept: 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/csv');
    const text = await res.text();
    expect(text).toBe((await client.get('/dashboard/logs.csv?status=success')).html);
    // limit is the size of a read: every success is there, newest first, as the JSON pages list them.
    const { data } = await list('?status=success');
    expect(text.trim().split('\r\n').slice(1).map((line) => line.split(',')[1])).toEqual(data.map((r: { request_id: string }) => r.request_id));
  });

  it('keeps JSON for a client that does not ask for CSV', async () => {
    const res = await fetch(`${gw.url}/admin/v1/workspaces/${gw.workspace.id}/requests`, { headers: { authorization: `Bearer ${ops.token}`, accept: 'application/json' } });
    expect(res.headers.get('content-type')).toContain('application/json');
  });
});

describe('npm run admin -- logs', () => {
  const cli = async (values: Record<string, string | boolean>) => {
    const lines: string[] = [];
    const command = auditCommands.find((c) => c.name === 'logs')!;
    await command.run({ db: gw.services.db, config: gw.services.config, positionals: [], values, print: (l) => lines.push(l) });
    return lines;
  };

  it('prints the same rows as the admin API, filtered', async () => {
    const { data } = await list('?status=error');
    const [page] = (await cli({ workspace: 'test', status: 'error', json: true })).map((l) => JSON.parse(l));
    expect(page.data).toEqual(data);
    const lines = await cli({ workspace: 'test', limit: '2' });
    expect(lines[0]).toContain(seen[seen.length - 1].requestId);
    expect(lines[2]).toMatch(/^more: --cursor log_/);
  });

  it('prints the CSV export with --csv', async () => {
    const csv = await (await fetch(`${gw.url}/admin/v1/workspaces/${gw.workspace.id}/requests?status=error`, { headers: { authorization: `Bearer ${ops.token}`, accept: 'text/csv' } })).text();
    expect(csv.split('\r\n').length).toBeGreaterThan(2);
    expect((await cli({ workspace: 'test', status: 'error', csv: true })).map((l) => `${l}\r\n`).join('')).toBe(csv);
  });
});

describe('/metrics', () => {
  it("shows the log's size and write lag", async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(Number(/^gateway_request_logs_rows (\d+)/m.exec(res.body)?.[1])).toBeGreaterThanOrEqual(6);
    expect(Number(/^gateway_request_logs_written_total (\d+)/m.exec(res.body)?.[1])).toBeGreaterThanOrEqual(6);
    // One observation a batch (the rows of a turn of the event loop).
    expect(Number(/^gateway_request_log_write_lag_seconds_count (\d+)/m.exec(res.body)?.[1])).toBeGreaterThanOrEqual(1);
    expect(res.body).toMatch(/^gateway_request_logs_dropped_total 0/m);
  });
});

describe('bodies', () => {
  it('are captured where the config turns capture on, shown in the detail, with no key anywhere', async () => {
    const res = await post(captureKey.key, '/v1/chat/completions', { model: 'fake-chat', max_tokens: 16, messages: [{ role: 'user', content: CAPTURED_PROMPT }], api_key: captureKey.key });
    expect(res.status).toBe(200);
    await addUser(gw.services, 'capture-owner@example.com', [[captureWs, 'owner']]);
    const client = new DashboardClient(gw.url);
    await client.signIn('capture-owner@example.com');
    await gw.services.spend.commitQueued?.();
    // The row is written once its bodies are stored: wait for it rather than for a time.
    let rows: { id: string; bodies_captured: boolean }[] = [];
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      rows = (await api('GET', `/workspaces/${captureWs.id}/requests`)).body.data;
      if (!rows.length) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(rows).toHaveLength(1);
    expect(rows[0].bodies_captured).toBe(true);
    const page = await client.get(`/dashboard/logs/${rows[0].id}`);
    expect(page.html).toContain(CAPTURED_PROMPT);
    expect(page.html).toContain('Hello from the fake upstream.');
    expect(page.html).toContain('[REDACTED]');
    expect(page.html).not.toContain(captureKey.key);
    const csv = await client.get('/dashboard/logs.csv');
    expect(csv.html).not.toContain(captureKey.key);
  });

  it('keep no secret by name or by shape, at any depth and in any case, while usage fields stay', async () => {
    const other = await issueApiKey(gw.services.db, captureWs, { name: 'another' });
    const secrets = {
      aws: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      session: 'FwoGZXIvYXdzEBYaDH-session-token-value',
      nested: 'sk-proj-nested0123456789abcdefABCDEF',
      password: 'correct-horse-battery-staple',
      bearer: 'lowercase.bearer.token.7781',
      akia: 'akiaiosfodnn7example',
      upper: 'SK-UPPERCASEKEY0123456789ABCDEF',
      header: 'header-secret-value-5512',
      answered: 'sk-live-ANSWERED0123456789abcdef',
      answeredField: 'answer-field-secret-9931',
    };
    // The upstream's answer carries secrets too: a secret-named field, and a key in the text.
    fake.route((req, res) => {
      if ((req.body as { user?: string } | undefined)?.user !== other.key) return false;
      const answer = { id: 'chatcmpl-secret', object: 'chat.completion', created: 1, model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: `use ${secrets.answered}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }, service_credentials: secrets.answeredField };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      return true;
    });
    const body = {
      model: 'fake-chat',
      max_tokens: 16,
      user: other.key,
      metadata: { openai_api_key: secrets.nested, aws_secret_access_key: secrets.aws, input_tokens: '12', promptTokenCount: '3' },
      messages: [{ role: 'user', content: `call it with bearer ${secrets.bearer}, key id ${secrets.akia}, and ${secrets.upper}` }],
      tools: [{ type: 'function', function: { name: 'sign_in', parameters: { type: 'object', properties: { login: { type: 'object', properties: { sessionToken: { type: 'string', default: secrets.session }, Password: { type: 'string', default: secrets.password } } } } } } }],
    };
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${captureKey.key}`, 'content-type': 'application/json', 'x-upstream-secret': secrets.header }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    await res.text();
    const requestId = res.headers.get('x-request-id')!;
    let row: { id: string; request_id: string } | undefined;
    for (let i = 0; i < 200 && !row; i++) {
      await gw.services.spend.commitQueued?.();
      row = (await api('GET', `/workspaces/${captureWs.id}/requests`)).body.data.find((r: { request_id: string }) => r.request_id === requestId);
      if (!row) await new Promise((resolve) => setImmediate(resolve));
    }
    const stored = JSON.stringify(await readBodies(gw.services.blobs, `${captureWs.id}/${row!.id}`));
    await addUser(gw.services, 'capture-admin@example.com', [[captureWs, 'admin']]);
    const client = new DashboardClient(gw.url);
    await client.signIn('capture-admin@example.com');
    const page = await client.get(`/dashboard/logs/${row!.id}`);
    expect(page.status).toBe(200);
    const csv = await client.get('/dashboard/logs.csv');
    expect(csv.html).toContain(requestId);
    for (const [where, text] of Object.entries({ stored, page: page.html, csv: csv.html })) {
      for (const secret of [...Object.values(secrets), other.key, captureKey.key]) expect(text, `${where}: ${secret}`).not.toContain(secret);
    }
    // What a name match must not eat: counts named after tokens, and the rest of the request.
    const request = JSON.parse(JSON.parse(stored).request.body);
    expect(request).toMatchObject({ model: 'fake-chat', max_tokens: 16, user: '[REDACTED]', metadata: { openai_api_key: '[REDACTED]', aws_secret_access_key: '[REDACTED]', input_tokens: '12', promptTokenCount: '3' } });
    expect(request.messages[0].content).toBe('call it with bearer [REDACTED], key id [REDACTED], and [REDACTED]');
    expect(request.tools[0].function.parameters.properties.login.properties).toEqual({ sessionToken: '[REDACTED]', Password: '[REDACTED]' });
    expect(JSON.parse(stored).request.headers['x-upstream-secret']).toBe('[REDACTED]');
    expect(JSON.parse(JSON.parse(stored).response.body)).toMatchObject({ choices: [{ message: { content: 'use [REDACTED]' } }], usage: { prompt_tokens: 12, completion_tokens: 7 } });
  });

  it('expire with their row after retentionDays', async () => {
    const before = (await api('GET', `/workspaces/${captureWs.id}/requests`)).body.data;
    expect(before).toHaveLength(2);
    const key = `${captureWs.id}/${before[0].id}`;
    expect(await gw.services.blobs.stat(key)).toBeDefined();
    const counted = () => gw.services.db.selectFrom('request_log_counts').selectAll().orderBy('workspace_id').execute();
    const counts = async () => {
      const rows = await gw.services.db.selectFrom('request_logs').select(['workspace_id', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('workspace_id').orderBy('workspace_id').execute();
      return rows.map((r) => ({ workspace_id: r.workspace_id, row_count: Number(r.n) }));
    };
    // Each workspace's kept count is its rows, before the sweep and after it (what /metrics reads).
    expect((await counted()).map((c) => ({ ...c, row_count: Number(c.row_count) }))).toEqual(await counts());
    const removed = await sweepRequestLogs(gw.services, Date.now() + 31 * 86_400_000);
    expect(removed).toBeGreaterThanOrEqual(8);
    expect((await counted()).every((c) => Number(c.row_count) === 0)).toBe(true);
    expect(await counts()).toEqual([]);
    expect((await api('GET', `/workspaces/${captureWs.id}/requests`)).body.data).toHaveLength(0);
    expect(await gw.services.blobs.stat(key)).toBeUndefined();
  });
});

describe('an endpoint family of the catalogue, and requestLogs.membersSee: false', () => {
  let families: FakeFamilies;
  let other: TestGateway;
  beforeAll(async () => {
    families = await FakeFamilies.start();
    other = await startGateway({
      listen: true,
      extraConfig: 'requestLogs:\n  membersSee: false\n',
      channels: { flat: `id: flat\nprotocol: openai-chat\nbaseUrl: ${families.url}/v1\nmodels:\n  - id: flat-embed\n    upstream: text-embedding-3-small\n    kind: embedding\n    price: { perRequest: 0.01 }\n` },
    });
  });
  afterAll(async () => {
    await other?.close();
    await families?.close();
  });

  it('logs an embeddings call with its cost, and shows it to an owner but not to a member', async () => {
    const res = await fetch(`${other.url}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flat-embed', input: EMBEDDING_INPUT }) });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    await addUser(other.services, 'owner@example.com', [[other.workspace, 'owner']]);
    await addUser(other.services, 'member@example.com', [[other.workspace, 'member']]);
    const owner = new DashboardClient(other.url);
    await owner.signIn('owner@example.com');
    const page = await owner.get('/dashboard/logs?route=embeddings');
    expect(page.status).toBe(200);
    expect(page.html).toContain('flat-embed');
    expect(page.html).toContain('0.01 USD');
    const csv = await owner.get('/dashboard/logs.csv');
    expect(csv.html).toContain(requestId);
    const member = new DashboardClient(other.url);
    await member.signIn('member@example.com');
    expect((await member.get('/dashboard/logs')).status).toBe(403);
    expect((await member.get('/dashboard/logs.csv')).status).toBe(403);
    expect((await member.get('/dashboard/files')).html).not.toContain('href="/dashboard/logs"');
  });
});

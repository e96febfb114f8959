import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FakeUpstream } from './kit/fake-upstream.js';
import { compiled } from './kit/compiled.js';
import { chatChannel, repoRoot, startGateway, type TestGateway } from './kit/gateway.js';
import { issueApiKey, type IssuedKey } from '../src/auth/keys.js';
import { commands } from '../src/cli/admin/billing.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

const models = `  - id: fake-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
  - id: flat-chat
    upstream: upstream-chat
    kind: chat
    price: { perRequest: 0.01 }
`;

let fake: FakeUpstream;
let gw: TestGateway;
let a: IssuedKey;
let b: IssuedKey;
let today: string;
const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
const threeDaysAgo = Math.floor(Date.now() / 1000) - 3 * 86_400;

const chat = (key: string, model: string) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
const usage = (key: string, query = '') => gw.app.inject({ method: 'GET', url: `/api/v1/usage${query}`, headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) } });
  const workspace = await gw.newWorkspace('reporting');
  a = await issueApiKey(gw.services.db, workspace);
  b = await issueApiKey(gw.services.db, workspace);
  const first = await chat(a.key, 'fake-chat');
  await chat(a.key, 'fake-chat');
  await chat(b.key, 'flat-chat');
  await chat(gw.key, 'flat-chat'); // another workspace: never in this report
  today = day((await ledgerForRequest(gw.services.db, first.headers['x-request-id'] as string))[0].created_at);
  await gw.services.spend.settle('rsv_history', {
    request_id: 'req_history', workspace_id: workspace.id, key_id: a.id, model: 'fake-chat', channel: 'fake', kind: 'chat',
    input_tokens: 100, output_tokens: 10, cached_input_tokens: 0, units: 0, cost_micros: 300, currency: 'USD', price: '{}', created_at: threeDaysAgo,
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

describe('GET /v1/usage', () => {
  it("reports the key's own workspace grouped by day, model and key, with tokens and cost", async () => {
    const res = await usage(a.key);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.object).toBe('usage');
    expect(body.data).toEqual([
      { date: day(threeDaysAgo), model: 'fake-chat', key_id: a.id, requests: 1, input_tokens: 100, output_tokens: 10, cached_input_tokens: 0, units: 0, cost: { amount: 0.0003, currency: 'USD' }, cache_hits: 0, cache_saved: 0 },
      // 12 input at 2.0/M + 7 output at 10.0/M = 94 micro-USD each
      { date: today, model: 'fake-chat', key_id: a.id, requests: 2, input_tokens: 24, output_tokens: 14, cached_input_tokens: 0, units: 0, cost: { amount: 0.000188, currency: 'USD' }, cache_hits: 0, cache_saved: 0 },
      { date: today, model: 'flat-chat', key_id: b.id, requests: 1, input_tokens: 12, output_tokens: 7, cached_input_tokens: 0, units: 0, cost: { amount: 0.01, currency: 'USD' }, cache_hits: 0, cache_saved: 0 },
    ]);
    expect(body.totals).toEqual([{ currency: 'USD', requests: 4, input_tokens: 136, output_tokens: 31, cost: { amount: 0.010488, currency: 'USD' }, cache_hits: 0, cache_saved: 0 }]);
  });

  it('shows every key of the workspace the same report', async () => {
    expect((await usage(b.key)).json().data).toEqual((await usage(a.key)).json().data);
  });

  it('filters by since and until dates', async () => {
    const since = (await usage(a.key, `?since=${today}`)).json();
    expect(since.data.map((r: { date: string }) => r.date)).toEqual([today, today]);
    const until = (await usage(a.key, `?until=${day(threeDaysAgo)}`)).json();
    expect(until.data.map((r: { requests: number }) => r.requests)).toEqual([1]);
  });

  it('answers on /v1/usage too and counts nothing for a fresh workspace', async () => {
    const key = await gw.newKey({ workspace: await gw.newWorkspace('quiet') });
    const res = await gw.app.inject({ method: 'GET', url: '/v1/usage', headers: { 'x-api-key': key } });
    expect(res.json()).toMatchObject({ data: [], totals: [] });
  });

  it('refuses a malformed date and a range that ends before it starts with 400', async () => {
    const bad = await usage(a.key, '?since=yesterday');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'invalid_date', param: 'since' });
    expect((await usage(a.key, '?since=2025-02-01&until=2025-01-01')).statusCode).toBe(400);
  });

  it('requires a key', async () => {
    expect((await gw.app.inject({ method: 'GET', url: '/api/v1/usage' })).statusCode).toBe(401);
  });
});

describe('admin usage and caps', () => {
  it('prints the usage of a workspace since a date', async () => {
    const lines: string[] = [];
    const usageCommand = commands.find((c) => c.name === 'usage')!;
    await usageCommand.run({ db: gw.services.db, config: gw.services.config, positionals: [], values: { workspace: 'reporting', since: today }, print: (l) => lines.push(l) });
    expect(lines).toEqual([
      `${today}  fake-chat  ${a.id}  requests=2  in=24  out=14  cost=0.000188 USD`,
      `${today}  flat-chat  ${b.id}  requests=1  in=12  out=7  cost=0.01 USD`,
      'total  requests=3  cost=0.010188 USD',
      'workspace reporting: spend cap none, spent in all 0.010488 USD',
    ]);
  });

  it('sets a key cap from the admin CLI process while the gateway runs, applied to its next request', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 0 });
    expect((await chat(key.key, 'flat-chat')).statusCode).toBe(402);
    const { stdout } = await promisify(execFile)(process.execPath, [compiled('cli/admin'), 'key', 'update', key.id, '--spend-cap', '0.01', '--config', join(gw.dir, 'config.yaml')], { cwd: repoRoot });
    expect(stdout.trim()).toBe(`key ${key.id}: spend cap 0.01 USD`);
    expect((await chat(key.key, 'flat-chat')).statusCode).toBe(200);
    expect((await chat(key.key, 'flat-chat')).statusCode).toBe(402);
  });
});

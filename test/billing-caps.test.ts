import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway, testModels } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';
import { commands } from '../src/cli/admin/billing.js';
import { setWorkspaceSpendCap, type Workspace } from '../src/store/workspaces.js';

// One cent per request and nothing per token: the worst-case estimate equals the actual cost,
// so a cap of 0.10 admits exactly ten requests.
const flatModels = testModels.flatChat;

let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: flatModels }) } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const chat = (key: string) =>
  gw.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model: 'flat-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });

async function capped(capMicros: number | null, workspace: Workspace = gw.workspace) {
  return issueApiKey(gw.services.db, workspace, { spendCapMicros: capMicros });
}

async function ledgerSum(column: 'key_id' | 'workspace_id', id: string) {
  const row = await gw.services.db.selectFrom('usage_ledger').select((eb) => [eb.fn.sum<number>('cost_micros').as('sum'), eb.fn.countAll<number>().as('rows')]).where(column, '=', id).executeTakeFirstOrThrow();
  return { sum: Number(row.sum ?? 0), rows: Number(row.rows) };
}

const runCommand = (name: string, positionals: string[], values: Record<string, string>) => {
  const lines: string[] = [];
  return commands.find((c) => c.name === name)!.run({ db: gw.services.db, config: gw.services.config, positionals, values, print: (l) => lines.push(l) }).then(() => lines);
};

describe('spending caps', () => {
  it('admits exactly the requests a cap covers out of 100 concurrent ones, and the ledger sums to the cap', async () => {
    const key = await capped(100_000);
    const before = fake.requests.length;
    const results = await Promise.all(Array.from({ length: 100 }, () => chat(key.key)));
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(90);
    expect(fake.requests.length - before).toBe(10);
    expect(await ledgerSum('key_id', key.id)).toEqual({ sum: 100_000, rows: 10 });
    expect(await gw.services.spend.balance('key', key.id, Date.now())).toEqual({ spentMicros: 100_000, reservedMicros: 0 });
  });

  it('answers 402 naming the key cap, its amount, what is spent and reserved, without calling the upstream', async () => {
    const key = await capped(10_000);
    expect((await chat(key.key)).statusCode).toBe(200);
    const before = fake.requests.length;
    const res = await chat(key.key);
    expect(res.statusCode).toBe(402);
    expect(fake.requests.length).toBe(before);
    const { error } = res.json();
    expect(error).toMatchObject({ type: 'insufficient_quota', code: 'spend_cap_exhausted' });
    expect(error.cap).toEqual({ scope: 'key', id: key.id, model: null, period: 'total', amount: 0.01, spent: 0.01, reserved: 0, requested: 0.01, currency: 'USD', resets_at: null });
    expect(error.message).toContain('cap 0.01 USD');
    expect(error.message).toContain('it does not reset');
    expect(res.headers['x-budget-reset']).toBeUndefined();
  });

  it('counts requests in flight as reserved until they settle', async () => {
    const key = await capped(15_000);
    let finish!: () => void;
    const upstreamHolding = new Promise<void>((reached) => {
      fake.next({
        kind: 'handler',
        fn: (_req, res: ServerResponse) =>
          new Promise<void>((done) => {
            finish = () => {
              res.writeHead(200, { 'content-type': 'application/json' });
              res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'late' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
              done();
            };
            reached();
          }),
      });
    });
    const first = chat(key.key);
    await upstreamHolding;
    const second = await chat(key.key);
    expect(second.statusCode).toBe(402);
    expect(second.json().error.cap).toMatchObject({ spent: 0, reserved: 0.01 });
    finish();
    expect((await first).statusCode).toBe(200);
    expect(await gw.services.spend.balance('key', key.id, Date.now())).toEqual({ spentMicros: 10_000, reservedMicros: 0 });
  });

  it('checks the workspace cap across all its keys', async () => {
    const workspace = await gw.newWorkspace('capped-team');
    await setWorkspaceSpendCap(gw.services.db, workspace.id, 30_000);
    const [a, b] = [await capped(null, workspace), await capped(null, workspace)];
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => chat(i % 2 ? a.key : b.key)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(3);
    const refused = results.find((r) => r.statusCode === 402)!;
    expect(refused.json().error.cap).toMatchObject({ scope: 'workspace', id: workspace.id, amount: 0.03, spent: expect.any(Number), currency: 'USD' });
    expect(refused.json().error.message).toContain("this key's workspace");
    expect(await ledgerSum('workspace_id', workspace.id)).toEqual({ sum: 30_000, rows: 3 });
  });

  it('applies a key cap raised with the admin command to the next request, without a restart', async () => {
    const key = await capped(10_000);
    expect((await chat(key.key)).statusCode).toBe(200);
    expect((await chat(key.key)).statusCode).toBe(402);
    expect(await runCommand('key update', [key.id], { 'spend-cap': '0.02' })).toEqual([`key ${key.id}: spend cap 0.02 USD`]);
    expect((await chat(key.key)).statusCode).toBe(200);
    expect((await chat(key.key)).statusCode).toBe(402);
    await runCommand('key update', [key.id], { 'spend-cap': 'none' });
    expect((await chat(key.key)).statusCode).toBe(200);
  });

  it('applies a workspace cap set with the admin command to the next request', async () => {
    const workspace = await gw.newWorkspace('cli-capped');
    const key = await capped(null, workspace);
    expect((await chat(key.key)).statusCode).toBe(200);
    await runCommand('workspace update', ['cli-capped'], { 'spend-cap': '0.01' });
    const res = await chat(key.key);
    expect(res.statusCode).toBe(402);
    expect(res.json().error.cap).toMatchObject({ scope: 'workspace', amount: 0.01, spent: 0.01 });
    await expect(runCommand('workspace update', ['cli-capped'], { 'spend-cap': 'lots' })).rejects.toThrow(/spend-cap must be an amount/);
  });

  it('counts a charge settled without a live reservation (a task billed after a restart) against the caps', async () => {
    const key = await capped(20_000);
    await gw.services.spend.settle('rsv_lost_in_restart', {
      request_id: 'req_task_completed', workspace_id: gw.workspace.id, key_id: key.id, model: 'flat-chat', channel: 'fake', kind: 'chat',
      input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, units: 1, cost_micros: 15_000, currency: 'USD', price: '{}', created_at: Math.floor(Date.now() / 1000),
    });
    const res = await chat(key.key);
    expect(res.statusCode).toBe(402);
    expect(res.json().error.cap).toMatchObject({ spent: 0.015, reserved: 0 });
  });

  it('refuses a request whose worst case alone passes the cap', async () => {
    const key = await capped(5_000);
    const res = await chat(key.key);
    expect(res.statusCode).toBe(402);
    expect(res.json().error.cap).toMatchObject({ amount: 0.005, spent: 0, reserved: 0, requested: 0.01 });
  });
});

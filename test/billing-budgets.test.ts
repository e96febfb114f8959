// Budgets that reset: daily, weekly and monthly caps on keys and workspaces, caps on one model, exact at midnight.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';
import { commands } from '../src/cli/admin/billing.js';
import { commands as keyCommands } from '../src/cli/admin/keys.js';
import { spendInPeriod } from '../src/billing/budgets.js';
import { setModelCap } from '../src/store/budgets.js';
import { setWorkspaceSpendCap, type Workspace } from '../src/store/workspaces.js';

// One cent a request on either model, nothing per token: the worst case equals the cost, so a cap of 0.50 admits 50.
const models = testModels.twoFlatChats;

/** 2026-11-23 in UTC, as Unix milliseconds at the given time of day. */
const nov23 = (time: string) => Date.parse(`2026-11-23T${time}Z`);
const MIDNIGHT = nov23('00:00:00.000') + 86_400_000;

/** The gateway's clock: the tests move it; `tick` advances it by 1 ms on every read once set. */
const clock = { at: nov23('12:00:00.000'), tick: 0 };
const now = () => {
  const at = clock.at;
  clock.at += clock.tick;
  return at;
};

let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) }, overrides: { now } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const chat = (app: FastifyInstance, key: string, model = 'flat-chat') =>
  app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] } });

const run = (list: typeof commands, name: string, positionals: string[], values: Record<string, string>) => {
  const lines: string[] = [];
  return list.find((c) => c.name === name)!.run({ db: gw.services.db, config: gw.services.config, positionals, values, print: (l) => lines.push(l) }).then(() => lines);
};

const spentOn = (scope: 'key' | 'workspace', id: string, period: 'daily' | 'weekly' | 'monthly' | 'total', at: number, model?: string) =>
  spendInPeriod(gw.services.db, gw.services.calendar, scope, id, { period, at, model }).then((s) => s.spentMicros);

describe('budgets that reset', () => {
  it('refuses a key past its daily cap with a 402 naming the budget and when it resets, and admits it again after midnight', async () => {
    clock.at = nov23('22:00:00.000');
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 20_000, spendCapPeriod: 'daily' });
    expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    const refused = await chat(gw.app, key.key);
    expect(refused.statusCode).toBe(402);
    expect(refused.headers['x-budget-reset']).toBe('2026-11-24T00:00:00.000Z');
    const { error } = refused.json();
    expect(error).toMatchObject({ type: 'insufficient_quota', code: 'spend_cap_exhausted' });
    expect(error.message).toContain('daily spending cap of this API key is exhausted');
    expect(error.message).toContain('it resets at 2026-11-24T00:00:00.000Z');
    expect(error.cap).toEqual({ scope: 'key', id: key.id, model: null, period: 'daily', amount: 0.02, spent: 0.02, reserved: 0, requested: 0.01, currency: 'USD', resets_at: '2026-11-24T00:00:00.000Z' });

    clock.at = MIDNIGHT + 1;
    expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    expect(await spentOn('key', key.id, 'daily', MIDNIGHT + 1)).toBe(10_000);
    expect(await spentOn('key', key.id, 'daily', MIDNIGHT - 1)).toBe(20_000);
  });

  it('never spends more than one day\'s cap in either day when 200 concurrent requests straddle midnight', async () => {
    const workspace = await gw.newWorkspace('straddle');
    const key = await issueApiKey(gw.services.db, workspace, { spendCapMicros: 500_000, spendCapPeriod: 'daily' });
    // Answers wait until every request has either reached the upstream or been refused: the requests reserved before
    // midnight are still in flight when those after it reserve, and they settle after midnight.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived = 0;
    let refused = 0;
    const settleIfAllIn = () => arrived + refused === 200 && release();
    fake.route(async (req, res) => {
      if (!req.path.endsWith('/chat/completions') || req.body?.model !== 'upstream-chat') return false;
      arrived++;
      settleIfAllIn();
      await released;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
      return true;
    });
    // Each read of the clock moves it 1 ms: the first 80 reservations fall on Nov 23, the other 120 on Nov 24.
    clock.at = MIDNIGHT - 80;
    clock.tick = 1;
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        chat(gw.app, key.key).then((res) => {
          if (res.statusCode === 402) {
            refused++;
            settleIfAllIn();
          }
          return res;
        }),
      ),
    );
    clock.tick = 0;
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 402)).toHaveLength(100);
    // Each charge counts in the day it was reserved in, however late it settled.
    expect(await spentOn('key', key.id, 'daily', MIDNIGHT - 1)).toBe(500_000);
    expect(await spentOn('key', key.id, 'daily', MIDNIGHT)).toBe(500_000);
    const refusedAfterMidnight = answers.filter((a) => a.statusCode === 402).map((a) => a.json().error.cap.resets_at);
    expect(new Set(refusedAfterMidnight)).toEqual(new Set(['2026-11-24T00:00:00.000Z', '2026-11-25T00:00:00.000Z']));
    const next = await chat(gw.app, key.key);
    expect(next.statusCode).toBe(402);
    expect(next.json().error.cap).toMatchObject({ period: 'daily', spent: 0.5, reserved: 0 });
    expect(next.headers['x-budget-reset']).toBe('2026-11-25T00:00:00.000Z');
  });

  it('caps one model on its own, leaving the key\'s other models free', async () => {
    clock.at = nov23('10:00:00.000');
    const key = await issueApiKey(gw.services.db, gw.workspace);
    await setModelCap(gw.services.db, 'key', key.id, 'flat-chat', { capMicros: 10_000, period: 'weekly' });
    expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    const refused = await chat(gw.app, key.key);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error.message).toContain('weekly spending cap of this API key on model flat-chat is exhausted');
    expect(refused.json().error.cap).toMatchObject({ model: 'flat-chat', period: 'weekly', amount: 0.01, spent: 0.01 });
    // 2026-11-23 is a Monday: the week resets the next Monday.
    expect(refused.headers['x-budget-reset']).toBe('2026-11-30T00:00:00.000Z');
    expect((await chat(gw.app, key.key, 'other-chat')).statusCode).toBe(200);
    expect((await chat(gw.app, key.key, 'other-chat')).statusCode).toBe(200);
  });

  it('counts what a period already spent when a cap is set in the middle of it', async () => {
    clock.at = nov23('09:00:00.000');
    const workspace = await gw.newWorkspace('mid-month');
    const key = await issueApiKey(gw.services.db, workspace);
    for (let i = 0; i < 3; i++) expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    await setWorkspaceSpendCap(gw.services.db, workspace.id, 40_000, 'monthly');
    expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    const refused = await chat(gw.app, key.key);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().error.cap).toMatchObject({ scope: 'workspace', period: 'monthly', amount: 0.04, spent: 0.04 });
    expect(refused.headers['x-budget-reset']).toBe('2026-12-01T00:00:00.000Z');
    expect(await spentOn('workspace', workspace.id, 'monthly', clock.at)).toBe(40_000);
  });

  it('sets periods and model caps with the admin commands', async () => {
    clock.at = nov23('08:00:00.000');
    const workspace: Workspace = await gw.newWorkspace('cli-budgets');
    const key = await issueApiKey(gw.services.db, workspace);
    expect(await run(commands, 'key update', [key.id], { 'spend-cap': '0.01', period: 'daily' })).toEqual([`key ${key.id}: spend cap 0.01 USD daily`]);
    expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    expect((await chat(gw.app, key.key)).statusCode).toBe(402);
    expect(await run(commands, 'key update', [key.id], { 'spend-cap': '0.03' })).toEqual([`key ${key.id}: spend cap 0.03 USD daily`]);
    expect(await run(commands, 'key update', [key.id], { 'spend-cap': 'none' })).toEqual([`key ${key.id}: spend cap none`]);
    expect(await run(commands, 'workspace update', ['cli-budgets'], { 'spend-cap': '0.01', period: 'monthly', model: 'other-chat' })).toEqual([
      'workspace cli-budgets: spend cap on model other-chat 0.01 USD monthly',
    ]);
    expect((await chat(gw.app, key.key, 'other-chat')).statusCode).toBe(200);
    const refused = await chat(gw.app, key.key, 'other-chat');
    expect(refused.json().error.cap).toMatchObject({ scope: 'workspace', model: 'other-chat', period: 'monthly' });
    expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    await expect(run(commands, 'key update', [key.id], { 'spend-cap': '1', period: 'hourly' })).rejects.toThrow(/period must be one of total, daily, weekly, monthly/);
    await expect(run(commands, 'key update', [key.id], { 'spend-cap': '1', model: 'two words' })).rejects.toThrow(/--model must be a model id/);
    const created = await run(keyCommands, 'key create', [], { workspace: 'cli-budgets', 'spend-cap': '2.50', period: 'weekly', json: true as unknown as string });
    const { id } = JSON.parse(created[0]) as { id: string };
    const listed = JSON.parse((await run(keyCommands, 'key list', [], { workspace: 'cli-budgets', json: true as unknown as string }))[0]) as { id: string; spend_cap: number; spend_cap_period: string }[];
    expect(listed.find((k) => k.id === id)).toMatchObject({ spend_cap: 2.5, spend_cap_period: 'weekly' });
    const usage = await run(commands, 'usage', [], { workspace: 'cli-budgets' });
    expect(usage.at(-1)).toBe('workspace cli-budgets: spend cap none, spent in all 0.03 USD');
  });
});

describe('period rows', () => {
  it('sweeps the spend kept for periods long over, and starts a current one again from the ledger', async () => {
    clock.at = nov23('15:00:00.000');
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 20_000, spendCapPeriod: 'daily' });
    expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    const periodRows = async () => Number((await gw.services.db.selectFrom('spend_periods').select((eb) => eb.fn.countAll<number>().as('n')).where('subject_id', '=', key.id).executeTakeFirstOrThrow()).n);
    expect(await periodRows()).toBe(1);
    await gw.services.spend.sweep(nov23('15:00:00.000') + 36 * 86_400_000);
    expect(await periodRows()).toBe(0);
    // The row was a copy of the ledger: the day's spend is still counted once the next request brings it back.
    expect((await chat(gw.app, key.key)).statusCode).toBe(200);
    expect((await chat(gw.app, key.key)).json().error.cap).toMatchObject({ period: 'daily', spent: 0.02 });
  });
});

describe('budget periods in the operator\'s time zone', () => {
  let zoned: TestGateway;
  beforeAll(async () => {
    zoned = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) }, extraConfig: 'billing:\n  timeZone: America/New_York\n', overrides: { now } });
  });
  afterAll(() => zoned.close());

  it('resets a daily cap at the zone\'s midnight, not UTC\'s', async () => {
    // 03:00 UTC on Nov 24 is still Nov 23 in New York (UTC-5): the day resets at 05:00 UTC.
    clock.at = Date.parse('2026-11-24T03:00:00Z');
    const key = await issueApiKey(zoned.services.db, zoned.workspace, { spendCapMicros: 0, spendCapPeriod: 'daily' });
    const refused = await chat(zoned.app, key.key);
    expect(refused.statusCode).toBe(402);
    expect(refused.headers['x-budget-reset']).toBe('2026-11-24T05:00:00.000Z');
  });

  it('follows daylight saving time: a month that changes offset ends at the new offset\'s midnight', () => {
    const calendar = zoned.services.calendar;
    // New York leaves daylight saving time on 2026-11-01: October began at UTC-4, December begins at UTC-5.
    expect(new Date(calendar.start('monthly', Date.parse('2026-10-15T12:00:00Z'))).toISOString()).toBe('2026-10-01T04:00:00.000Z');
    expect(new Date(calendar.resetsAt('monthly', Date.parse('2026-11-15T12:00:00Z'))!).toISOString()).toBe('2026-12-01T05:00:00.000Z');
    // The week of Sunday 2026-11-01 began on Monday 2026-10-26, before the change.
    expect(new Date(calendar.start('weekly', Date.parse('2026-11-01T12:00:00Z'))).toISOString()).toBe('2026-10-26T04:00:00.000Z');
    expect(calendar.resetsAt('total', Date.now())).toBeNull();
  });

  it('refuses an unknown time zone when the config loads, naming where', async () => {
    await expect(startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) }, extraConfig: 'billing:\n  timeZone: Mars/Olympus_Mons\n' })).rejects.toThrow(
      /config\.yaml:\d+:\d+ \/billing\/timeZone unknown time zone "Mars\/Olympus_Mons"/,
    );
  });
});

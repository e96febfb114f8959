// Two gateway replicas on one PostgreSQL database: caps exact across both, and a key revoked through one refused by the other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { loadConfig } from '../src/compile/load-config.js';
import { createServices } from '../src/services.js';
import { buildApp } from '../src/app.js';
import { issueApiKey } from '../src/auth/keys.js';

let fake: FakeUpstream;
let first: TestGateway;
let second: FastifyInstance;

/** Both replicas' clock (their meters'); each read moves it 1 ms while `tick` is set. */
const clock = { at: Date.now(), tick: 0 };
const now = () => {
  const at = clock.at;
  clock.at += clock.tick;
  return at;
};

beforeAll(async () => {
  fake = await FakeUpstream.start();
  first = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.flatChat }) }, overrides: { now } });
  // The second replica: its own services and pools, the same config and so the same database schema.
  second = await buildApp(await createServices(await loadConfig(join(first.dir, 'config.yaml')), { now }), { logger: false });
  await second.ready();
});
afterAll(async () => {
  await second.close();
  await first.close();
  await fake.close();
});

const chat = (app: FastifyInstance, key: string) =>
  app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model: 'flat-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] } });

describe('replicas on one PostgreSQL database', () => {
  it('runs on PostgreSQL', () => {
    expect(first.services.config.gateway.storage.database.driver).toBe('postgres');
  });

  it('admit exactly the requests a key cap covers out of 100 concurrent ones spread over both', async () => {
    // One cent per request: a 0.25 cap covers exactly 25.
    const key = await issueApiKey(first.services.db, first.workspace, { spendCapMicros: 250_000 });
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => chat(i % 2 ? second : first.app, key.key)));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(25);
    expect(statuses.filter((s) => s === 402)).toHaveLength(75);
    expect(await first.services.spend.balance('key', key.id, Date.now())).toEqual({ spentMicros: 250_000, reservedMicros: 0 });
  });

  it('keep a daily budget exact on both sides of midnight with requests spread over both', async () => {
    const midnight = Date.parse('2026-11-24T00:00:00Z');
    // A 0.20 daily cap covers 20 requests a day; the first 60 reservations fall before midnight, the other 60 after.
    const key = await issueApiKey(first.services.db, first.workspace, { spendCapMicros: 200_000, spendCapPeriod: 'daily' });
    clock.at = midnight - 60;
    clock.tick = 1;
    const answers = await Promise.all(Array.from({ length: 120 }, (_, i) => chat(i % 2 ? second : first.app, key.key)));
    clock.tick = 0;
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(40);
    const byDay = await first.services.db
      .selectFrom('usage_ledger')
      .select((eb) => [eb.fn.sum<number>('cost_micros').as('spent'), eb.fn.countAll<number>().as('rows')])
      .where('key_id', '=', key.id)
      .where('reserved_at', '<', midnight)
      .executeTakeFirstOrThrow();
    expect({ spent: Number(byDay.spent), rows: Number(byDay.rows) }).toEqual({ spent: 200_000, rows: 20 });
    const refused = answers.find((a) => a.statusCode === 402 && a.json().error.cap.resets_at === '2026-11-25T00:00:00.000Z');
    expect(refused?.headers['x-budget-reset']).toBe('2026-11-25T00:00:00.000Z');
    clock.at = Date.now();
  });

  it('refuses a key on the other replica on the first request after it is revoked', async () => {
    const key = await issueApiKey(first.services.db, first.workspace);
    expect((await chat(second, key.key)).statusCode).toBe(200);
    await first.services.db.updateTable('api_keys').set({ revoked_at: Math.floor(Date.now() / 1000) }).where('id', '=', key.id).execute();
    const res = await chat(second, key.key);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('revoked_api_key');
  });
});

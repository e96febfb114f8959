// Issue 44, accounting under failover: 200 concurrent requests on one capped key through a route whose first target
// fails half the time (a 500 moves each of those on to the second target). The reservation covers the dearest target,
// so the cap holds exactly: spend never passes it, the failed attempts charge nothing, and every admitted request is
// charged once, at the model that served it. Runs on SQLite and, with DATABASE_URL, on PostgreSQL; cooldown state is
// shared through Redis (storage.cache.driver: redis).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Channel ids of this run: shared cooldown keys are named by them. */
const run = randomUUID().slice(0, 8);
const CAP = 5_000;

let fa: FakeUpstream;
let fb: FakeUpstream;
let gw: TestGateway;
let sentToA = 0;

const channel = (id: string, url: string, model: string, input: number, output: number) =>
  `id: ${id}\nprotocol: openai-chat\nbaseUrl: ${url}/v1\nmodels:\n  - id: ${model}\n    kind: chat\n    price: { inputPerMillion: ${input}, outputPerMillion: ${output} }\n`;

beforeAll(async () => {
  [fa, fb] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  // Every other request to the first target fails with a 500, before any work.
  fa.route((req, res) => {
    if (sentToA++ % 2 === 0) return false;
    json(res, 500, { error: { message: 'scripted failure', type: 'server_error' } });
    return true;
  });
  for (const fake of [fa, fb]) fake.chat = { text: 'ok', usage: { prompt_tokens: 10, completion_tokens: 5 } };
  gw = await startGateway({
    channels: { a: channel(`a-${run}`, fa.url, 'alpha', 1, 2), b: channel(`b-${run}`, fb.url, 'beta', 3, 4) },
    files: { 'routes/capped.yaml': `id: capped\nfailover: { on: [connect, 429, 5xx] }\ntargets: [{ model: alpha }, { model: beta }]\n` },
    storageConfig: `  cache:\n    driver: redis\n    url: ${redisUrl}\n`,
    listen: true,
  });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fa, fb].map((f) => f?.close()));
});

describe('a capped key through a failing route', () => {
  it('200 concurrent requests: spend never passes the cap, each admitted request charged once at the model that served', { timeout: 120_000 }, async () => {
    const key = await gw.newKey({ spendCapMicros: CAP });
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'capped', max_tokens: 8, stream: i % 2 === 0, messages: [{ role: 'user', content: 'hi' }] }),
        });
        await res.text();
        return { status: res.status, requestId: res.headers.get('x-request-id')!, target: res.headers.get('x-gateway-target') };
      }),
    );
    const admitted = answers.filter((a) => a.status === 200);
    expect(answers.every((a) => a.status === 200 || a.status === 402)).toBe(true);
    expect(admitted.length).toBeGreaterThan(0);
    expect(admitted.length).toBeLessThan(200);
    // Both targets served: the first one's failures moved on to the second.
    expect(new Set(admitted.map((a) => a.target?.split('/')[1]))).toEqual(new Set(['alpha', 'beta']));
    const id = (await gw.services.db.selectFrom('api_keys').select('id').where('spend_cap_micros', '=', CAP).executeTakeFirstOrThrow()).id;
    const rows = await gw.services.db.selectFrom('usage_ledger').select(['request_id', 'model', 'cost_micros', 'overage_micros']).where('key_id', '=', id).execute();
    // One row per admitted request, at its serving model's price (alpha 10 x 1 + 5 x 2, beta 10 x 3 + 5 x 4), no overage.
    expect(rows).toHaveLength(admitted.length);
    expect(new Set(rows.map((r) => r.request_id))).toEqual(new Set(admitted.map((a) => a.requestId)));
    for (const row of rows) expect([Number(row.cost_micros), Number(row.overage_micros)]).toEqual([row.model === 'alpha' ? 20 : 50, 0]);
    const balance = await gw.services.spend.balance('key', id, Date.now());
    expect(balance.spentMicros).toBe(rows.reduce((sum, r) => sum + Number(r.cost_micros), 0));
    expect(balance.spentMicros).toBeLessThanOrEqual(CAP);
    expect(balance.reservedMicros).toBe(0);
  });
});

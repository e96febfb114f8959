// The PostgreSQL spend store's round trips: one statement a reservation, one for a batch of settlements.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KyselyPlugin } from 'kysely';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';
import { createPostgresSpendStore } from '../src/billing/postgres-spend-store.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ channels: {} });
});
afterAll(() => gw.close());

/** The gateway's database, counting the statements sent through it. */
function countingStore() {
  const sent = { count: 0 };
  const counter: KyselyPlugin = {
    transformQuery: (args) => (sent.count++, args.node),
    transformResult: async (args) => args.result,
  };
  return { store: createPostgresSpendStore(gw.services.db.withPlugin(counter)), sent };
}

const entry = (keyId: string, requestId: string, now: number) => ({
  request_id: requestId, workspace_id: gw.workspace.id, key_id: keyId, model: 'flat-chat', channel: 'fake', kind: 'chat',
  input_tokens: 3, output_tokens: 4, cached_input_tokens: 0, units: 0, cost_micros: 7, overage_micros: 0, currency: 'USD', price: '{}',
  created_at: Math.floor(now / 1000), reserved_at: now,
});

describe('spend store on PostgreSQL', () => {
  it('runs on PostgreSQL', () => {
    expect(gw.services.config.gateway.storage.database.driver).toBe('postgres');
  });

  it('reserves in one statement, capped or not', async () => {
    const { store, sent } = countingStore();
    const capped = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 100 });
    const free = await issueApiKey(gw.services.db, gw.workspace);
    const now = Date.now();
    const reserve = (keyId: string, id: string, amountMicros: number) => store.reserve({ id, keyId, workspaceId: gw.workspace.id, requestId: id, amountMicros, model: 'flat-chat', now, expiresAt: now + 60_000 });
    expect(await reserve(capped.id, 'rsv_one_a', 60)).toEqual({ ok: true, held: true });
    expect(sent.count).toBe(1);
    const refused = await reserve(capped.id, 'rsv_one_b', 60);
    expect(refused).toMatchObject({ ok: false, refusedBy: { scope: 'key', capMicros: 100, spentMicros: 0, reservedMicros: 60 } });
    expect(await reserve(free.id, 'rsv_one_c', 60)).toEqual({ ok: true, held: false });
    expect(sent.count).toBe(3);
    expect(await store.balance('key', free.id, now)).toEqual({ spentMicros: 0, reservedMicros: 0 });
  });

  it('settles 30 charges made together in one statement, each once, and the budget adds up', async () => {
    const { store, sent } = countingStore();
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 1_000 });
    const now = Date.now();
    const ids = Array.from({ length: 30 }, (_, i) => `rsv_batch_${i}`);
    for (const id of ids) await store.reserve({ id, keyId: key.id, workspaceId: gw.workspace.id, requestId: id, amountMicros: 10, model: 'flat-chat', now, expiresAt: now + 60_000 });
    sent.count = 0;
    const settled = await Promise.all(ids.map((id) => store.settle(id, entry(key.id, id, now))));
    expect(settled).toEqual(ids.map(() => true));
    expect(sent.count).toBe(1);
    // Settling again charges nothing.
    expect(await Promise.all(ids.slice(0, 5).map((id) => store.settle(id, entry(key.id, id, now))))).toEqual([false, false, false, false, false]);
    expect(await store.balance('key', key.id, Date.now())).toEqual({ spentMicros: 30 * 7, reservedMicros: 0 });
  });
});

// The embedded store's settlements off the response path: the answer goes out first, the reservation holds the cap
// until the batch commits, and a read of the ledger through this process commits the batch first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway, testModels } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { waitFor } from './kit/tasks.js';

let fake: FakeUpstream;
let gw: TestGateway;
/** A second connection to the gateway's SQLite file: it sees only what is committed, and commits nothing itself. */
let outside: BetterSqlite3.Database;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  // A long window, so the test can look between the answer and the commit.
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.flatChat }) }, extraConfig: 'billing:\n  settleBatchMs: 1000\n' });
  outside = new BetterSqlite3(join(gw.dir, 'data', 'gateway.db'), { readonly: true });
});
afterAll(async () => {
  outside.close();
  await gw.close();
  await fake.close();
});

const chat = (key: string) =>
  gw.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model: 'flat-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });

describe('settlements batched off the response path (SQLite)', () => {
  it('answers before the charge is committed, holds the reservation meanwhile, and commits before this process reads', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 15_000 });
    const res = await chat(key.key);
    expect(res.statusCode).toBe(200);
    const requestId = res.headers['x-request-id'] as string;

    // Not yet committed: no ledger row, and the reservation still holds the key's budget.
    expect(outside.prepare('select count(*) from usage_ledger where request_id = ?').pluck().get(requestId)).toBe(0);
    expect(outside.prepare('select amount_micros from spend_reservations where request_id = ?').pluck().get(requestId)).toBe(10_000);

    // A read through the gateway's database commits the batch first.
    expect((await ledgerForRequest(gw.services.db, requestId)).map((r) => r.cost_micros)).toEqual([10_000]);
    expect(outside.prepare('select count(*) from usage_ledger where request_id = ?').pluck().get(requestId)).toBe(1);
    expect(outside.prepare('select count(*) from spend_reservations where request_id = ?').pluck().get(requestId)).toBe(0);
  });

  it('keeps answering while another connection holds the write lock: the commit waits on the spend thread, not the event loop', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace);
    const locker = new BetterSqlite3(join(gw.dir, 'data', 'gateway.db'));
    locker.exec('begin immediate');
    try {
      const first = await chat(key.key);
      const landed = gw.services.spend.commitQueued!();
      // On the event loop this commit would wait out busy_timeout (5 s) with this thread stopped, and then fail.
      const started = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = await chat(key.key);
      expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
      expect(Date.now() - started).toBeLessThan(2_000);
      locker.exec('rollback');
      await landed;
      expect(outside.prepare('select cost_micros from usage_ledger where request_id = ?').pluck().get(first.headers['x-request-id'])).toBe(10_000);
    } finally {
      if (locker.inTransaction) locker.exec('rollback');
      locker.close();
    }
  });

  it('commits on its own once the window has passed', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace);
    const res = await chat(key.key);
    const requestId = res.headers['x-request-id'] as string;
    expect(outside.prepare('select count(*) from usage_ledger where request_id = ?').pluck().get(requestId)).toBe(0);
    // Watched from the other connection only, so nothing through this process commits it: the window's timer does.
    const committed = () => outside.prepare('select cost_micros from usage_ledger where request_id = ?').pluck().get(requestId);
    await waitFor(async () => committed(), (cost) => cost !== undefined, 5_000);
    expect(committed()).toBe(10_000);
  });
});

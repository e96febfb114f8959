import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
const copies = mkdtempSync(join(tmpdir(), 'checkpoint-copy-'));
beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`) } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
  rmSync(copies, { recursive: true, force: true });
});

/** Ledger rows in the database file alone (what checkpoints copied there), without its WAL. */
function rowsInMainFile(): number {
  const copy = join(copies, `copy-${Date.now()}.db`);
  copyFileSync(join(gw.dir, 'data', 'gateway.db'), copy);
  const db = new BetterSqlite3(copy, { readonly: true });
  try {
    return (db.prepare('select count(*) as n from usage_ledger').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('SQLite WAL checkpoints', () => {
  it('run on a thread of their own: the ledger rows of a few answers reach the database file, far below the automatic checkpoint', async () => {
    // 20 answers write far fewer than the 1,000 WAL pages at which SQLite's own checkpoint would run.
    for (let i = 0; i < 20; i++) {
      const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-chat', messages: [{ role: 'user', content: `hi ${i}` }] } });
      expect(res.statusCode).toBe(200);
    }
    await vi.waitFor(() => expect(rowsInMainFile()).toBe(20), { timeout: 10_000, interval: 200 });
  });
});

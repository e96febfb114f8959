// The spend thread runs only while there is work (src/billing/threaded-spend-store.ts): it leaves after its idle time,
// the next batch starts another, and a sweep while it is gone commits on the event loop's connection. Its idle checks
// run on a faked clock.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../src/store/database.js';
import { createWorkspace, type Workspace } from '../src/store/workspaces.js';
import { issueApiKey } from '../src/auth/keys.js';
import { createThreadedSpendStore, type ThreadedSpendStore } from '../src/billing/threaded-spend-store.js';

let dir: string;
let database: Awaited<ReturnType<typeof openSqlite>>;
let store: ThreadedSpendStore | undefined;
let workspace: Workspace;
let keyId: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'spend-idle-'));
  database = await openSqlite(join(dir, 'gateway.db'));
  workspace = await createWorkspace(database.db, 'idle');
  // A cap, so a reservation is held (an uncapped key is admitted without a trip to the thread).
  keyId = (await issueApiKey(database.db, workspace, { spendCapMicros: 1_000 })).id;
});

afterEach(async () => {
  vi.useRealTimers();
  await store?.close();
  store = undefined;
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

const reserve = (id: string, expiresIn = 600_000) => {
  const now = Date.now();
  return store!.reserve({ id, keyId, workspaceId: workspace.id, requestId: `req_${id}`, amountMicros: 10, now, expiresAt: now + expiresIn });
};
const fakeClock = () => vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
const held = () => database.sqlite!.prepare('select count(*) from spend_reservations').pluck().get() as number;

describe('the spend thread, while idle', () => {
  it('leaves after its idle time without a batch, and the next reservation starts another', async () => {
    fakeClock();
    store = createThreadedSpendStore(database.sqlite!, { path: database.sqlite!.name, timeZone: 'UTC', idleMs: 1_000 });
    expect(store.threadRunning).toBe(false);
    expect(await reserve('rsv_1')).toMatchObject({ ok: true, held: true });
    expect(store.threadRunning).toBe(true);
    vi.advanceTimersByTime(1_500);
    expect(store.threadRunning).toBe(false);
    expect(await reserve('rsv_2')).toMatchObject({ ok: true, held: true });
    expect(store.threadRunning).toBe(true);
    expect(held()).toBe(2);
  });

  it('stays while batches keep coming more often than its idle time', async () => {
    fakeClock();
    store = createThreadedSpendStore(database.sqlite!, { path: database.sqlite!.name, timeZone: 'UTC', idleMs: 1_000 });
    for (let i = 0; i < 8; i++) {
      expect(await reserve(`rsv_${i}`)).toMatchObject({ ok: true, held: true });
      vi.advanceTimersByTime(900);
      expect(store.threadRunning).toBe(true);
    }
    expect(held()).toBe(8);
  });

  it('sweeps on the event loop connection while no thread runs, starting none', async () => {
    fakeClock();
    store = createThreadedSpendStore(database.sqlite!, { path: database.sqlite!.name, timeZone: 'UTC', idleMs: 1_000 });
    await reserve('rsv_short', 1);
    await reserve('rsv_long');
    vi.advanceTimersByTime(1_500);
    expect(store.threadRunning).toBe(false);
    expect(await store.sweep(Date.now() + 10)).toBe(1);
    expect(store.threadRunning).toBe(false);
    expect(held()).toBe(1);
  });
});

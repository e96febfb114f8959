import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { framesAwaitingCheckpoint, startCheckpointer } from '../src/store/checkpointer.js';

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

describe('the checkpoint thread', () => {
  it('runs only while the file is written: it leaves once idle and comes back on the next write, which reaches the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
    const path = join(dir, 'some.db');
    const db = new BetterSqlite3(path);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('create table t (n integer)');
    const checkpointer = startCheckpointer(path, { intervalMs: 20, idleRounds: 5, startFrames: 1 });
    try {
      const inFile = () => {
        const copy = join(dir, `copy-${Date.now()}-${Math.random()}.db`);
        copyFileSync(path, copy);
        const read = new BetterSqlite3(copy, { readonly: true });
        try {
          return (read.prepare('select count(*) as n from t').get() as { n: number }).n;
        } finally {
          read.close();
        }
      };
      db.prepare('insert into t values (1)').run();
      await vi.waitFor(() => expect(checkpointer.running).toBe(true), { timeout: 5_000, interval: 10 });
      await vi.waitFor(() => expect(checkpointer.running).toBe(false), { timeout: 10_000, interval: 20 });
      expect(inFile()).toBe(1);
      db.prepare('insert into t values (2)').run();
      await vi.waitFor(() => expect(checkpointer.running).toBe(true), { timeout: 5_000, interval: 10 });
      await vi.waitFor(() => expect(inFile()).toBe(2), { timeout: 10_000, interval: 20 });
    } finally {
      await checkpointer.stop();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
    expect(checkpointer.running).toBe(false);
  });

  it('is not woken by a few small writes (a heartbeat): only once startFrames of WAL frames await a checkpoint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
    const path = join(dir, 'some.db');
    const db = new BetterSqlite3(path);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('create table t (n integer)');
    const checkpointer = startCheckpointer(path, { intervalMs: 20, idleRounds: 5, startFrames: 16 });
    const insert = db.prepare('insert into t values (?)');
    try {
      // One frame a commit: the table's page. The create table wrote two.
      for (let n = 0; n < 10; n++) insert.run(n);
      expect(framesAwaitingCheckpoint(`${path}-shm`)).toBe(12);
      // Ten looks at the WAL, none starting the thread.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(checkpointer.running).toBe(false);
      for (let n = 10; n < 14; n++) insert.run(n);
      await vi.waitFor(() => expect(checkpointer.running).toBe(true), { timeout: 5_000, interval: 10 });
      await vi.waitFor(() => expect(framesAwaitingCheckpoint(`${path}-shm`)).toBe(0), { timeout: 10_000, interval: 20 });
      // Small writes more often than its idle time (5 rounds of 20 ms) do not keep it: it leaves while they go on.
      for (let n = 14; n < 200 && checkpointer.running; n++) {
        insert.run(n);
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
      expect(checkpointer.running).toBe(false);
    } finally {
      await checkpointer.stop();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

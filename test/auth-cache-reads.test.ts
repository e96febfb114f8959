// The key and cap caches of a SQLite gateway read their change counter only when something changed: requests on cached
// keys read nothing, and a revocation committed through another connection to the file is read once, on the very next
// request, which it refuses. The reads are counted on better-sqlite3's statements (every statement shares one prototype).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { hashApiKey } from '../src/auth/keys.js';
import { findApiKeyByHash, revokeApiKey } from '../src/store/api-keys.js';
import { openSqlite } from '../src/store/database.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
const statement = Object.getPrototypeOf(new BetterSqlite3(':memory:').prepare('select 1')) as { get: (...args: unknown[]) => unknown };
const originalGet = statement.get;
let counterReads = 0;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  // A recheck an hour away: within a test, only a change signal can make the gateway read its counter.
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`) }, storageConfig: '  database:\n    recheckSeconds: 3600\n', listen: true });
  statement.get = function (this: { source: string }, ...args: unknown[]) {
    if (this.source.includes('change_counters')) counterReads++;
    return originalGet.apply(this, args);
  };
});
afterEach(() => {
  counterReads = 0;
});
afterAll(async () => {
  statement.get = originalGet;
  await gw?.close();
  await fake?.close();
});

/** Revokes `key` through another connection to the same file, as the admin CLI or another gateway process has one. */
async function revokeElsewhere(key: string): Promise<void> {
  const elsewhere = await openSqlite(join(gw.dir, 'data', 'gateway.db'));
  try {
    await revokeApiKey(elsewhere.db, (await findApiKeyByHash(elsewhere.db, hashApiKey(key)))!.id);
  } finally {
    await elsewhere.close();
  }
}

/** A chat request over a socket, as a client sends it: its status and error code. */
const chat = (key: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] }),
  }).then(async (r) => ({ status: r.status, code: ((await r.json()) as { error?: { code?: string } }).error?.code }));

describe('the change counter on the request path (SQLite)', () => {
  it('is not read by 50 requests on cached keys while nothing changes', async () => {
    const other = await gw.newKey();
    expect((await chat(gw.key)).status).toBe(200);
    expect((await chat(other)).status).toBe(200);
    counterReads = 0;
    for (let i = 0; i < 25; i++) expect([(await chat(gw.key)).status, (await chat(other)).status]).toEqual([200, 200]);
    expect(counterReads).toBe(0);
  });

  it('is read once, on the next request, after another connection to the file revoked a key, which that request refuses', async () => {
    const key = await gw.newKey();
    expect((await chat(key)).status).toBe(200);
    expect((await chat(gw.key)).status).toBe(200);
    await revokeElsewhere(key);
    counterReads = 0;
    expect(await chat(key)).toEqual({ status: 401, code: 'revoked_api_key' });
    expect(counterReads).toBe(1);
    for (let i = 0; i < 10; i++) expect((await chat(gw.key)).status).toBe(200);
    expect(counterReads).toBe(1);
  });

  it('still hears a revocation on the next request after the epoch file was removed (it is watched again once made again)', async () => {
    const key = await gw.newKey();
    rmSync(join(gw.dir, 'data', 'gateway.db.auth-epoch'));
    expect((await chat(key)).status).toBe(200);
    await revokeElsewhere(key);
    expect(await chat(key)).toEqual({ status: 401, code: 'revoked_api_key' });
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './kit/gateway.js';
import { openSqlite } from '../src/store/database.js';

const dir = mkdtempSync(join(tmpdir(), 'spend-processes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Each process reserves 100 micro-units one at a time against one shared cap of 150.
const reserver = `
import { openSqlite } from './src/store/database.ts';
import { createSqliteSpendStore } from './src/billing/sqlite-spend-store.ts';
const { sqlite, close } = await openSqlite(process.argv[1]);
const store = createSqliteSpendStore(sqlite);
let admitted = 0;
for (let i = 0; i < 100; i++) {
  const now = Date.now();
  const outcome = await store.reserve({ id: 'rsv_' + process.pid + '_' + i, keyId: 'key_shared', workspaceId: 'ws_shared', requestId: 'req', amountMicros: 1, caps: { keyCapMicros: 150, workspaceCapMicros: null }, now, expiresAt: now + 600000 });
  if (outcome.ok) admitted++;
}
console.log(admitted);
await close();
`;

describe('spend reservations across processes', () => {
  it('never hold more than the cap when several processes share the database file', async () => {
    const file = join(dir, 'shared.db');
    await (await openSqlite(file)).close();
    const run = () => promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', reserver, file], { cwd: repoRoot });
    const outputs = await Promise.all([run(), run(), run(), run()]);
    const admitted = outputs.map((o) => Number(o.stdout.trim()));
    expect(admitted.reduce((a, b) => a + b, 0)).toBe(150);
    const database = await openSqlite(file);
    const row = await database.db.selectFrom('spend_reservations').select((eb) => eb.fn.sum<number>('amount_micros').as('held')).executeTakeFirstOrThrow();
    await database.close();
    expect(Number(row.held)).toBe(150);
  });
});

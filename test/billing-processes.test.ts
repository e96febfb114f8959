import { afterAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compiled } from './kit/compiled.js';
import { repoRoot } from './kit/paths.js';
import { openSqlite } from '../src/store/database.js';
import { createWorkspace } from '../src/store/workspaces.js';
import { issueApiKey } from '../src/auth/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'spend-processes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Each process reserves 1 micro-unit 100 times against one key whose cap is 150: a module file (a spend thread inherits
// node's flags, and --input-type is refused for its file) importing the compiled modules (dist/).
const reserver = join(dir, 'reserver.mjs');
writeFileSync(
  reserver,
  `
import { openSqlite } from '${compiled('store/database')}';
import { createSqliteSpendStore } from '${compiled('billing/sqlite-spend-store')}';
import { createThreadedSpendStore } from '${compiled('billing/threaded-spend-store')}';
const [file, keyId, workspaceId, where] = process.argv.slice(2);
const { sqlite, close } = await openSqlite(file);
// 'thread': committed by the spend thread, as the gateway does; 'loop': on the event loop's own connection.
const store = where === 'thread' ? createThreadedSpendStore(sqlite, { path: file, timeZone: 'UTC' }) : createSqliteSpendStore(sqlite);
let admitted = 0;
for (let i = 0; i < 100; i++) {
  const now = Date.now();
  const outcome = await store.reserve({ id: 'rsv_' + process.pid + '_' + i, keyId, workspaceId, requestId: 'req', amountMicros: 1, now, expiresAt: now + 600000 });
  if (outcome.ok) admitted++;
}
console.log(admitted);
await store.close?.();
await close();
`,
);

describe('spend reservations across processes', () => {
  it('never hold more than the cap when several processes share the database file, spend threads and event loops alike', async () => {
    const file = join(dir, 'shared.db');
    const setup = await openSqlite(file);
    const workspace = await createWorkspace(setup.db, 'shared');
    const key = await issueApiKey(setup.db, workspace, { spendCapMicros: 150 });
    await setup.close();
    const run = (where: 'thread' | 'loop') => promisify(execFile)(process.execPath, [reserver, file, key.id, workspace.id, where], { cwd: repoRoot });
    const outputs = await Promise.all([run('thread'), run('loop'), run('thread'), run('loop')]);
    const admitted = outputs.map((o) => Number(o.stdout.trim()));
    expect(admitted.reduce((a, b) => a + b, 0)).toBe(150);
    const database = await openSqlite(file);
    const row = await database.db.selectFrom('spend_reservations').select((eb) => eb.fn.sum<number>('amount_micros').as('held')).executeTakeFirstOrThrow();
    await database.close();
    expect(Number(row.held)).toBe(150);
  });
});

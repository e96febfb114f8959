// npm run bench:change-counter: what the auth caches' change check costs a request on SQLite, the way a request sent
// alone meets it: another connection (the spend thread's) commits between two requests, which empties the serving
// connection's page cache, so a read of the counter goes back to the file. Compares that read (every turn of the event
// loop until issue 52) with changeVersion() as it is now (no read unless a change signal came). Wall µs per check,
// CHANGE_COUNTER_REQUESTS (default 20000) each, three rounds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { changeVersion } from '../src/store/change-version.js';
import { openSqlite } from '../src/store/database.js';

const requests = Number(process.env.CHANGE_COUNTER_REQUESTS ?? 20_000);
const dir = mkdtempSync(join(tmpdir(), 'gateway-change-counter-'));
const opened = await openSqlite(join(dir, 'gateway.db'));
const neighbour = new BetterSqlite3(join(dir, 'gateway.db'));
neighbour.pragma('busy_timeout = 5000');
neighbour.exec('create table settlements (n integer)');
const settle = neighbour.prepare('insert into settlements values (?)');
const counter = opened.sqlite!.prepare("select version from change_counters where name = 'auth'").pluck();

function microsPerCheck(check: () => unknown): number {
  let nanos = 0n;
  for (let i = 0; i < requests; i++) {
    settle.run(i);
    const start = process.hrtime.bigint();
    check();
    nanos += process.hrtime.bigint() - start;
  }
  return Number(nanos) / requests / 1000;
}

try {
  for (let round = 1; round <= 3; round++) {
    const read = microsPerCheck(() => counter.get());
    const now = microsPerCheck(() => changeVersion(opened.db));
    console.log(`round ${round}: counter read ${read.toFixed(2)} µs a request, changeVersion() ${now.toFixed(2)} µs`);
  }
} finally {
  neighbour.close();
  await opened.close();
  rmSync(dir, { recursive: true, force: true });
}

// The spend thread: a connection of its own to the embedded database, committing the batches of reserves and
// settlements the event loop hands it, so no commit (or wait for another process's write lock) runs on the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { BudgetCalendar } from '../config/periods.js';
import { batchChangeVersion, createCapsReader } from './sqlite-spend-caps.js';
import { SqliteSpendCore, type OpResult } from './sqlite-spend-core.js';
import { decodeOps, encodeResults, type WireResults } from './spend-thread-wire.js';

/** What the thread is started with. */
export interface SpendThreadData {
  path: string;
  timeZone: string;
}

/** A batch to commit (encoded by spend-thread-wire.ts), or `close`. */
export type SpendThreadRequest = { seq: number; ops: unknown[] } | 'close';
export interface SpendThreadAnswer {
  seq: number;
  results: WireResults;
}

function serve(data: SpendThreadData): void {
  const sqlite = new BetterSqlite3(data.path, { fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // The checkpoint thread checkpoints the file; a commit here never does.
  sqlite.pragma('wal_autocheckpoint = 0');
  sqlite.defaultSafeIntegers(false);
  const version = batchChangeVersion(sqlite);
  const core = new SqliteSpendCore(sqlite, createCapsReader(sqlite, version.read), new BudgetCalendar(data.timeZone));
  parentPort!.on('message', (request: SpendThreadRequest) => {
    if (request === 'close') {
      sqlite.close();
      parentPort!.close();
      return;
    }
    version.next();
    const ops = decodeOps(request.ops);
    let results: OpResult[];
    try {
      results = core.runBatch(ops);
    } catch (error) {
      results = ops.map(() => ({ ok: false, error }));
    }
    parentPort!.postMessage({ seq: request.seq, results: encodeResults(results) } satisfies SpendThreadAnswer);
  });
}

if (parentPort && (workerData as { spendThread?: SpendThreadData } | undefined)?.spendThread) serve((workerData as { spendThread: SpendThreadData }).spendThread);

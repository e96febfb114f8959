// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit crosses 1,000 WAL
// pages: on the event loop, copying pages and fsyncing both files (1-10 ms, the longest stall a request can meet).
// Instead a worker thread with a connection of its own runs PASSIVE checkpoints every half second (they wait for no
// reader or writer), and the serving connection never checkpoints itself.
// The thread runs only while the file is written: a thread is a V8 heap of its own (about 15 MiB resident), which an
// idle gateway should not keep (issue 52). It leaves once its checkpoints have found nothing new for a while, and a
// look at the WAL's modification time every half second (one stat, on a timer) starts it again on the next write.
import { once } from 'node:events';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The thread's code: plain CommonJS, so it runs the same from src/ (tsx) and dist/. */
const code = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
const checkpoint = () => {
  try {
    return db.pragma('wal_checkpoint(PASSIVE)')[0];
  } catch {
    // Busy or closing: the next tick tries again.
    return undefined;
  }
};
// Checkpoints that found the WAL as the last one left it, all of it copied: after idleRounds of them, the thread leaves.
let idle = 0;
let lastLog = -1;
const round = () => {
  const result = checkpoint();
  const settled = result !== undefined && result.log === result.checkpointed && result.log === lastLog;
  lastLog = result?.log ?? -1;
  idle = settled ? idle + 1 : 0;
  if (idle >= workerData.idleRounds) leave();
};
const timer = setInterval(round, workerData.intervalMs);
const leave = () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
};
parentPort.once('message', leave);
`;

export interface Checkpointer {
  /** Stops watching, and stops the thread (after one last checkpoint; it closes its connection first) if it runs. */
  stop(): Promise<void>;
  /** Whether the thread runs now (tests). */
  readonly running: boolean;
}

export interface CheckpointerOptions {
  /** Milliseconds between checkpoints, and between looks at the WAL while the thread is gone (default 500). */
  intervalMs?: number;
  /** Checkpoints in a row finding nothing new before the thread leaves (default 20: ten seconds). */
  idleRounds?: number;
}

export function startCheckpointer(path: string, { intervalMs = 500, idleRounds = 20 }: CheckpointerOptions = {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const wal = `${path}-wal`;
  const walChanged = () => statSync(wal, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  // The WAL's modification time when the thread last left (or when watching began): a later one is a write it has not seen.
  let seen = walChanged();
  const start = () => {
    const thread = new Worker(code, { eval: true, workerData: { driver, path, intervalMs, idleRounds } });
    thread.unref();
    thread.on('error', () => undefined);
    worker = thread;
    exited = once(thread, 'exit').then(
      () => {
        if (worker === thread) worker = undefined;
        seen = walChanged();
      },
      () => undefined,
    );
  };
  const watch = setInterval(() => {
    if (!worker && walChanged() !== seen) start();
  }, intervalMs).unref();
  return {
    get running() {
      return worker !== undefined;
    },
    async stop() {
      clearInterval(watch);
      const thread = worker;
      if (!thread) return;
      // Held until it is gone: a caller awaiting this must not see the process run out of things to do meanwhile.
      thread.ref();
      thread.postMessage('stop');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, 2_000, 'timeout')));
      if ((await Promise.race([exited.then(() => 'exited' as const), timeout])) === 'timeout') await thread.terminate();
      clearTimeout(timer);
    },
  };
}

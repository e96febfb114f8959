// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit crosses 1,000 WAL
// pages: on the event loop, copying pages and fsyncing both files (1-10 ms, the longest stall a request can meet).
// Instead a worker thread with a connection of its own runs PASSIVE checkpoints every half second (they wait for no
// reader or writer), and the serving connection never checkpoints itself.
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The thread's code: plain CommonJS, so it runs the same from src/ (tsx) and dist/. */
const thread = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or closing: the next tick tries again.
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the thread after one last checkpoint; it closes its connection first. */
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, intervalMs = 500): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(thread, { eval: true, workerData: { driver, path, intervalMs } });
  worker.unref();
  const exited = once(worker, 'exit').then(() => undefined, () => undefined);
  worker.on('error', () => undefined);
  return {
    async stop() {
      // Held until it is gone: a caller awaiting this must not see the process run out of things to do meanwhile.
      worker.ref();
      worker.postMessage('stop');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, 2_000, 'timeout')));
      if ((await Promise.race([exited, timeout])) === 'timeout') await worker.terminate();
      clearTimeout(timer);
    },
  };
}

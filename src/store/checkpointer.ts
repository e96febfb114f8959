// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit crosses 1,000 WAL
// pages: on the event loop, copying pages and fsyncing both files (1-10 ms, the longest stall a request can meet).
// Instead a worker thread with a connection of its own runs PASSIVE checkpoints every half second (they wait for no
// reader or writer), and the serving connection never checkpoints itself.
// The thread runs only while the file is written: a thread is a V8 heap of its own (about 7 MiB resident, measured),
// which an idle gateway should not keep (issue 52). It leaves once its checkpoints have found nothing new for a while,
// and a look every half second at how many WAL frames await a checkpoint (8 bytes of the wal-index, on a timer) starts
// it again once there are `startFrames` of them: the heartbeat's one small write every 10 s (reservation-owners.ts)
// does not wake it each time, as a look at the WAL's modification time did (it ran half of an idle gateway's life).
import { once } from 'node:events';
import { closeSync, openSync, readSync } from 'node:fs';
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
// Checkpoints that copied the whole WAL, fewer than startFrames written since the last one (a heartbeat's small write
// is not work): after idleRounds of them in a row, the thread leaves.
let idle = 0;
let lastLog = -1;
const round = () => {
  const result = checkpoint();
  // A WAL begun again from its start (log below the last) holds only what was written since.
  const written = result === undefined || lastLog < 0 ? Infinity : result.log >= lastLog ? result.log - lastLog : result.log;
  const settled = result !== undefined && result.log === result.checkpointed && written < workerData.startFrames;
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
  /** WAL frames awaiting a checkpoint that start the thread (default 32: 128 KiB of 4 KiB pages; SQLite's own is 1,000). */
  startFrames?: number;
}

/**
 * Frames in the WAL that no checkpoint has copied yet, from the wal-index header in the `-shm` file
 * (sqlite.org/walformat.html: mxFrame at byte 16, nBackfill at byte 96, native byte order); 0 when it cannot be read.
 */
export function framesAwaitingCheckpoint(shm: string): number {
  const header = Buffer.alloc(100);
  let fd: number | undefined;
  try {
    fd = openSync(shm, 'r');
    if (readSync(fd, header, 0, 100, 0) < 100) return 0;
  } catch {
    return 0;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const read = (offset: number) => (isLittleEndian ? header.readUInt32LE(offset) : header.readUInt32BE(offset));
  return Math.max(0, read(16) - read(96));
}

const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function startCheckpointer(path: string, { intervalMs = 500, idleRounds = 20, startFrames = 32 }: CheckpointerOptions = {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const shm = `${path}-shm`;
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = () => {
    const thread = new Worker(code, { eval: true, workerData: { driver, path, intervalMs, idleRounds, startFrames } });
    thread.unref();
    thread.on('error', () => undefined);
    worker = thread;
    exited = once(thread, 'exit').then(
      () => {
        if (worker === thread) worker = undefined;
      },
      () => undefined,
    );
  };
  const watch = setInterval(() => {
    if (!worker && framesAwaitingCheckpoint(shm) >= startFrames) start();
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

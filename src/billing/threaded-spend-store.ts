// The embedded SpendStore as the gateway runs it: reserves and settlements batched on the event loop, committed by the
// spend thread (spend-thread.ts) on a connection of its own. A request's await resolves when the thread answers.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { SpendStore } from './spend-store.js';
import { createCapsReader, uncapped } from './sqlite-spend-caps.js';
import type { OpResult, SpendOp } from './sqlite-spend-core.js';
import { SpendOpQueue } from './spend-op-queue.js';
import { spendStoreOverQueue } from './sqlite-spend-store.js';
import type { SpendThreadAnswer, SpendThreadData, SpendThreadRequest } from './spend-thread.js';
import { spendThreadSource } from './spend-thread-source.js';
import { decodeResults, encodeOps } from './spend-thread-wire.js';

export interface ThreadedSpendOptions {
  /** The database file the thread opens (never `:memory:`: a second connection could not see it). */
  path: string;
  /** Budget periods' time zone (billing.timeZone). */
  timeZone: string;
  /** Reads the change counter of keys and workspaces; caps are cached while it stands still. */
  changeVersion?: () => number | undefined;
  /** How long a settlement may wait for others to share its commit; 0: the next turn of the event loop. */
  settleBatchMs?: number;
}

/** A SpendStore that also stops its thread. */
export interface ThreadedSpendStore extends SpendStore {
  close(): Promise<void>;
}

/**
 * `sqlite` is the event loop's own connection: it reads caps only (cached), so an uncapped key is admitted without a
 * trip to the thread. Every write goes through the thread, one transaction a batch, in the order it was queued.
 */
export function createThreadedSpendStore(sqlite: BetterSqlite3.Database, options: ThreadedSpendOptions): ThreadedSpendStore {
  const caps = createCapsReader(sqlite, options.changeVersion);
  const thread = new SpendThread({ path: options.path, timeZone: options.timeZone });
  const queue = new SpendOpQueue((ops) => thread.commit(ops), options.settleBatchMs ?? 0);
  return {
    ...spendStoreOverQueue(queue, (keyId) => uncapped(caps.capsOf(keyId))),
    async close() {
      await queue.commitQueued();
      await thread.stop();
    },
  };
}

/** The thread, started on the first batch and again after a crash; batches are answered in the order they were sent. */
class SpendThread {
  private worker: Promise<Worker> | undefined;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve(results: OpResult[]): void; reject(error: unknown): void }>();

  constructor(private readonly data: SpendThreadData) {}

  async commit(ops: SpendOp[]): Promise<OpResult[]> {
    const worker = await (this.worker ??= this.start().catch((error: unknown) => {
      this.worker = undefined;
      throw error;
    }));
    const seq = ++this.seq;
    const answered = new Promise<OpResult[]>((resolve, reject) => this.waiting.set(seq, { resolve, reject }));
    // Held while a batch is out: a process awaiting its commit must not run out of things to do meanwhile.
    if (this.waiting.size === 1) worker.ref();
    worker.postMessage({ seq, ops: encodeOps(ops) } satisfies SpendThreadRequest);
    return answered;
  }

  private async start(): Promise<Worker> {
    const source = await spendThreadSource();
    const workerData = { spendThread: this.data };
    // The bundle is CommonJS and needs no loader: none of this process's flags (`--input-type`, `--import tsx`) applies to it.
    const worker = 'file' in source ? new Worker(source.file, { workerData }) : new Worker(source.code, { eval: true, workerData, execArgv: [] });
    worker.unref();
    worker.on('message', (answer: SpendThreadAnswer) => this.answer(worker, answer));
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`spend thread exited (code ${code})`)));
    return worker;
  }

  private answer(worker: Worker, { seq, results }: SpendThreadAnswer): void {
    const waiter = this.waiting.get(seq);
    this.waiting.delete(seq);
    if (this.waiting.size === 0) worker.unref();
    waiter?.resolve(decodeResults(results));
  }

  /** The thread died: what it had not answered fails (each reservation is swept when it expires); the next batch starts another. */
  private fail(worker: Worker, error: unknown): void {
    void this.worker?.then((current) => {
      if (current !== worker) return;
      this.worker = undefined;
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    });
  }

  async stop(): Promise<void> {
    const worker = await this.worker;
    if (!worker) return;
    this.worker = undefined;
    worker.ref();
    const exited = once(worker, 'exit').then(() => 'exited', () => 'exited');
    worker.postMessage('close' satisfies SpendThreadRequest);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, 2_000, 'timeout')));
    if ((await Promise.race([exited, timeout])) === 'timeout') await worker.terminate();
    clearTimeout(timer);
  }
}

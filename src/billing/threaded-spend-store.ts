// The embedded SpendStore as the gateway runs it: reserves and settlements batched on the event loop, committed by the
// spend thread (spend-thread.ts) on a connection of its own. A request's await resolves when the thread answers.
// The thread runs only while batches come: a thread is a V8 heap and a module graph of its own (about 6-11 MiB
// resident, measured), which an idle gateway should not keep (issue 52). It leaves 20-25 s after its last batch
// (`idleMs`, looked at every quarter of it), before the process settles after 30 s quiet, so the settling's trim gives
// back what the thread had allocated too; the next batch starts another (about 40 ms, measured). A sweep of expired
// reservations while it is gone (the background job, at start and every interval) commits on the event loop's
// connection instead of starting it: that process is idle.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { SpendStore } from './spend-store.js';
import { createCapsReader, uncapped } from './sqlite-spend-caps.js';
import { SqliteSpendCore, type OpResult, type SpendOp } from './sqlite-spend-core.js';
import { BudgetCalendar } from '../config/periods.js';
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
  /** Milliseconds without a batch after which the thread leaves (default 20,000). */
  idleMs?: number;
}

/** A SpendStore that also stops its thread. */
export interface ThreadedSpendStore extends SpendStore {
  close(): Promise<void>;
  /** Whether the thread runs now (tests). */
  readonly threadRunning: boolean;
}

/**
 * `sqlite` is the event loop's own connection: it reads caps only (cached), so an uncapped key is admitted without a
 * trip to the thread. Every write goes through the thread, one transaction a batch, in the order it was queued.
 */
export function createThreadedSpendStore(sqlite: BetterSqlite3.Database, options: ThreadedSpendOptions): ThreadedSpendStore {
  const caps = createCapsReader(sqlite, options.changeVersion);
  const thread = new SpendThread({ path: options.path, timeZone: options.timeZone }, options.idleMs ?? 20_000);
  // Made on the first sweep that finds the thread gone; outside anyone's open transaction only (it would commit with it).
  let here: SqliteSpendCore | undefined;
  const commit = (ops: SpendOp[]) => {
    if (thread.running || sqlite.inTransaction || !ops.every((op) => op.op === 'sweep')) return thread.commit(ops);
    here ??= new SqliteSpendCore(sqlite, caps, new BudgetCalendar(options.timeZone));
    return here.runBatch(ops);
  };
  const queue = new SpendOpQueue(commit, options.settleBatchMs ?? 0);
  return {
    ...spendStoreOverQueue(queue, (keyId) => uncapped(caps.capsOf(keyId))),
    get threadRunning() {
      return thread.running;
    },
    async close() {
      await queue.commitQueued();
      await thread.stop();
    },
  };
}

/**
 * The thread, started on the first batch, again after a crash, and again after it left for want of work; batches are
 * answered in the order they were sent (it leaves only with none outstanding, so a batch never waits on two threads).
 */
class SpendThread {
  private worker: Promise<Worker> | undefined;
  /** The started thread `worker` resolves to, while it is the one batches go to. */
  private current: Worker | undefined;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve(results: OpResult[]): void; reject(error: unknown): void }>();
  /** Looks, every quarter of `idleMs` while a thread runs, whether it has had nothing to do since `lastAnswer` (one timer, not one a batch). */
  private idleCheck: NodeJS.Timeout | undefined;
  private lastAnswer = 0;

  constructor(
    private readonly data: SpendThreadData,
    private readonly idleMs: number,
  ) {}

  get running(): boolean {
    return this.worker !== undefined;
  }

  async commit(ops: SpendOp[]): Promise<OpResult[]> {
    let worker: Worker;
    // A thread that left while this awaited it is not sent anything: the next one is.
    do {
      worker = await (this.worker ??= this.start().catch((error: unknown) => {
        this.worker = undefined;
        throw error;
      }));
    } while (worker !== this.current);
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
    this.current = worker;
    this.lastAnswer = Date.now();
    clearInterval(this.idleCheck);
    this.idleCheck = setInterval(() => this.leaveIfIdle(worker), this.idleMs / 4).unref();
    return worker;
  }

  private answer(worker: Worker, { seq, results }: SpendThreadAnswer): void {
    const waiter = this.waiting.get(seq);
    this.waiting.delete(seq);
    if (this.waiting.size === 0) {
      worker.unref();
      this.lastAnswer = Date.now();
    }
    waiter?.resolve(decodeResults(results));
  }

  /** Nothing committed for `idleMs`: the thread closes its connection and ends; the next batch starts another. */
  private leaveIfIdle(worker: Worker): void {
    if (this.current !== worker) return clearInterval(this.idleCheck);
    if (this.waiting.size > 0 || Date.now() - this.lastAnswer < this.idleMs) return;
    clearInterval(this.idleCheck);
    this.worker = undefined;
    this.current = undefined;
    worker.postMessage('close' satisfies SpendThreadRequest);
  }

  /** The thread died: what it had not answered fails (each reservation is swept when it expires); the next batch starts another. */
  private fail(worker: Worker, error: unknown): void {
    if (this.current === worker) {
      this.current = undefined;
      clearInterval(this.idleCheck);
    }
    void this.worker?.then((current) => {
      if (current !== worker) return;
      this.worker = undefined;
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    });
  }

  async stop(): Promise<void> {
    clearInterval(this.idleCheck);
    const worker = await this.worker;
    if (!worker) return;
    this.worker = undefined;
    this.current = undefined;
    worker.ref();
    const exited = once(worker, 'exit').then(() => 'exited', () => 'exited');
    worker.postMessage('close' satisfies SpendThreadRequest);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, 2_000, 'timeout')));
    if ((await Promise.race([exited, timeout])) === 'timeout') await worker.terminate();
    clearTimeout(timer);
  }
}

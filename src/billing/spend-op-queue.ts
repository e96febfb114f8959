// Group commit for the embedded spend store: operations queued during one turn of the event loop (settlements for up to
// `settleBatchMs`) go to the database together, one transaction for all of them.
import type { OpResult, SpendOp } from './sqlite-spend-core.js';

/** Commits a batch in order and answers each operation; it may answer at once (same thread) or later (spend thread). */
export type CommitBatch = (ops: SpendOp[]) => OpResult[] | Promise<OpResult[]>;

/** Most operations one commit takes; a fuller queue commits on the next turn. */
const MAX_BATCH = 512;

interface Waiter {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Reserves commit on the next turn of the event loop (a request waits for its reservation); settlements wait up to
 * `settleBatchMs` for company (a commit costs several times a row) or ride along with the next reserve. Until a
 * settlement commits, its reservation keeps holding the budget, so a cap is never passed meanwhile.
 */
export class SpendOpQueue {
  private ops: SpendOp[] = [];
  private waiters: Waiter[] = [];
  private turnScheduled = false;
  private timer: NodeJS.Timeout | undefined;
  /** Settles when every batch handed over so far has been answered. */
  private landed: Promise<void> = Promise.resolve();
  private readonly onTurn = () => {
    this.turnScheduled = false;
    void this.commitQueued();
  };
  private readonly onTimer = () => {
    this.timer = undefined;
    void this.commitQueued();
  };

  /** `ready`: false while the batch cannot commit now (inside someone else's open transaction): it tries next turn. */
  constructor(
    private readonly commit: CommitBatch,
    private readonly settleBatchMs: number,
    private readonly ready: () => boolean = () => true,
  ) {}

  /** Queues an operation; `soon`: commit on the next turn rather than after the settlement window. */
  push<T>(op: SpendOp, soon: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.ops.push(op);
      this.waiters.push({ resolve: resolve as (value: unknown) => void, reject });
      if (soon || this.settleBatchMs === 0 || this.ops.length >= MAX_BATCH) this.commitThisTurn();
      else this.timer ??= setTimeout(this.onTimer, this.settleBatchMs).unref();
    });
  }

  /** Hands the queue over now; resolves once it and every batch before it have been answered. */
  commitQueued(): Promise<void> {
    if (this.ops.length === 0) return this.landed;
    if (!this.ready()) {
      this.commitThisTurn();
      return this.landed;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const ops = this.ops;
    const waiters = this.waiters;
    this.ops = [];
    this.waiters = [];
    this.landed = this.send(ops, waiters);
    return this.landed;
  }

  private async send(ops: SpendOp[], waiters: Waiter[]): Promise<void> {
    try {
      const results = await this.commit(ops);
      for (let i = 0; i < waiters.length; i++) {
        const result = results[i];
        if (result.ok) waiters[i].resolve(result.value);
        else waiters[i].reject(result.error);
      }
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  private commitThisTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(this.onTurn);
  }
}

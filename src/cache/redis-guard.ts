// How the cache waits for Redis: each command bounded by the store's timeout (past it, the caller goes on as if the
// store had nothing), the deadlines of all commands in flight kept by one timer, and a circuit: after a failure (an error,
// or no answer in time) nothing is sent to Redis for a back-off, then one command probes it, and only its answer closes
// the circuit. A Redis that stalls costs one request one timeout per back-off, not every request a timeout each.

/** The first back-off after a failure, and the longest, in milliseconds: each failed probe doubles it. */
export const FIRST_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8000;

interface Waiter {
  resolve(value: undefined): void;
  /** Unix milliseconds (the timer's clock) past which it is answered with undefined. */
  due: number;
  settled: boolean;
  /** The command that probes an open circuit: its answer closes it, its failure doubles the back-off. */
  probe: boolean;
  next?: Waiter;
}

export interface GuardLog {
  warn(object: object, message: string): void;
}

export class RedisGuard {
  /** Commands in flight, oldest deadline first (every command has the same timeout, so they are due in the order they began). */
  private first?: Waiter;
  private last?: Waiter;
  private timer?: NodeJS.Timeout;
  /** While open (non-zero): the services' clock time before which nothing is sent. */
  private openUntil = 0;
  private backoffMs = FIRST_BACKOFF_MS;
  private probing = false;
  private lastWarned = -Infinity;
  /** Commands not sent because the circuit was open, and commands that failed or timed out (metrics). */
  skipped = 0;
  failures = 0;

  constructor(
    private readonly timeoutMs: number,
    private readonly log: GuardLog,
    /** The clock the back-off is judged by (the services' clock). */
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether the circuit is open now (nothing would be sent). */
  get open(): boolean {
    return this.openUntil !== 0 && (this.probing || this.now() < this.openUntil);
  }

  /** The work's result; undefined at once while the circuit is open, and past the timeout or on an error. Never throws. */
  run<T>(work: () => Promise<T>): Promise<T | undefined> {
    if (this.openUntil !== 0) {
      if (this.probing || this.now() < this.openUntil) {
        this.skipped++;
        return Promise.resolve(undefined);
      }
      this.probing = true;
    }
    const probe = this.probing;
    return new Promise<T | undefined>((resolve) => {
      const waiter: Waiter = { resolve, due: Date.now() + this.timeoutMs, settled: false, probe };
      this.enqueue(waiter);
      let started: Promise<T>;
      try {
        started = work();
      } catch (err) {
        started = Promise.reject(err);
      }
      started.then(
        (value) => {
          if (waiter.settled) return;
          waiter.settled = true;
          this.answered(probe);
          resolve(value);
        },
        (err: unknown) => {
          if (waiter.settled) return;
          waiter.settled = true;
          this.failed(err, probe);
          resolve(undefined);
        },
      );
    });
  }

  /** Stops the deadline timer (the store is closing); waiters still pending are answered with undefined. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (let w = this.first; w; w = w.next) if (!w.settled) ((w.settled = true), w.resolve(undefined));
    this.first = this.last = undefined;
  }

  private answered(probe: boolean): void {
    if (!probe) return;
    this.openUntil = 0;
    this.probing = false;
    this.backoffMs = FIRST_BACKOFF_MS;
  }

  private failed(err: unknown, probe: boolean): void {
    this.failures++;
    if (this.openUntil !== 0 && !probe) return;
    if (probe) this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.probing = false;
    this.openUntil = this.now() + this.backoffMs;
    const at = Date.now();
    if (at - this.lastWarned < 60_000) return;
    this.lastWarned = at;
    this.log.warn({ err }, 'the response cache store failed; requests go upstream (misses) and Redis is probed again after a back-off');
  }

  private enqueue(waiter: Waiter): void {
    if (this.last) this.last.next = waiter;
    else this.first = waiter;
    this.last = waiter;
    if (!this.timer) this.arm(this.timeoutMs);
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.expire(), Math.max(1, ms));
    this.timer.unref();
  }

  /** Answers every waiter past its deadline with undefined (a failure), drops those settled, and re-arms for the next. */
  private expire(): void {
    this.timer = undefined;
    const at = Date.now();
    let w = this.first;
    while (w && (w.settled || w.due <= at)) {
      if (!w.settled) {
        w.settled = true;
        this.failed(new Error(`no answer from Redis within ${this.timeoutMs} ms`), w.probe);
        w.resolve(undefined);
      }
      w = w.next;
    }
    this.first = w;
    if (!w) this.last = undefined;
    else this.arm(w.due - at);
  }
}

// An upstream answer's body read as its chunks straight from the call's dispatch handler, for the event-stream relay: no
// Readable in between (undici's BodyReadable costs the first event a stream's state, its nextTicks and the async
// iterator's promises), with what the relay needs from a stream done here once: backpressure (the socket pauses past
// 64 KiB unread), an abort of the call when the reader stops early, read-ahead while the first event waits, and the
// idle bound of a stream that may fail over (no byte for idleMs).
import { errors } from '../net/undici.js';

/** Bytes kept before anyone reads them past which the upstream socket is paused (undici's body highWaterMark). */
export const PAUSE_AT = 64 * 1024;

export interface ChunkReadOptions {
  /** Chunks are kept, however many, and none is handed out until this settles (the socket is never paused meanwhile). */
  readAheadUntil?: Promise<unknown>;
  /** A read waiting this long with nothing arrived fails with `idleError()`, and the call is aborted. */
  idleMs?: number;
  idleError?: () => Error;
}

/** What the reader needs of its call: to resume the paused socket, and to abort the call. */
export interface ChunkSource {
  resume(): void;
  abort(reason: Error): void;
}

const finished: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * The chunks of one answer, in order, then its end or its failure (the chunks that came before a failure are handed out
 * first). The call's handler pushes; one consumer pulls (for await). Leaving the loop early aborts the call, as
 * destroying its body stream does.
 */
export class AnswerChunks implements AsyncIterableIterator<Buffer> {
  private queue: Buffer[];
  private bytes: number;
  private ended = false;
  private error: unknown;
  /** The consumer has stopped, or was handed the end or the failure: nothing more is handed out. */
  private done = false;
  private holding: boolean;
  private paused: boolean;
  private waiting: { resolve: (r: IteratorResult<Buffer>) => void; reject: (err: unknown) => void } | undefined;
  private readonly idleMs: number | undefined;
  private readonly idleError: (() => Error) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly released: Promise<void> | undefined;

  constructor(
    private readonly source: ChunkSource,
    queued: Buffer[],
    bytes: number,
    paused: boolean,
    options: ChunkReadOptions = {},
  ) {
    this.queue = queued;
    this.bytes = bytes;
    this.paused = paused;
    this.idleMs = options.idleMs;
    this.idleError = options.idleError;
    this.holding = options.readAheadUntil !== undefined;
    if (options.readAheadUntil) {
      this.released = options.readAheadUntil.then(release, release).then(() => this.release());
    }
    // Chunks held back past the pause point when read-ahead starts: read on.
    if (this.holding) this.resumeSocket();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Bytes arrived and not handed out yet. */
  get buffered(): number {
    return this.bytes;
  }

  /** One chunk from the call; false asks the call to pause its socket until chunks are taken. */
  push(chunk: Buffer): boolean {
    if (this.done) return true;
    const waiting = this.waiting;
    if (waiting && !this.holding) {
      this.waiting = undefined;
      waiting.resolve({ done: false, value: chunk });
      return true;
    }
    this.queue.push(chunk);
    this.bytes += chunk.length;
    if (this.holding || this.bytes < PAUSE_AT) return true;
    this.paused = true;
    return false;
  }

  /** The answer ended. */
  end(): void {
    this.ended = true;
    this.settleWaiting();
  }

  /** The answer failed (the call's error, or the caller's abort): the chunks before it are still handed out first. */
  fail(err: unknown): void {
    if (this.error !== undefined || this.ended) return;
    this.error = err;
    this.settleWaiting();
  }

  next(): Promise<IteratorResult<Buffer>> {
    if (this.done) return Promise.resolve(finished);
    if (this.holding) return this.released!.then(() => this.next());
    if (this.queue.length) return Promise.resolve({ done: false, value: this.take() });
    if (this.error !== undefined) {
      this.finish();
      return Promise.reject(this.error);
    }
    if (this.ended) {
      this.finish();
      return Promise.resolve(finished);
    }
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      if (this.idleMs !== undefined) this.armIdle();
    });
  }

  /** The consumer stops: a call whose answer has not ended is aborted (undici's RequestAbortedError, as a destroyed body). */
  return(): Promise<IteratorResult<Buffer>> {
    if (!this.done) {
      this.finish();
      this.queue = [];
      this.bytes = 0;
      if (!this.ended && this.error === undefined) this.source.abort(new errors.RequestAbortedError());
    }
    return Promise.resolve(finished);
  }

  /** Every chunk that came meanwhile, as one (as a Readable's read() gives them): events that arrived together go out in one write. */
  private take(): Buffer {
    const queue = this.queue;
    const chunk = queue.length === 1 ? queue[0] : Buffer.concat(queue, this.bytes);
    this.queue = [];
    this.bytes = 0;
    this.resumeSocket();
    return chunk;
  }

  private resumeSocket(): void {
    if (!this.paused) return;
    this.paused = false;
    this.source.resume();
  }

  private release(): void {
    this.holding = false;
    if (this.paused && this.bytes < PAUSE_AT) this.resumeSocket();
  }

  /** A read waiting when the end or the failure came gets it (the queue is empty whenever a read waits). */
  private settleWaiting(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    this.finish();
    if (this.error !== undefined) waiting.reject(this.error);
    else waiting.resolve(finished);
  }

  private finish(): void {
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** One timer for the reader's life, re-armed at each wait; it fails only a read still waiting. */
  private armIdle(): void {
    if (this.timer) this.timer.refresh();
    else this.timer = setTimeout(idleFired, this.idleMs, this);
  }

  idleFired(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    const err = this.idleError?.() ?? new errors.BodyTimeoutError();
    this.error = err;
    this.finish();
    waiting.reject(err);
    this.source.abort(err);
  }
}

const release = () => undefined;

function idleFired(reader: AnswerChunks): void {
  reader.idleFired();
}

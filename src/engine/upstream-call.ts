// One upstream call on undici's dispatcher API (Dispatcher.dispatch with a handler of its own) instead of
// `dispatcher.request`: the request API wraps every answer in a Readable (a BodyReadable, its state, its nextTicks and
// consume bookkeeping) and an AsyncResource. Here the handler keeps the answer's chunks itself: a JSON answer read whole
// (the decode stage's readText) is joined straight from them, no stream in between. Whoever asks for `body` (an event
// stream relayed, an error read, bytes piped on) gets undici's own BodyReadable, made then and fed what came so far, so
// every other reader sees what it saw before: the same stream class, backpressure, abort on destroy, dump(). An event
// stream relayed takes the chunks themselves (`chunks`, answer-chunks.ts).
import { createRequire } from 'node:module';
import { errors, util, type Dispatcher } from '../net/undici.js';
import type { Readable } from 'node:stream';
import type { AbortSource } from '../net/call-abort.js';
import type { UpstreamResponse } from './upstream-request.js';
import { AnswerChunks, PAUSE_AT, type ChunkReadOptions } from './answer-chunks.js';

const noop = () => undefined;
type BodyReadable = Dispatcher.ResponseData['body'] & Readable;
interface BodyReadableOptions {
  resume: () => void;
  abort: () => void;
  contentType?: string;
  contentLength?: number;
}

// undici's body stream (lib/api/readable.js: what `request` answers with); undici's package declares no exports map.
const { Readable: UndiciBodyReadable } = createRequire(import.meta.url)('undici/lib/api/readable.js') as { Readable: new (options: BodyReadableOptions) => BodyReadable };

type Signal = AbortSignal | AbortSource;

export interface UpstreamCallOptions {
  method: Dispatcher.HttpMethod;
  path: string;
  headers: Record<string, string>;
  body?: Dispatcher.DispatchOptions['body'];
  signal?: Signal;
}

/** Sends one request on `dispatcher`; resolves with its answer once its head arrived (its body follows, see UpstreamAnswer). */
export function callUpstream(dispatcher: Dispatcher, options: UpstreamCallOptions): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    const handler = new CallHandler(options.signal, resolve, reject);
    dispatcher.dispatch({ method: options.method, path: options.path, headers: options.headers, body: options.body }, handler);
  });
}

interface TextRead {
  limit: number;
  tooLarge: () => Error;
  resolve: (text: string) => void;
  reject: (err: unknown) => void;
}

/** The dispatch handler (undici's own callback shape, no wrapper): the head resolves the call, the chunks go to its answer. */
class CallHandler implements Dispatcher.DispatchHandler {
  abort: ((reason?: Error) => void) | undefined;
  context: object | undefined;
  reason: unknown = null;
  answer: UpstreamAnswer | undefined;
  private signal: Signal | undefined;
  private resolve: ((answer: UpstreamResponse) => void) | undefined;
  private reject: ((err: unknown) => void) | undefined;

  constructor(signal: Signal | undefined, resolve: (answer: UpstreamResponse) => void, reject: (err: unknown) => void) {
    this.resolve = resolve;
    this.reject = reject;
    if (signal?.aborted) this.reason = signal.reason ?? new errors.RequestAbortedError();
    else if (signal) {
      this.signal = signal;
      listen(signal, this.onAbort);
    }
  }

  /** The caller's signal aborted: before the head, the request is aborted; after it, the body is ended with the reason. */
  private readonly onAbort = (): void => {
    const reason = this.signal?.reason ?? new errors.RequestAbortedError();
    this.reason = reason;
    this.stopListening();
    if (this.answer) this.answer.abortWith(reason);
    else this.abort?.(reason as Error);
  };

  stopListening(): void {
    if (!this.signal) return;
    unlisten(this.signal, this.onAbort);
    this.signal = undefined;
  }

  onConnect(abort: (reason?: Error) => void, context?: object): void {
    if (this.reason) return abort(this.reason as Error);
    this.abort = abort;
    this.context = context;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode < 200) return true;
    const answer = new UpstreamAnswer(this, statusCode, statusText, util.parseHeaders(rawHeaders) as Record<string, string | string[] | undefined>, resume);
    this.answer = answer;
    const resolve = this.resolve!;
    this.resolve = this.reject = undefined;
    resolve(answer);
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.answer!.chunk(chunk);
  }

  onComplete(trailers: string[] | Buffer[] | null): void {
    this.stopListening();
    this.answer!.complete(trailers);
  }

  onError(err: Error): void {
    this.stopListening();
    if (this.reject) {
      const reject = this.reject;
      this.resolve = this.reject = undefined;
      reject(err);
    } else this.answer?.fail(err);
  }
}

function listen(signal: Signal, listener: () => void): void {
  if ('addEventListener' in signal) signal.addEventListener('abort', listener, { once: true });
  else signal.once('abort', listener);
}

function unlisten(signal: Signal, listener: () => void): void {
  if ('removeEventListener' in signal) signal.removeEventListener('abort', listener);
  else signal.removeListener('abort', listener);
}

/**
 * An upstream's answer, as undici's request API answers (statusCode, headers, trailers, body), with its body's chunks
 * held here until someone reads them: `readText` joins them (the JSON hot path), `body` makes the stream.
 */
class UpstreamAnswer implements UpstreamResponse {
  readonly trailers: Record<string, string> = {};
  readonly opaque = null;
  readonly context: object;
  private kept: Buffer[] = [];
  private bytes = 0;
  private ended = false;
  private error: unknown;
  private paused = false;
  private reading: TextRead | undefined;
  private stream: BodyReadable | undefined;
  private reader: AnswerChunks | undefined;

  constructor(
    private readonly handler: CallHandler,
    readonly statusCode: number,
    readonly statusText: string,
    readonly headers: Record<string, string | string[] | undefined>,
    private readonly resume: () => void,
  ) {
    this.context = handler.context ?? {};
  }

  /** The answer's body as undici's stream, made on first use and given the chunks that came before. */
  get body(): BodyReadable {
    if (this.stream) return this.stream;
    if (this.reader) throw new Error('the answer is already read as chunks');
    const contentLength = Number(this.headers['content-length']);
    const stream = new UndiciBodyReadable({
      resume: this.resume,
      abort: () => this.handler.abort?.(),
      contentType: typeof this.headers['content-type'] === 'string' ? this.headers['content-type'] : '',
      contentLength: Number.isFinite(contentLength) ? contentLength : undefined,
    });
    // A reader that destroys the stream itself (an answer refused by its length) listens to nothing: its AbortError is
    // no one's uncaught exception. Whoever reads the stream still gets every error through its own listener.
    stream.on('error', noop);
    this.stream = stream;
    if (this.reading) this.reading.reject(new Error('the answer was read as text and as a stream at once'));
    for (const chunk of this.kept.splice(0)) stream.push(chunk);
    if (this.error !== undefined) queueMicrotask(() => stream.destroy(this.error as Error));
    else if (this.ended) stream.push(null);
    else if (this.paused) {
      this.paused = false;
      this.resume();
    }
    return stream;
  }

  /**
   * The whole body as UTF-8 text, refused with `tooLarge()` (and the call aborted) once it passes `limit` bytes; from the
   * chunks themselves, no stream. Once `body` was asked for, the stream is read instead.
   */
  readText(limit: number, tooLarge: () => Error): Promise<string> {
    if (this.stream || this.reader) return Promise.reject(new Error('the answer is already read as a stream'));
    return new Promise((resolve, reject) => {
      this.reading = { limit, tooLarge, resolve, reject };
      this.settleRead();
      if (this.reading && this.paused) {
        this.paused = false;
        this.resume();
      }
    });
  }

  /**
   * The body's chunks as they come, straight from the handler (no stream): what came so far first. Backpressure,
   * read-ahead and the idle bound are the reader's (answer-chunks.ts); leaving it early aborts the call.
   */
  chunks(options?: ChunkReadOptions): AnswerChunks {
    if (this.reader || this.stream || this.reading) throw new Error('the answer is already being read');
    const reader = new AnswerChunks({ resume: this.resume, abort: (reason) => this.handler.abort?.(reason) }, this.kept, this.bytes, this.paused, options);
    this.kept = [];
    this.bytes = 0;
    this.paused = false;
    this.reader = reader;
    if (this.error !== undefined) reader.fail(this.error);
    else if (this.ended) reader.end();
    return reader;
  }

  /** Bytes of the body that came and are not read yet. */
  get bufferedBytes(): number {
    return this.reader ? this.reader.buffered : this.stream ? this.stream.readableLength : this.bytes;
  }

  /** Nobody reads the rest: an answer not ended yet is aborted (its stream destroyed, its reader stopped). */
  cancel(): void {
    if (this.reader) void this.reader.return();
    else this.body.destroy();
  }

  /** One chunk of the body; false asks undici to pause the socket until it is read. */
  chunk(chunk: Buffer): boolean {
    if (this.reader) return this.reader.push(chunk);
    if (this.stream) return this.stream.push(chunk);
    this.kept.push(chunk);
    this.bytes += chunk.length;
    if (this.reading) {
      this.settleRead();
      return true;
    }
    if (this.bytes < PAUSE_AT) return true;
    this.paused = true;
    return false;
  }

  complete(trailers: string[] | Buffer[] | null): void {
    if (trailers) util.parseHeaders(trailers as Buffer[], this.trailers);
    this.ended = true;
    if (this.reader) this.reader.end();
    else if (this.stream) this.stream.push(null);
    else this.settleRead();
  }

  fail(err: unknown): void {
    if (this.error !== undefined) return;
    this.error = err;
    if (this.reader) return this.reader.fail(err);
    const stream = this.stream;
    // As undici's request API does: queued handlers run before the stream is destroyed.
    if (stream) queueMicrotask(() => stream.destroy(err as Error));
    else this.settleRead();
  }

  /** The caller's signal aborted after the head: the body ends with its reason. */
  abortWith(reason: unknown): void {
    if (this.reader) {
      this.reader.fail(reason);
      this.handler.abort?.(reason as Error);
    } else if (this.stream) this.stream.destroy(reason as Error);
    else if (!this.ended) {
      this.handler.abort?.(reason as Error);
      this.fail(reason);
    }
  }

  private settleRead(): void {
    const read = this.reading;
    if (!read) return;
    if (this.error !== undefined) {
      this.reading = undefined;
      read.reject(this.error);
    } else if (this.bytes > read.limit) {
      this.reading = undefined;
      const err = read.tooLarge();
      this.error = err;
      this.kept = [];
      this.handler.stopListening();
      this.handler.abort?.(err);
      read.reject(err);
    } else if (this.ended) {
      this.reading = undefined;
      const chunks = this.kept;
      this.kept = [];
      read.resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, this.bytes).toString('utf8'));
    }
  }
}

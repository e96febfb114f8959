// The one capped read of a body into memory: every stream the gateway buffers (upstream answers, remote files, form
// parts) is read here, refused (or cut, for error text) the moment it passes its limit, never buffered whole first.

export interface CappedReadOptions {
  /** Bytes already spent of the same limit (earlier parts of one form). */
  used?: number;
  /** Called with each chunk's size as it arrives (a hold on a process-wide byte budget). */
  hold?(bytes: number): void;
}

type Body = AsyncIterable<unknown> & { destroy?(): unknown };

/** A Node stream read by its events: no async iterator, no promise per chunk (the hot path reads every answer here). */
interface EventBody {
  on(event: 'data', listener: (chunk: unknown) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
  destroy(error?: Error): unknown;
  readableEnded?: boolean;
  destroyed?: boolean;
}

const asBuffer = (chunk: unknown): Buffer => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
/** A Node stream still to be read (one already ended or destroyed goes through the iterator, which knows its state). */
const isEventBody = (body: Body): body is Body & EventBody => {
  const stream = body as Partial<EventBody>;
  return typeof stream.on === 'function' && typeof stream.removeListener === 'function' && !stream.readableEnded && !stream.destroyed;
};

/**
 * Reads `body` whole while `used` plus its bytes stay within `limit`; one byte more destroys the body and throws
 * what `tooLarge` makes.
 */
export function readCapped(body: Body, limit: number, tooLarge: () => Error, options: CappedReadOptions = {}): Promise<Buffer> {
  return isEventBody(body) ? new CappedRead(body, limit, tooLarge, options).done : readIterable(body, limit, tooLarge, options);
}

/** One read of a Node stream: its listeners are methods of one object, removed when it settles. */
class CappedRead {
  readonly done: Promise<Buffer>;
  private readonly chunks: Buffer[] = [];
  private size: number;
  private settled = false;
  private resolve!: (bytes: Buffer) => void;
  private reject!: (error: unknown) => void;
  private readonly onData = (raw: unknown): void => this.data(raw);
  private readonly onEnd = (): void => this.settle(undefined);
  private readonly onClose = (): void => this.settle(this.body.readableEnded ? undefined : new Error('the body ended before it was complete'));
  private readonly onError = (error: Error): void => this.settle(error);

  constructor(
    private readonly body: EventBody,
    private readonly limit: number,
    private readonly tooLarge: () => Error,
    private readonly options: CappedReadOptions,
  ) {
    this.size = options.used ?? 0;
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    body.on('data', this.onData);
    body.on('end', this.onEnd);
    body.on('close', this.onClose);
    body.on('error', this.onError);
  }

  private data(raw: unknown): void {
    const chunk = asBuffer(raw);
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.settle(this.tooLarge());
      this.body.destroy();
      return;
    }
    try {
      this.options.hold?.(chunk.length);
    } catch (error) {
      // A hold refused (the process-wide byte budget is spent): the read fails with it, as the loop's would.
      this.settle(error);
      this.body.destroy();
      return;
    }
    this.chunks.push(chunk);
  }

  /** Once; the error listener stays, so an error after the end (a late socket failure) is not thrown at the process. */
  private settle(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    const { body } = this;
    body.removeListener('data', this.onData);
    body.removeListener('end', this.onEnd);
    body.removeListener('close', this.onClose);
    if (error === undefined) this.resolve(this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks));
    else this.reject(error);
  }
}

async function readIterable(body: Body, limit: number, tooLarge: () => Error, options: CappedReadOptions): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = options.used ?? 0;
  for await (const raw of body) {
    const chunk = asBuffer(raw);
    size += chunk.length;
    if (size > limit) {
      body.destroy?.();
      throw tooLarge();
    }
    options.hold?.(chunk.length);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Reads at most `limit` bytes of `body` and drops the rest unread (the body is destroyed either way). */
export async function readPrefix(body: Body, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const raw of body) {
    const chunk = asBuffer(raw);
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) break;
  }
  body.destroy?.();
  return Buffer.concat(chunks).subarray(0, limit);
}

// The one capped read of a body into memory: every stream the gateway buffers (upstream answers, remote files, form
// parts) is read here, refused (or cut, for error text) the moment it passes its limit, never buffered whole first.

export interface CappedReadOptions {
  /** Bytes already spent of the same limit (earlier parts of one form). */
  used?: number;
  /** Called with each chunk's size as it arrives (a hold on a process-wide byte budget). */
  hold?(bytes: number): void;
}

type Body = AsyncIterable<unknown> & { destroy?(): unknown };

const asBuffer = (chunk: unknown): Buffer => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));

/**
 * Reads `body` whole while `used` plus its bytes stay within `limit`; one byte more destroys the body and throws
 * what `tooLarge` makes.
 */
export async function readCapped(body: Body, limit: number, tooLarge: () => Error, options: CappedReadOptions = {}): Promise<Buffer> {
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

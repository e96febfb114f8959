// Where cached answers live: a byte-bounded LRU map (each process its own; lru.ts says why not keyv's memory path) or
// keyv over Redis (every worker and replica sharing one). A slow or failed store never fails a request: a read past the
// timeout is a miss, a write past it is dropped, an error is logged at most once a minute.
import Keyv from 'keyv';
import type { CacheConfig } from '../config/cache.js';
import { ByteBoundedLru } from './lru.js';

/** One cached answer and what it cost when it was fetched. */
export interface CacheEntry {
  /** Unix milliseconds the answer was stored (its age is counted from here). */
  at: number;
  model: string;
  channel: string;
  costMicros: number;
  currency: string;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  /** The JSON answer as the client got it. */
  json?: string;
  /** The event stream as the client got it, and the stream_options it was asked with. */
  sse?: string;
  sseOptions?: string;
}

export interface StoreLog {
  warn(object: object, message: string): void;
}

export class ResponseStore {
  private lastError = 0;

  private constructor(
    private readonly timeoutMs: number,
    private readonly log: StoreLog,
    /** The memory store (bytes held, evictions); absent on Redis. */
    readonly memory?: ByteBoundedLru,
    private readonly keyv?: Keyv,
  ) {
    keyv?.on('error', (err: unknown) => this.failed(err));
  }

  static async open(config: CacheConfig, redisUrl: string | undefined, log: StoreLog, now: () => number = Date.now): Promise<ResponseStore> {
    if (config.store === 'redis') {
      const { default: KeyvRedis } = await import('@keyv/redis');
      // Commands are not queued while Redis is away: a request waits for the store at most timeoutMs anyway.
      const client = { url: config.url ?? redisUrl ?? 'redis://127.0.0.1:6379', disableOfflineQueue: true, socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000) } };
      const store = new KeyvRedis(client, { throwOnConnectError: false, throwOnErrors: false });
      return new ResponseStore(config.timeoutMs, log, undefined, new Keyv({ store, namespace: config.namespace, useKeyPrefix: false }));
    }
    return new ResponseStore(config.timeoutMs, log, new ByteBoundedLru(config.maxBytes, now));
  }

  /** The entry under `key`; undefined when there is none, or the store did not answer in time. */
  async read(key: string): Promise<CacheEntry | undefined> {
    const text = this.memory ? this.memory.get(key) : await this.bounded(this.keyv!.get<string>(key));
    if (typeof text !== 'string') return undefined;
    try {
      return JSON.parse(text) as CacheEntry;
    } catch {
      return undefined;
    }
  }

  /** Stores `text` (a serialised entry) for `ttlMs`; false when the store did not take it in time. */
  async write(key: string, text: string, ttlMs: number): Promise<boolean> {
    if (this.memory) return this.memory.set(key, text, ttlMs);
    return (await this.bounded(this.keyv!.set(key, text, ttlMs))) === true;
  }

  async close(): Promise<void> {
    await this.keyv?.disconnect().catch(() => undefined);
  }

  /** The store's answer, or undefined past the timeout or on an error. */
  private bounded<T>(work: Promise<T>): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, this.timeoutMs, undefined)));
    const answer = work.catch((err: unknown) => (this.failed(err), undefined));
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  }

  private failed(err: unknown): void {
    const now = Date.now();
    if (now - this.lastError < 60_000) return;
    this.lastError = now;
    this.log.warn({ err }, 'the response cache store failed; requests go upstream (misses) until it answers');
  }
}

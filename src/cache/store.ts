// Where cached answers live: a byte-bounded LRU map (each process its own; lru.ts says why not keyv's memory path) or
// keyv over Redis (every worker and replica sharing one). A slow or failed store never fails a request: a read past the
// timeout is a miss, a write past it is dropped, an error is logged at most once a minute.
import Keyv from 'keyv';
import type { CacheConfig } from '../config/cache.js';
import { ByteBoundedLru } from './lru.js';
import type { RedisCommands } from './shared-vectors.js';

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

/** An entry without its answer: what is written as the stored text's first line. */
export type EntryHead = Omit<CacheEntry, 'json' | 'sse'>;

/**
 * The stored text of an entry: its head as one line of JSON (JSON.stringify writes no raw line break), then the answer's
 * text as it went out. The answer is neither escaped into a JSON string when stored nor unescaped when read.
 */
export function encodeEntry(head: EntryHead, form: 'json' | 'sse', answer: string): string {
  // One literal of one shape (a spread's copy cost more than the stringify); an absent sseOptions is left out by it.
  const line = { at: head.at, model: head.model, channel: head.channel, costMicros: head.costMicros, currency: head.currency, inputTokens: head.inputTokens, outputTokens: head.outputTokens, cachedInputTokens: head.cachedInputTokens, sseOptions: head.sseOptions, form };
  return `${JSON.stringify(line)}\n${answer}`;
}

/** An entry from its stored text (or from a text of the single-JSON form entries had before); undefined when it is neither. */
export function decodeEntry(text: string): CacheEntry | undefined {
  try {
    const end = text.indexOf('\n');
    if (end < 0) return JSON.parse(text) as CacheEntry;
    const { form, ...head } = JSON.parse(text.slice(0, end)) as EntryHead & { form?: unknown };
    const answer = text.slice(end + 1);
    if (form === 'json') return { ...head, json: answer };
    if (form === 'sse') return { ...head, sse: answer };
    return undefined;
  } catch {
    return undefined;
  }
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
    return typeof text === 'string' ? decodeEntry(text) : undefined;
  }

  /** Stores `text` (encodeEntry's) for `ttlMs`; false when the store did not take it in time. `bytes`: its UTF-8 length, when known. */
  async write(key: string, text: string, ttlMs: number, bytes?: number): Promise<boolean> {
    if (this.memory) return this.memory.set(key, text, ttlMs, bytes);
    return (await this.bounded(this.keyv!.set(key, text, ttlMs))) === true;
  }

  /** The Redis client under the store (connected on first use), for what keyv has no commands for; undefined for the memory store. */
  redisCommands(): (() => Promise<RedisCommands>) | undefined {
    const store = this.keyv?.store as { getClient?: () => Promise<RedisCommands> } | undefined;
    return typeof store?.getClient === 'function' ? () => store.getClient!() : undefined;
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

// Where cached answers live: a byte-bounded LRU map of entries (each process its own; lru.ts says why not keyv's memory
// path) or @keyv/redis (every worker and replica sharing one). A slow or failed store never fails a request: a read past
// the timeout is a miss, a write past it is dropped, a failure skips Redis for a back-off (redis-guard.ts), an error is
// logged at most once a minute.
import type KeyvRedis from '@keyv/redis';
import type { CacheConfig } from '../config/cache.js';
import { Doorkeeper } from './admission.js';
import { ByteBoundedLru, heapBytes } from './lru.js';
import { RedisGuard, type GuardLog } from './redis-guard.js';
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

/**
 * The text Redis keeps of an entry: its head as one line of JSON (JSON.stringify writes no raw line break), then the
 * answer's text as it went out. The answer is neither escaped into a JSON string when stored nor unescaped when read.
 * (The memory store keeps the entry itself.)
 */
export function encodeEntry(entry: CacheEntry): string {
  const form = entry.json !== undefined ? 'json' : 'sse';
  // One literal of one shape (a spread's copy cost more than the stringify); an absent sseOptions is left out by it.
  const line = { at: entry.at, model: entry.model, channel: entry.channel, costMicros: entry.costMicros, currency: entry.currency, inputTokens: entry.inputTokens, outputTokens: entry.outputTokens, cachedInputTokens: entry.cachedInputTokens, sseOptions: entry.sseOptions, form };
  return `${JSON.stringify(line)}\n${entry.json ?? entry.sse}`;
}

/** An entry from its stored text (or from a text of the single-JSON form entries had before); undefined when it is neither. */
export function decodeEntry(text: string): CacheEntry | undefined {
  try {
    const end = text.indexOf('\n');
    if (end < 0) {
      const entry = JSON.parse(text) as CacheEntry;
      return typeof entry.json === 'string' || typeof entry.sse === 'string' ? entry : undefined;
    }
    const { form, ...head } = JSON.parse(text.slice(0, end)) as Omit<CacheEntry, 'json' | 'sse'> & { form?: unknown };
    const answer = text.slice(end + 1);
    if (form === 'json') return { ...head, json: answer };
    if (form === 'sse') return { ...head, sse: answer };
    return undefined;
  } catch {
    return undefined;
  }
}

export type StoreLog = GuardLog;

/** What an entry's head and the node holding it take on the heap besides the answer (a generous guess). */
const HEAD_BYTES = 240;

export class ResponseStore {
  private constructor(
    /** The memory store (bytes held, evictions); absent on Redis. */
    readonly memory?: ByteBoundedLru<CacheEntry>,
    private readonly redis?: KeyvRedis<string>,
    /** On Redis: every command's deadline and the circuit that skips Redis for a back-off after a failure. */
    readonly guard?: RedisGuard,
    /** The memory store's first misses while it is full (cache.admission: second-miss); absent: every miss is stored. */
    private readonly doorkeeper?: Doorkeeper,
  ) {}

  /**
   * The memory store, bounded per workspace too (config.yaml cache.maxWorkspaceBytes, else half of maxBytes); or Redis
   * (@keyv/redis's store, without keyv's own serialisation of each value: the entry's text is what Redis keeps).
   */
  static async open(config: CacheConfig, redisUrl: string | undefined, log: StoreLog, now: () => number = Date.now): Promise<ResponseStore> {
    if (config.store === 'redis') {
      const { default: KeyvRedisStore } = await import('@keyv/redis');
      // Commands are not queued while Redis is away: a request waits for the store at most timeoutMs anyway.
      const client = { url: config.url ?? redisUrl ?? 'redis://127.0.0.1:6379', disableOfflineQueue: true, socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000) } };
      // Errors reject (the guard counts them and opens its circuit); they are logged by the guard, at most once a minute.
      const store = new KeyvRedisStore<string>(client, { throwOnConnectError: true, throwOnErrors: true });
      store.on('error', () => undefined);
      return new ResponseStore(undefined, store, new RedisGuard(config.timeoutMs, log, now));
    }
    const perWorkspace = Math.min(config.maxWorkspaceBytes ?? Math.floor(config.maxBytes / 2), config.maxBytes);
    const doorkeeper = config.admission === 'second-miss' ? new Doorkeeper() : undefined;
    return new ResponseStore(new ByteBoundedLru<CacheEntry>(config.maxBytes, now, perWorkspace), undefined, undefined, doorkeeper);
  }

  /**
   * Whether a miss's answer is to be stored (it is watched as it goes out only then). Always on Redis and with
   * cache.admission `always`; on a memory store that is full for `owner` (its workspace), only when the request missed
   * before (admission.ts). `number`: the key's number in the memory store.
   */
  admits(number: number | undefined, owner: string): boolean {
    if (this.doorkeeper === undefined || number === undefined || !this.memory!.full(owner)) return true;
    return this.doorkeeper.seen(number);
  }

  /**
   * The entry under `key`; undefined when there is none, or the store did not answer in time. The memory store answers
   * at once; `number` is the key's number there (keyNumber), when the caller worked it out already.
   */
  read(key: string, number?: number): CacheEntry | undefined | Promise<CacheEntry | undefined> {
    if (this.memory) return this.memory.get(key, number);
    return this.guard!.run(() => this.redis!.get(key)).then((text) => (typeof text === 'string' ? decodeEntry(text) : undefined));
  }

  /**
   * Keeps `entry` (its answer `answerBytes` long in UTF-8) for `ttlMs`, counted to `owner` (its workspace); false when
   * the store did not take it (too large for its bounds, or Redis not in time). `number`: as for read.
   */
  write(key: string, entry: CacheEntry, ttlMs: number, answerBytes: number, owner: string, number?: number): boolean | Promise<boolean> {
    if (this.memory) return this.memory.set(key, entry, ttlMs, heapBytes((entry.json ?? entry.sse)!, answerBytes) + HEAD_BYTES, owner, number);
    const text = encodeEntry(entry);
    return this.guard!.run(async () => (await this.redis!.set(key, text, ttlMs), true)).then((done) => done === true);
  }

  /** The Redis client under the store (connected on first use), for what keyv has no commands for; undefined for the memory store. */
  redisCommands(): (() => Promise<RedisCommands>) | undefined {
    const store = this.redis as { getClient?: () => Promise<RedisCommands> } | undefined;
    return typeof store?.getClient === 'function' ? () => store.getClient!() : undefined;
  }

  async close(): Promise<void> {
    this.guard?.close();
    await this.redis?.disconnect().catch(() => undefined);
  }
}

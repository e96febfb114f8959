// Rate-limit state in the cache (Keyv): a generic cell-rate algorithm, atomic in memory and, through one Lua script, on Redis.
import cluster from 'node:cluster';
import type Keyv from 'keyv';
import { askPrimary } from '../base/cluster-ipc.js';

/** One counter a request draws on: at most `burst` requests, refilled one every `emissionMs`. */
export interface RateSlot {
  key: string;
  emissionMs: number;
  burst: number;
}

export type ConsumeOutcome = { ok: true } | { ok: false; index: number; retryAfterMs: number };

export interface RateStore {
  /** Takes one request from every slot, or from none when any of them is empty. */
  consume(slots: RateSlot[], now: number): Promise<ConsumeOutcome>;
}

/**
 * GCRA: each slot stores its theoretical arrival time (TAT). A request fits when the TAT it would
 * push forward stays within burst × emission of now; one number per slot, no windows to straddle.
 */
export function nextArrival(stored: number | undefined, slot: RateSlot, now: number): { ok: true; tat: number } | { ok: false; retryAfterMs: number } {
  const tat = Math.max(stored ?? now, now) + slot.emissionMs;
  const allowAt = tat - slot.emissionMs * slot.burst;
  return allowAt > now ? { ok: false, retryAfterMs: allowAt - now } : { ok: true, tat };
}

/** Keyv has no atomic read-modify-write, so this serializes per key within the process (memory Keyv is per process anyway). */
export class KeyvRateStore implements RateStore {
  private readonly locks = new Map<string, Promise<void>>();

  constructor(private readonly cache: Keyv) {}

  async consume(slots: RateSlot[], now: number): Promise<ConsumeOutcome> {
    // Locks are taken in one global order so two requests sharing a workspace cannot deadlock.
    const releases: (() => void)[] = [];
    for (const key of slots.map((s) => s.key).sort()) releases.push(await this.lock(key));
    try {
      const stored = await Promise.all(slots.map((s) => this.cache.get<number>(`ratelimit:${s.key}`)));
      const tats: number[] = [];
      for (const [index, slot] of slots.entries()) {
        const next = nextArrival(stored[index] ?? undefined, slot, now);
        if (!next.ok) return { ok: false, index, retryAfterMs: next.retryAfterMs };
        tats.push(next.tat);
      }
      await Promise.all(slots.map((s, i) => this.cache.set(`ratelimit:${s.key}`, tats[i], tats[i] - now)));
      return { ok: true };
    } finally {
      for (const release of releases) release();
    }
  }

  private async lock(key: string): Promise<() => void> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => held);
    this.locks.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.locks.get(key) === tail) this.locks.delete(key);
    };
  }
}

const gcraScript = `
local now = tonumber(ARGV[1])
local tats = {}
for i = 1, #KEYS do
  local emission = tonumber(ARGV[2 * i])
  local burst = tonumber(ARGV[2 * i + 1])
  local tat = math.max(tonumber(redis.call('GET', KEYS[i]) or now), now) + emission
  local allow_at = tat - emission * burst
  if allow_at > now then return {i, allow_at - now} end
  tats[i] = tat
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], string.format('%d', tats[i]), 'PX', tats[i] - now)
end
return {0, 0}`;

interface EvalClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Several replicas share the counters: the whole check-and-take runs as one script on the server. */
export class RedisRateStore implements RateStore {
  constructor(
    private readonly client: () => Promise<EvalClient>,
    private readonly prefix: string,
  ) {}

  async consume(slots: RateSlot[], now: number): Promise<ConsumeOutcome> {
    const client = await this.client();
    const args = [String(Math.floor(now)), ...slots.flatMap((s) => [String(s.emissionMs), String(s.burst)])];
    const [index, retryAfterMs] = (await client.eval(gcraScript, { keys: slots.map((s) => `${this.prefix}ratelimit:${s.key}`), arguments: args })) as [number, number];
    return index === 0 ? { ok: true } : { ok: false, index: index - 1, retryAfterMs: Number(retryAfterMs) };
  }
}

/** Workers of one gateway (server.workers) share in-memory counters: the primary keeps them, one IPC round trip a check. */
export class PrimaryRateStore implements RateStore {
  consume(slots: RateSlot[], now: number): Promise<ConsumeOutcome> {
    return askPrimary<ConsumeOutcome>('rate-consume', { slots, now });
  }
}

/** Redis when the cache is Redis (its client runs the script); in memory, the cluster primary's or this process's. */
export function rateStoreFor(cache: Keyv): RateStore {
  const store = cache.store as { getClient?: () => Promise<EvalClient> };
  if (typeof store?.getClient === 'function') return new RedisRateStore(() => store.getClient!(), `${cache.namespace ?? 'gateway'}::`);
  return cluster.isWorker ? new PrimaryRateStore() : new KeyvRateStore(cache);
}

// Cooldowns shared by every process on one Redis (storage.cache.driver: redis): a process that cools a target writes
// until when; the others read it at most once a second a target, so a request never waits on Redis for more than that.
import type Keyv from 'keyv';

export interface CooldownShare {
  /** Until when (the gateway's clock, ms) another process cooled `target`; undefined when none did, or Redis is away. */
  read(target: string): Promise<number | undefined>;
  /** Tells the other processes `target` is cooling until `until`, for `ttlMs`. */
  write(target: string, until: number, ttlMs: number): void;
}

/** A share on the cache when it is Redis; undefined for the in-memory cache (each process then keeps its own). */
export function cooldownShareFor(cache: Keyv): CooldownShare | undefined {
  const store = cache.store as { getClient?: unknown } | undefined;
  if (typeof store?.getClient !== 'function') return undefined;
  const key = (target: string) => `route-cooldown:${target}`;
  return {
    // A cooldown is an optimisation: Redis away means each process judges alone, never a failed request.
    read: (target) => cache.get<number>(key(target)).then((until) => (typeof until === 'number' ? until : undefined), () => undefined),
    write: (target, until, ttlMs) => void cache.set(key(target), until, ttlMs).catch(() => undefined),
  };
}

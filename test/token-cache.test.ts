// The token cache of src/engine/credentials: one fetch for all concurrent callers, reuse while valid, refresh before expiry.
import { describe, expect, it } from 'vitest';
import { RETRY_AFTER_FAILURE_MS, TokenCache, type AccessToken } from '../src/engine/credentials/token-cache.js';

function deferredFetches(now: () => number) {
  const pending: { resolve: (token: AccessToken) => void; reject: (err: Error) => void }[] = [];
  let issued = 0;
  const fetch = () => new Promise<AccessToken>((resolve, reject) => pending.push({ resolve, reject }));
  const answer = (lifetimeMs: number) => pending.shift()!.resolve({ value: `token-${++issued}`, expiresAt: now() + lifetimeMs });
  return { fetch, answer, pending };
}

/** A cache holding its first token, valid `lifetimeMs`, on a clock the test moves. */
async function holdingToken(lifetimeMs: number) {
  const clock = { now: 0 };
  const fetches = deferredFetches(() => clock.now);
  const cache = new TokenCache(fetches.fetch, () => clock.now);
  const first = cache.get();
  fetches.answer(lifetimeMs);
  expect(await first).toBe('token-1');
  return { clock, fetches, cache };
}

describe('TokenCache', () => {
  it('fetches once for every caller waiting at the same time', async () => {
    let now = 0;
    const fetches = deferredFetches(() => now);
    const cache = new TokenCache(fetches.fetch, () => now);
    const waiting = Array.from({ length: 10 }, () => cache.get());
    expect(fetches.pending).toHaveLength(1);
    fetches.answer(3_600_000);
    expect(await Promise.all(waiting)).toEqual(Array(10).fill('token-1'));
  });

  it('reuses a token until five minutes before it expires, then fetches the next', async () => {
    const { clock, fetches, cache } = await holdingToken(3_600_000);
    clock.now = 3_600_000 - 300_001;
    expect(await cache.get()).toBe('token-1');
    clock.now += 1;
    const next = cache.get();
    expect(fetches.pending).toHaveLength(1);
    fetches.answer(3_600_000);
    expect(await next).toBe('token-2');
  });

  it('refreshes a short-lived token at half its lifetime', async () => {
    const { clock, fetches, cache } = await holdingToken(60_000);
    clock.now = 29_999;
    expect(await cache.get()).toBe('token-1');
    clock.now = 30_000;
    void cache.get();
    expect(fetches.pending).toHaveLength(1);
  });

  it('rejects every waiter of a failed fetch, answers the same failure without asking again for ten seconds, then asks', async () => {
    let now = 0;
    const fetches = deferredFetches(() => now);
    const cache = new TokenCache(fetches.fetch, () => now);
    const waiting = [cache.get(), cache.get()];
    fetches.pending.shift()!.reject(new Error('refused'));
    for (const w of waiting) await expect(w).rejects.toThrow('refused');
    now = RETRY_AFTER_FAILURE_MS - 1;
    await expect(cache.get()).rejects.toThrow('refused');
    expect(fetches.pending).toHaveLength(0);
    now = RETRY_AFTER_FAILURE_MS;
    const again = cache.get();
    expect(fetches.pending).toHaveLength(1);
    fetches.answer(3_600_000);
    expect(await again).toBe('token-1');
  });

  it('keeps using the token held while it is valid when its refresh fails, and asks again after the pause', async () => {
    const { clock, fetches, cache } = await holdingToken(3_600_000);
    // Five minutes before expiry the refresh is due; the token endpoint refuses it.
    clock.now = 3_600_000 - 300_000;
    const during = cache.get();
    fetches.pending.shift()!.reject(new Error('refused'));
    expect(await during).toBe('token-1');
    clock.now += RETRY_AFTER_FAILURE_MS - 1;
    expect(await cache.get()).toBe('token-1');
    expect(fetches.pending).toHaveLength(0);
    clock.now += 1;
    const next = cache.get();
    expect(fetches.pending).toHaveLength(1);
    fetches.answer(3_600_000);
    expect(await next).toBe('token-2');
  });

  it('answers the failure once the token held has expired', async () => {
    const { clock, fetches, cache } = await holdingToken(60_000);
    clock.now = 60_000;
    const expired = cache.get();
    fetches.pending.shift()!.reject(new Error('refused'));
    await expect(expired).rejects.toThrow('refused');
  });
});

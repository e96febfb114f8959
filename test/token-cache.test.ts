// The token cache of src/engine/credentials: one fetch for all concurrent callers, reuse while valid, refresh before expiry.
import { describe, expect, it } from 'vitest';
import { TokenCache, type AccessToken } from '../src/engine/credentials/token-cache.js';

function deferredFetches(now: () => number) {
  const pending: { resolve: (token: AccessToken) => void; reject: (err: Error) => void }[] = [];
  let issued = 0;
  const fetch = () => new Promise<AccessToken>((resolve, reject) => pending.push({ resolve, reject }));
  const answer = (lifetimeMs: number) => pending.shift()!.resolve({ value: `token-${++issued}`, expiresAt: now() + lifetimeMs });
  return { fetch, answer, pending };
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
    let now = 0;
    const fetches = deferredFetches(() => now);
    const cache = new TokenCache(fetches.fetch, () => now);
    const first = cache.get();
    fetches.answer(3_600_000);
    expect(await first).toBe('token-1');
    now = 3_600_000 - 300_001;
    expect(await cache.get()).toBe('token-1');
    now += 1;
    const next = cache.get();
    expect(fetches.pending).toHaveLength(1);
    fetches.answer(3_600_000);
    expect(await next).toBe('token-2');
  });

  it('refreshes a short-lived token at half its lifetime', async () => {
    let now = 0;
    const fetches = deferredFetches(() => now);
    const cache = new TokenCache(fetches.fetch, () => now);
    const first = cache.get();
    fetches.answer(60_000);
    await first;
    now = 29_999;
    expect(await cache.get()).toBe('token-1');
    now = 30_000;
    void cache.get();
    expect(fetches.pending).toHaveLength(1);
  });

  it('rejects every waiter of a failed fetch, and the next call tries again', async () => {
    const now = 0;
    const fetches = deferredFetches(() => now);
    const cache = new TokenCache(fetches.fetch, () => now);
    const waiting = [cache.get(), cache.get()];
    fetches.pending.shift()!.reject(new Error('refused'));
    for (const w of waiting) await expect(w).rejects.toThrow('refused');
    const again = cache.get();
    expect(fetches.pending).toHaveLength(1);
    fetches.answer(3_600_000);
    expect(await again).toBe('token-1');
  });
});

// An access token held for one credential: reused while it is valid, refreshed before it expires, and fetched once for
// every request that needs it meanwhile (a single refresh in flight, shared). A failed fetch is remembered for a few
// seconds: the token held serves on while it is valid, and without one every request gets the same failure at once
// instead of asking the token endpoint again (a broken secret must not turn each request into a token request).
// A request waits for a fetch no longer than its own deadline: the fetch goes on under its own limit for the requests
// after it, the one whose deadline passed stops waiting (whichever ends first).
import type { AbortSource } from '../../net/call-abort.js';

export interface AccessToken {
  value: string;
  /** Unix milliseconds after which the platform refuses it. */
  expiresAt: number;
}

/** How long before its expiry a token is replaced: five minutes (as Google's and Azure's own clients do), or half the lifetime of a shorter-lived one. */
const REFRESH_BEFORE_MS = 5 * 60_000;
/** How long a failed fetch is remembered before the next request may ask again. */
export const RETRY_AFTER_FAILURE_MS = 10_000;

export class TokenCache {
  private token?: AccessToken & { refreshAt: number };
  private pending?: Promise<AccessToken>;
  private failure?: { error: unknown; until: number };

  constructor(
    private readonly fetchToken: () => Promise<AccessToken>,
    private readonly now: () => number,
  ) {}

  /**
   * A token valid now and for a while yet: the cached one, or a fresh one. A failed fetch rejects every waiter and is
   * remembered for RETRY_AFTER_FAILURE_MS; meanwhile the token held is used while it is still valid. `signal` (the
   * request's deadline) ends this caller's wait with its reason; the fetch itself runs on for the others.
   */
  async get(signal?: AbortSignal | AbortSource): Promise<string> {
    const token = this.token;
    if (token && this.now() < token.refreshAt) return token.value;
    if (this.failure && this.now() < this.failure.until) {
      if (token && this.now() < token.expiresAt) return token.value;
      throw this.failure.error;
    }
    this.pending ??= this.refresh();
    try {
      return (await untilAborted(this.pending, signal)).value;
    } catch (error) {
      if (signal?.aborted) throw error;
      if (token && this.now() < token.expiresAt) return token.value;
      throw error;
    }
  }

  /** The token held now, to keep out of any text a client or a log sees. */
  current(): string | undefined {
    return this.token?.value;
  }

  private async refresh(): Promise<AccessToken> {
    try {
      const obtainedAt = this.now();
      const token = await this.fetchToken();
      const lifetime = Math.max(0, token.expiresAt - obtainedAt);
      this.token = { ...token, refreshAt: token.expiresAt - Math.min(REFRESH_BEFORE_MS, lifetime / 2) };
      this.failure = undefined;
      return token;
    } catch (error) {
      this.failure = { error, until: this.now() + RETRY_AFTER_FAILURE_MS };
      throw error;
    } finally {
      this.pending = undefined;
    }
  }
}

/** `promise`, or the signal's reason as soon as it aborts (the promise runs on; its outcome is then ignored here). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | AbortSource | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    const stop = 'addEventListener' in signal ? listen(signal, onAbort) : (signal.once('abort', onAbort), () => signal.removeListener('abort', onAbort));
    promise.then(
      (value) => {
        stop();
        resolve(value);
      },
      (error) => {
        stop();
        reject(error);
      },
    );
  });
}

function listen(signal: AbortSignal, onAbort: () => void): () => void {
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** The token caches of one set of upstream pools, by credential identity (a digest of what makes two credentials one). */
export class TokenCaches {
  private readonly caches = new Map<string, TokenCache>();

  constructor(private readonly now: () => number) {}

  of(identity: string, fetchToken: () => Promise<AccessToken>): TokenCache {
    let cache = this.caches.get(identity);
    if (!cache) this.caches.set(identity, (cache = new TokenCache(fetchToken, this.now)));
    return cache;
  }
}

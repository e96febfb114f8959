// Requests per minute per API key and per workspace, from the rate-limits config section; over the limit answers 429 with
// retry-after. The same limits drawn on by name serve other calls (an MCP tool's, per key and per tool).
import type { AuthContext, RateLimiter } from '../auth/authenticate.js';
import { RateLimitError } from '../base/errors.js';
import type { RateLimitsConfig } from './config.js';
import type { RateStore } from './rate-store.js';

export type { RateLimiter };

/** One limit a call draws on: at most `perMinute` calls of everything sharing `key`; `owner` names it in the refusal. */
export interface CallLimit {
  key: string;
  perMinute: number;
  owner: string;
}

/** Takes one call from every limit (0 is no limit), or refuses with a RateLimitError naming the one that is spent. */
export type CallLimiter = (limits: CallLimit[]) => Promise<void>;

export function createCallLimiter(store: RateStore, now: () => number = Date.now): CallLimiter {
  return async (all) => {
    const limits = all.filter((l) => l.perMinute > 0);
    if (!limits.length) return;
    const slots = limits.map((l) => ({ key: l.key, emissionMs: Math.ceil(60_000 / l.perMinute), burst: l.perMinute }));
    const outcome = await store.consume(slots, now());
    if (outcome.ok) return;
    const limit = limits[outcome.index];
    const seconds = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
    throw new RateLimitError(`rate limit of ${limit.owner} reached (${limit.perMinute} per minute); retry after ${seconds} s`, seconds);
  };
}

export function createRateLimiter(config: RateLimitsConfig, store: RateStore, now: () => number = Date.now): RateLimiter {
  const perKey = config.perKey.requestsPerMinute;
  const perWorkspace = config.perWorkspace.requestsPerMinute;
  if (perKey <= 0 && perWorkspace <= 0) return { admit: () => undefined };
  const limit = createCallLimiter(store, now);
  return {
    admit: (auth) =>
      limit([
        { key: `key:${auth.keyId}`, perMinute: perKey, owner: 'this API key' },
        { key: `workspace:${auth.workspaceId}`, perMinute: perWorkspace, owner: "this key's workspace" },
      ]),
  };
}

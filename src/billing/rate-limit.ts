// Requests per minute per API key and per workspace, from the rate-limits config section; over the limit answers 429 with retry-after.
import type { AuthContext, RateLimiter } from '../auth/authenticate.js';
import { RateLimitError } from '../base/errors.js';
import type { RateLimitsConfig } from './config.js';
import type { RateStore } from './rate-store.js';

export type { RateLimiter };

interface Subject {
  scope: 'key' | 'workspace';
  requestsPerMinute: number;
  idOf(auth: AuthContext): string;
  owner: string;
}

export function createRateLimiter(config: RateLimitsConfig, store: RateStore, now: () => number = Date.now): RateLimiter {
  const subjects: Subject[] = [
    { scope: 'key' as const, requestsPerMinute: config.perKey.requestsPerMinute, idOf: (a: AuthContext) => a.keyId, owner: 'this API key' },
    { scope: 'workspace' as const, requestsPerMinute: config.perWorkspace.requestsPerMinute, idOf: (a: AuthContext) => a.workspaceId, owner: "this key's workspace" },
  ].filter((s) => s.requestsPerMinute > 0);
  if (!subjects.length) return { admit: async () => undefined };

  return {
    async admit(auth) {
      const slots = subjects.map((s) => ({ key: `${s.scope}:${s.idOf(auth)}`, emissionMs: Math.ceil(60_000 / s.requestsPerMinute), burst: s.requestsPerMinute }));
      const outcome = await store.consume(slots, now());
      if (outcome.ok) return;
      const subject = subjects[outcome.index];
      const seconds = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
      throw new RateLimitError(`rate limit of ${subject.owner} reached (${subject.requestsPerMinute} requests per minute); retry after ${seconds} s`, seconds);
    },
  };
}

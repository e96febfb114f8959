// The onRequest hook that checks a route's key, scope and rate limit before a byte of the body is read.
import type { onRequestAsyncHookHandler } from 'fastify';
import type { EndpointConfig } from '../config/types.js';
import { AuthError } from '../base/errors.js';
import type { Db } from '../store/db.js';
import { markStage } from '../http/stages.js';
import { authenticateNow, presentedKey, requireScope, type RateLimiter } from './authenticate.js';

/**
 * Refuses a missing, unknown, revoked or expired key, a missing scope and a spent rate limit while the
 * body is still unread, so an unauthenticated client cannot make the gateway buffer or parse anything.
 * `auth: optional` routes (signed content URLs) check a key only when one is sent.
 */
export function requestAuthHook(services: { db: Db; rateLimits: RateLimiter }, endpoint: EndpointConfig): onRequestAsyncHookHandler {
  return async (req) => {
    const key = presentedKey(req);
    if (!key) {
      if (endpoint.auth === 'key') throw new AuthError('an API key is required: send "Authorization: Bearer <key>" or "x-api-key: <key>"', 'missing_api_key');
      return;
    }
    // A known key and no rate limit cost no await (each one a promise and a turn of the microtask queue).
    const found = authenticateNow(services.db, key);
    req.auth = found instanceof Promise ? await found : found;
    markStage('authenticated');
    req.log = req.log.child({ keyId: req.auth.keyId });
    requireScope(req.auth, endpoint.scope);
    const admitting = services.rateLimits.admit(req.auth);
    if (admitting) await admitting;
    markStage('admitted');
  };
}

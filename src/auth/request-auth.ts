// The onRequest hook that checks a route's key, scope and rate limit before a byte of the body is read.
import type { FastifyRequest, onRequestAsyncHookHandler, onRequestHookHandler } from 'fastify';
import type { EndpointConfig } from '../config/types.js';
import { AuthError } from '../base/errors.js';
import type { Db } from '../store/db.js';
import { markStage } from '../http/stages.js';
import { authenticateNow, presentedKey, requireScope, type AuthContext, type RateLimiter } from './authenticate.js';

/**
 * Checks a request's key, scope and rate limit; returns a promise only when something has to be waited for (a key not
 * cached yet, a rate limit's store), so a known key costs no promise. Throws (or rejects with) the refusal.
 */
function authenticateRequest(services: { db: Db; rateLimits: RateLimiter }, endpoint: EndpointConfig, req: FastifyRequest): Promise<void> | undefined {
  const key = presentedKey(req);
  if (!key) {
    if (endpoint.auth === 'key') throw new AuthError('an API key is required: send "Authorization: Bearer <key>" or "x-api-key: <key>"', 'missing_api_key');
    return undefined;
  }
  const found = authenticateNow(services.db, key);
  return found instanceof Promise ? found.then((auth) => admit(services, endpoint, req, auth)) : admit(services, endpoint, req, found);
}

/** The key's request, known: its scope checked and its rate limit counted. */
function admit(services: { rateLimits: RateLimiter }, endpoint: EndpointConfig, req: FastifyRequest, auth: AuthContext): Promise<void> | undefined {
  req.auth = auth;
  markStage('authenticated');
  req.log = req.log.child({ keyId: auth.keyId });
  requireScope(auth, endpoint.scope);
  const admitting = services.rateLimits.admit(auth);
  if (admitting) return admitting.then(admitted);
  markStage('admitted');
  return undefined;
}

const admitted = () => markStage('admitted');

/**
 * Refuses a missing, unknown, revoked or expired key, a missing scope and a spent rate limit while the
 * body is still unread, so an unauthenticated client cannot make the gateway buffer or parse anything.
 * `auth: optional` routes (signed content URLs) check a key only when one is sent.
 *
 * A callback hook, not an async one: a known key calls `done` before the hook returns, so no promise is made for it
 * (an async hook's was some 400 bytes and a turn of the microtask queue a request).
 */
export function requestAuthHook(services: { db: Db; rateLimits: RateLimiter }, endpoint: EndpointConfig): onRequestHookHandler {
  return (req, _reply, done) => {
    let waiting: Promise<void> | undefined;
    try {
      waiting = authenticateRequest(services, endpoint, req);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (waiting) waiting.then(() => done(), done);
    else done();
  };
}

/** The same check as an async hook, for a tracing that wraps the hook in its span (src/telemetry/otel.ts). */
export function requestAuthAsyncHook(services: { db: Db; rateLimits: RateLimiter }, endpoint: EndpointConfig): onRequestAsyncHookHandler {
  return async (req) => authenticateRequest(services, endpoint, req);
}

// Resolves the API key of a request (Bearer or x-api-key) to its workspace and scopes, and checks the route's scope.
import type { FastifyRequest } from 'fastify';
import { AuthError, ScopeError } from '../base/errors.js';
import { cacheLimits, type CacheLimits } from '../config/cache.js';
import { findApiKeyForAuth, type ApiKeyAuthRow } from '../store/api-keys.js';
import { ChangeCache, changeVersion } from '../store/change-version.js';
import type { Db } from '../store/database.js';
import { hashApiKey } from './keys.js';

export interface AuthContext {
  keyId: string;
  workspaceId: string;
  /** Empty means every scope. */
  scopes: string[];
  spendCapMicros: number | null;
  /** Guardrails the key and its workspace add to the operator's (offered ids only); absent when they add none. */
  guardrails?: readonly string[];
  /** How the key and its workspace narrow the response cache (docs/caching.md); absent when they leave it as the operator set it. */
  cache?: CacheLimits;
}

/** Admits a key's request, or refuses it; src/billing/rate-limit.ts builds it (declared here, below billing). */
export interface RateLimiter {
  /**
   * Counts one request of this key; throws (or rejects with) RateLimitError when the key or its workspace is over its
   * limit. Undefined when nothing was to be waited for (no limit configured): no promise on every request.
   */
  admit(auth: AuthContext): Promise<void> | undefined;
}

/** The key a request presents, or undefined; two different keys at once are refused. */
export function presentedKey(req: FastifyRequest): string | undefined {
  const authorization = req.headers.authorization;
  const bearer = authorization && /^Bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim();
  const header = req.headers['x-api-key'];
  const xApiKey = Array.isArray(header) ? header[0] : header;
  if (authorization && !bearer) throw new AuthError('the Authorization header must be "Bearer <API key>"');
  if (bearer && xApiKey && bearer !== xApiKey) throw new AuthError('two different API keys were sent (Authorization and x-api-key)');
  return bearer || xApiKey || undefined;
}

/** A key row with its scopes parsed once, as the cache keeps it. */
interface CachedKey {
  row: ApiKeyAuthRow;
  context: AuthContext;
}

/**
 * Keys by hash, kept while the database reports no change to keys or workspaces, so the hot path skips a query, a parse
 * and (on SQLite) any read at all; a revocation by any process on the file applies from the next request on.
 */
const keyCaches = new WeakMap<Db, ChangeCache<CachedKey | undefined>>();

/** The guardrails a key and its workspace add (docs/guardrails.md), or undefined when they add none. */
function addedGuardrails(row: ApiKeyAuthRow): readonly string[] | undefined {
  if (!row.guardrails && !row.workspace_guardrails) return undefined;
  const ids = [...(JSON.parse(row.workspace_guardrails || '[]') as string[]), ...(JSON.parse(row.guardrails || '[]') as string[])];
  return ids.length ? Object.freeze([...new Set(ids)]) : undefined;
}

function cachedKey(row: ApiKeyAuthRow | undefined): CachedKey | undefined {
  if (!row) return undefined;
  // Shared by every request with this key until the next change, so nobody may alter it.
  const scopes = Object.freeze(JSON.parse(row.scopes) as string[]) as string[];
  const guardrails = addedGuardrails(row);
  const cache = cacheLimits(row.workspace_cache, row.cache);
  return { row, context: Object.freeze({ keyId: row.id, workspaceId: row.workspace_id, scopes, spendCapMicros: row.spend_cap_micros, ...(guardrails ? { guardrails } : {}), ...(cache ? { cache } : {}) }) };
}

/** The key of `hash`: from the cache as it is (no promise, the hot path), else read from the database. */
function findKey(db: Db, hash: string): CachedKey | undefined | Promise<CachedKey | undefined> {
  const version = changeVersion(db);
  if (version === undefined) return findApiKeyForAuth(db, hash).then(cachedKey);
  let cache = keyCaches.get(db);
  if (!cache) keyCaches.set(db, (cache = new ChangeCache()));
  const keys = cache.at(version);
  if (keys.has(hash)) return keys.get(hash);
  return findApiKeyForAuth(db, hash).then((row) => {
    const key = cachedKey(row);
    keys.set(hash, key);
    return key;
  });
}

export async function authenticate(db: Db, key: string, now = Date.now()): Promise<AuthContext> {
  return authenticateNow(db, key, now);
}

/**
 * `authenticate` without a promise when the key is in the cache (every request of a known key but the first after a
 * change): the request's hook awaits only what has to be read. Throws AuthError (or rejects with it, when read).
 */
export function authenticateNow(db: Db, key: string, now = Date.now()): AuthContext | Promise<AuthContext> {
  const found = findKey(db, hashApiKey(key));
  return found instanceof Promise ? found.then((row) => admitted(row, now)) : admitted(found, now);
}

/** The key of id `keyId` (a relay token names it, src/mcp/relay-tokens.ts), admitted as a presented key is. */
export async function authenticateKeyId(db: Db, keyId: string, now = Date.now()): Promise<AuthContext> {
  return admitted(cachedKey(await findApiKeyForAuth(db, keyId, 'id')), now);
}

function admitted(found: CachedKey | undefined, now: number): AuthContext {
  if (!found) throw new AuthError('invalid API key');
  const { row, context } = found;
  if (row.revoked_at !== null) throw new AuthError('this API key has been revoked', 'revoked_api_key');
  if (row.expires_at !== null && row.expires_at * 1000 <= now) throw new AuthError('this API key has expired', 'expired_api_key');
  return context;
}

export function hasScope(auth: AuthContext, scope: string): boolean {
  return auth.scopes.length === 0 || auth.scopes.includes(scope);
}

export function requireScope(auth: AuthContext, scope: string | null): void {
  if (scope && !hasScope(auth, scope)) throw new ScopeError(scope);
}

// Resolves the API key of a request (Bearer or x-api-key) to its workspace and scopes, and checks the route's scope.
import type { FastifyRequest } from 'fastify';
import { AuthError, ScopeError } from '../errors.js';
import { findApiKeyByHash, type ApiKeyRow } from '../store/api-keys.js';
import { changeVersion } from '../store/change-version.js';
import type { Db } from '../store/database.js';
import { hashApiKey } from './keys.js';

export interface AuthContext {
  keyId: string;
  workspaceId: string;
  /** Empty means every scope. */
  scopes: string[];
  spendCapMicros: number | null;
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

/**
 * Key rows by hash, kept while the database reports no change to keys or workspaces, so the hot
 * path skips a query; revocation by any process still applies on the next request.
 */
const keyCache = new WeakMap<Db, { version: number; rows: Map<string, ApiKeyRow | undefined> }>();
const KEY_CACHE_LIMIT = 10_000;

async function findKey(db: Db, hash: string): Promise<ApiKeyRow | undefined> {
  const version = changeVersion(db);
  if (version === undefined) return findApiKeyByHash(db, hash);
  let cache = keyCache.get(db);
  if (!cache || cache.version !== version) {
    cache = { version, rows: new Map() };
    keyCache.set(db, cache);
  }
  if (cache.rows.has(hash)) return cache.rows.get(hash);
  const row = await findApiKeyByHash(db, hash);
  if (cache.rows.size >= KEY_CACHE_LIMIT) cache.rows.clear();
  if (changeVersion(db) === version) cache.rows.set(hash, row);
  return row;
}

export async function authenticate(db: Db, key: string, now = Date.now()): Promise<AuthContext> {
  const row = await findKey(db, hashApiKey(key));
  if (!row) throw new AuthError('invalid API key');
  if (row.revoked_at !== null) throw new AuthError('this API key has been revoked', 'revoked_api_key');
  if (row.expires_at !== null && row.expires_at * 1000 <= now) throw new AuthError('this API key has expired', 'expired_api_key');
  return { keyId: row.id, workspaceId: row.workspace_id, scopes: JSON.parse(row.scopes) as string[], spendCapMicros: row.spend_cap_micros };
}

export function hasScope(auth: AuthContext, scope: string): boolean {
  return auth.scopes.length === 0 || auth.scopes.includes(scope);
}

export function requireScope(auth: AuthContext, scope: string | null): void {
  if (scope && !hasScope(auth, scope)) throw new ScopeError(scope);
}

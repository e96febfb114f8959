// Who calls the admin API: an admin token from the config (kept as its SHA-256) or the dashboard session of a workspace
// owner. A workspace API key is refused outright, whatever it could do elsewhere.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { KEY_PREFIX } from '../auth/keys.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import { catalogueOperations } from '../config/cross-check-operations.js';
import { AuthError, GatewayError } from '../base/errors.js';
import type { AdminDeps } from './deps.js';
import { membershipsOf } from '../store/users.js';
import { sessionUser } from '../auth/session.js';
import { AdminService, type AdminStore } from './service.js';
import { routesOf } from '../engine/models.js';

export const ADMIN_TOKEN_PREFIX = 'gwadm_';

export interface AdminTokenEntry {
  id: string;
  sha256: string;
}

export const adminTokens = (config: Pick<LoadedConfig, 'gateway'>) => ((config.gateway.admin as { tokens?: AdminTokenEntry[] } | undefined)?.tokens ?? []);

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** A new admin token and the config entry that admits it. */
export function newAdminToken(): { token: string; sha256: string } {
  const token = `${ADMIN_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, sha256: sha256(token).toString('hex') };
}

/** The configured token this one is, compared in constant time against every entry. */
export function matchAdminToken(config: Pick<LoadedConfig, 'gateway'>, token: string): AdminTokenEntry | undefined {
  const digest = sha256(token);
  let found: AdminTokenEntry | undefined;
  for (const entry of adminTokens(config)) if (timingSafeEqual(digest, Buffer.from(entry.sha256, 'hex'))) found = entry;
  return found;
}

class NotOwnerError extends GatewayError {
  constructor() {
    super('not_an_owner', 403, 'permission_error', 'the admin API needs an admin token or the dashboard session of a workspace owner');
  }
}

export class CrossSiteError extends GatewayError {
  constructor() {
    super('cross_site_refused', 403, 'permission_error', 'a change made with a dashboard session must come from a page of this gateway (same Origin, or Sec-Fetch-Site: same-origin); other callers use an admin token');
  }
}

/**
 * A cookie rides along on requests other sites start: a change carried by the session must show it comes from a page
 * of this origin. The Origin header when sent; else the browser's Sec-Fetch-Site; a request with neither is refused
 * (every browser that runs a page sends one of them on a change).
 */
function refuseCrossSite(req: FastifyRequest): void {
  const origin = req.headers.origin;
  const site = req.headers['sec-fetch-site'];
  if (origin !== undefined && origin !== `${req.protocol}://${req.host}`) throw new CrossSiteError();
  if (site !== undefined && site !== 'same-origin') throw new CrossSiteError();
  if (origin === undefined && site === undefined) throw new CrossSiteError();
}

/** What the API's service reads through: the database, the budget calendar and clock, and the models served now. */
function adminStore(services: Omit<AdminDeps, 'reload'>): AdminStore {
  return { db: services.db, calendar: services.calendar, now: () => services.now(), servedModelId: (model) => routesOf(services.config, model)?.[0].model.id, mcpServers: () => new Set(services.config.mcp.servers.keys()), offeredGuardrails: () => services.config.guardrails?.offered ?? new Set<string>(), cacheFamilies: () => catalogueOperations(services.config.endpoints) };
}

/** The service as this request's caller may use it, or a 401/403. */
export async function adminFor(services: Omit<AdminDeps, 'reload'>, req: FastifyRequest): Promise<AdminService> {
  const authorization = req.headers.authorization;
  if (authorization !== undefined) {
    const token = /^Bearer\s+(\S{1,256})$/i.exec(authorization)?.[1];
    if (!token) throw new AuthError('the Authorization header must be "Bearer <admin token>"', 'invalid_admin_token');
    if (token.startsWith(KEY_PREFIX)) throw new AuthError('a workspace API key cannot use the admin API: use an admin token (admin.tokens)', 'workspace_key_refused');
    const entry = matchAdminToken(services.config, token);
    if (!entry) throw new AuthError('invalid admin token', 'invalid_admin_token');
    return new AdminService(adminStore(services), { kind: 'admin_token', id: entry.id, address: req.ip });
  }
  if (req.headers['x-api-key'] !== undefined) throw new AuthError('a workspace API key cannot use the admin API: use an admin token (admin.tokens)', 'workspace_key_refused');
  const user = req.session ? await sessionUser(services, req) : undefined;
  if (!user) throw new AuthError('the admin API needs "Authorization: Bearer <admin token>" or a dashboard owner\'s session', 'admin_auth_required');
  if (req.method !== 'GET' && req.method !== 'HEAD') refuseCrossSite(req);
  const owned = (await membershipsOf(services.db, user.id)).filter((m) => m.role === 'owner').map((m) => m.workspaceId);
  if (!owned.length) throw new NotOwnerError();
  return new AdminService(adminStore(services), { kind: 'user', id: user.id, address: req.ip }, new Set(owned));
}

// Who a dashboard request is: the session cookie names a stored session, its user, and the workspace they are looking at.
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { GatewayError } from '../errors.js';
import type { BudgetCalendar } from '../billing/periods.js';
import type { Db } from '../store/database.js';
import type { Role } from '../store/schema.js';
import type { Actor } from '../store/audit.js';
import { AdminService } from '../admin/service.js';
import { getOrInitSetting } from '../store/settings.js';
import type { LoadedConfig } from '../compile/loaded-config.js';
import { requestLogsConfig } from '../request-logs/config.js';
import { deleteExpiredSessions, deleteSession, findSessionUser, insertSession, membershipsOf, type User, type WorkspaceMembership } from '../store/users.js';

/** The session cookie; sent site-wide, so an owner's session also reaches the admin API (/admin/v1). */
export const SESSION_COOKIE = 'gw_dashboard';

/** A session lasts this long from sign-in, however active it is. */
export const SESSION_SECONDS = 12 * 3600;

declare module '@fastify/secure-session' {
  interface SessionData {
    /** The session id; the database keeps its SHA-256. */
    sid: string;
    /** The workspace the user last chose. */
    ws: string;
  }
}

export interface DashboardContext {
  user: User;
  memberships: WorkspaceMembership[];
  /** The workspace this request acts on: one of the user's own. */
  workspace: WorkspaceMembership;
  csrfToken: string;
  /** Whether the navigation links the Logs page (members see it unless requestLogs.membersSee is false). */
  logsShown: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboard?: DashboardContext;
  }
}

export class DashboardAuthError extends GatewayError {
  constructor() {
    super('not_signed_in', 401, 'authentication_error', 'sign in to use the dashboard');
  }
}

export class RoleError extends GatewayError {
  constructor(roles: readonly Role[]) {
    super('insufficient_role', 403, 'permission_error', `only a workspace ${roles.join(' or ')} may do this`);
  }
}

export class NoWorkspaceError extends GatewayError {
  constructor() {
    super('no_workspace', 403, 'permission_error', 'this account belongs to no workspace yet; ask an owner to add it');
  }
}

/** The 32-byte cookie key, derived from a secret generated once and kept in the settings table (shared by replicas). */
export async function sessionKey(db: Db): Promise<Buffer> {
  const secret = await getOrInitSetting(db, 'dashboard.session.secret', () => randomBytes(32).toString('base64url'));
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'base64url'), Buffer.alloc(0), 'dashboard-session-cookie-v1', 32));
}

const hashSid = (sid: string) => createHash('sha256').update(sid).digest('hex');

/** Starts a session for the user in a fresh cookie (nothing of the signed-out cookie carries over). */
export async function startSession(services: { db: Db }, req: FastifyRequest, userId: string, now = Date.now()): Promise<void> {
  const sid = randomBytes(32).toString('base64url');
  const at = Math.floor(now / 1000);
  await deleteExpiredSessions(services.db, now);
  await insertSession(services.db, { id_hash: hashSid(sid), user_id: userId, created_at: at, expires_at: at + SESSION_SECONDS });
  req.session.regenerate();
  req.session.set('sid', sid);
}

export async function endSession(services: { db: Db }, req: FastifyRequest): Promise<void> {
  const sid = req.session.get('sid');
  if (typeof sid === 'string') await deleteSession(services.db, hashSid(sid));
  req.session.delete();
}

/** The signed-in user of the request, or undefined. */
export async function sessionUser(services: { db: Db }, req: FastifyRequest): Promise<User | undefined> {
  const sid = req.session.get('sid');
  if (typeof sid !== 'string' || sid.length > 64) return undefined;
  return findSessionUser(services.db, hashSid(sid));
}

/**
 * Guards a page or action: a live session, a workspace of the user's own (the one chosen, or the first), and the
 * role, if the route names some. Every check reads the database, so removing a membership or a session takes effect
 * on the next request.
 */
export function requireUser(services: { db: Db; readonly config?: Pick<LoadedConfig, 'gateway'> }, roles?: readonly Role[]): preHandlerAsyncHookHandler {
  return async function (req: FastifyRequest, reply: FastifyReply) {
    const user = await sessionUser(services, req);
    if (!user) throw new DashboardAuthError();
    const memberships = await membershipsOf(services.db, user.id);
    const chosen = req.session.get('ws');
    const workspace = memberships.find((m) => m.workspaceId === chosen) ?? memberships[0];
    if (!workspace) throw new NoWorkspaceError();
    if (roles && !roles.includes(workspace.role)) throw new RoleError(roles);
    const logsShown = workspace.role !== 'member' || !services.config || requestLogsConfig(services.config).membersSee;
    req.dashboard = { user, memberships, workspace, csrfToken: reply.generateCsrf(), logsShown };
  };
}

/** The signed-in user as the actor of the changes they make, for the audit log. */
export function dashboardActor(req: FastifyRequest): Actor {
  return { kind: 'user', id: req.dashboard!.user.id, address: req.ip };
}

/** The admin service as a dashboard page uses it: this user, in the workspace the page acts on. */
export function dashboardAdmin(services: { db: Db; calendar?: BudgetCalendar }, req: FastifyRequest): AdminService {
  return new AdminService({ db: services.db, calendar: services.calendar }, dashboardActor(req), new Set([req.dashboard!.workspace.workspaceId]));
}

export const MANAGERS: readonly Role[] = ['owner', 'admin'];
export const canManage = (role: Role) => MANAGERS.includes(role);

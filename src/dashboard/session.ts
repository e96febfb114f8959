// Who a dashboard request is: the session cookie names a stored session, its user, and the workspace they are looking at.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { GatewayError } from '../base/errors.js';
import type { BudgetCalendar } from '../config/periods.js';
import type { Db } from '../store/database.js';
import type { Role } from '../store/schema.js';
import type { Actor } from '../store/audit.js';
import { AdminService } from '../admin/service.js';
import { membershipsOf, type User, type WorkspaceMembership } from '../store/users.js';
import { sessionUser } from '../auth/session.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import { requestLogsConfig } from '../request-logs/config.js';

export { endSession, SESSION_COOKIE, SESSION_SECONDS, sessionKey, sessionUser, startSession } from '../auth/session.js';

export interface DashboardContext {
  user: User;
  memberships: WorkspaceMembership[];
  /** The workspace this request acts on: one of the user's own. */
  workspace: WorkspaceMembership;
  csrfToken: string;
  /** Whether the navigation links the Logs page (members see it unless requestLogs.membersSee is false). */
  logsShown: boolean;
  /** Whether the navigation links Settings > MCP tools (the gateway serves MCP servers). */
  mcpShown: boolean;
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

/**
 * Guards a page or action: a live session, a workspace of the user's own (the one chosen, or the first), and the
 * role, if the route names some. Every check reads the database, so removing a membership or a session takes effect
 * on the next request.
 */
export function requireUser(services: { db: Db; readonly config?: Pick<LoadedConfig, 'gateway'> & Partial<Pick<LoadedConfig, 'mcp'>> }, roles?: readonly Role[]): preHandlerAsyncHookHandler {
  return async function (req: FastifyRequest, reply: FastifyReply) {
    const user = await sessionUser(services, req);
    if (!user) throw new DashboardAuthError();
    const memberships = await membershipsOf(services.db, user.id);
    const chosen = req.session.get('ws');
    const workspace = memberships.find((m) => m.workspaceId === chosen) ?? memberships[0];
    if (!workspace) throw new NoWorkspaceError();
    if (roles && !roles.includes(workspace.role)) throw new RoleError(roles);
    const logsShown = workspace.role !== 'member' || !services.config || requestLogsConfig(services.config).membersSee;
    const mcpShown = (services.config?.mcp?.servers.size ?? 0) > 0;
    req.dashboard = { user, memberships, workspace, csrfToken: reply.generateCsrf(), logsShown, mcpShown };
  };
}

/** The signed-in user as the actor of the changes they make, for the audit log. */
export function dashboardActor(req: FastifyRequest): Actor {
  return { kind: 'user', id: req.dashboard!.user.id, address: req.ip };
}

/** The admin service as a dashboard page uses it: this user, in the workspace the page acts on. */
export function dashboardAdmin(services: { db: Db; calendar?: BudgetCalendar; readonly config?: Partial<Pick<LoadedConfig, 'mcp'>> }, req: FastifyRequest): AdminService {
  // A grant must name a server the gateway serves now (as through the admin API).
  const mcpServers = services.config?.mcp ? () => new Set(services.config!.mcp!.servers.keys()) : undefined;
  return new AdminService({ db: services.db, calendar: services.calendar, mcpServers }, dashboardActor(req), new Set([req.dashboard!.workspace.workspaceId]));
}

export const MANAGERS: readonly Role[] = ['owner', 'admin'];
export const canManage = (role: Role) => MANAGERS.includes(role);

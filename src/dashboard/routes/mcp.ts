// Settings > MCP tools: the MCP servers the gateway serves and their tools (listed from each server on view), the grants
// of this workspace and its keys; grant a server's tools to the workspace or to one key, or remove a grant. Owners and
// admins only; every change goes through the admin service and writes its audit row (workspace.mcp_grant, key.mcp_grant).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../base/errors.js';
import { listApiKeys } from '../../store/api-keys.js';
import { keyGrantsInWorkspace, listGrants, type McpGrantScope } from '../../store/mcp-grants.js';
import type { DashboardDeps } from '../deps.js';
import { keptForm } from '../form-values.js';
import { grantViews, parseGrantTools, serverViews, workspacePatterns } from '../mcp.js';
import { dashboardAdmin, MANAGERS, requireUser } from '../session.js';

type Form = Record<string, unknown>;

export function registerMcpRoutes(app: FastifyInstance, services: DashboardDeps): void {
  const managers = requireUser(services, MANAGERS);

  async function page(req: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}) {
    const ctx = req.dashboard!;
    const workspace = { id: ctx.workspace.workspaceId, name: ctx.workspace.workspaceName };
    const { mcp, templates } = services.config;
    // The MCP SDK is loaded with the first view of this page, not before (src/mcp/inventory.ts).
    const { toolsOfServer } = await import('../../mcp/inventory.js');
    const [listed, stored, keyGrants, keys] = await Promise.all([
      Promise.all([...mcp.servers.values()].map((server) => toolsOfServer(services.mcp.upstreams, server, templates))),
      listGrants(services.db, 'workspace', workspace.id),
      keyGrantsInWorkspace(services.db, workspace.id),
      listApiKeys(services.db, workspace.id),
    ]);
    const servers = serverViews(mcp, listed, workspacePatterns(mcp, workspace, stored));
    const grants = grantViews(mcp, workspace, stored, keyGrants, keys);
    const live = keys.filter((k) => k.revoked_at === null).map((k) => ({ id: k.id, label: k.name ? `${k.name} (${k.prefix}…)` : `${k.prefix}…` }));
    return reply.view('mcp', { title: 'MCP tools', page: 'mcp', dashboard: ctx, servers, grants, keys: live, ...extra });
  }

  /** The grant's subject from the form: the workspace, or a key (the admin service refuses one of another workspace). */
  const subjectOf = (req: FastifyRequest, value: unknown): { scope: McpGrantScope; id: string } => {
    if (value === 'workspace') return { scope: 'workspace', id: req.dashboard!.workspace.workspaceId };
    if (typeof value !== 'string' || !value || value.length > 64) throw new ValidationError('choose the workspace or one of its keys', 'subject');
    return { scope: 'key', id: value };
  };

  app.get('/settings/mcp', { preHandler: managers }, async (req, reply) => page(req, reply));

  app.post('/settings/mcp/grants', { preHandler: [app.csrfProtection, managers] }, async (req, reply) => {
    const form = (req.body ?? {}) as Form;
    try {
      const { scope, id } = subjectOf(req, form.subject);
      const tools = parseGrantTools(form.tools, form.patterns);
      const granted = await dashboardAdmin(services, req).setMcpGrant(scope, id, { server: String(form.server ?? ''), tools });
      req.log.info({ scope, subjectId: id, server: granted.server, userId: req.dashboard!.user.id }, 'dashboard: MCP tools granted');
      return await page(req, reply.code(201), { granted: { server: granted.server, tools: tools.join(', ') } });
    } catch (err) {
      if (err instanceof ValidationError) return page(req, reply.code(400), { formError: err.message, form: keptForm(form, ['subject', 'server', 'patterns']) });
      throw err;
    }
  });

  app.post('/settings/mcp/grants/remove', { preHandler: [app.csrfProtection, managers] }, async (req, reply) => {
    const form = (req.body ?? {}) as Form;
    const { scope, id } = subjectOf(req, form.subject);
    await dashboardAdmin(services, req).setMcpGrant(scope, id, { server: String(form.server ?? ''), tools: null });
    req.log.info({ scope, subjectId: id, server: form.server, userId: req.dashboard!.user.id }, 'dashboard: MCP grant removed');
    // htmx swaps the row out; a plain form post goes back to the page.
    if (req.headers['hx-request'] === 'true') return reply.type('text/html').send('');
    return reply.redirect('/dashboard/settings/mcp', 303);
  });
}

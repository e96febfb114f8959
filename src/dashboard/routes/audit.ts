// Settings > Audit log: the workspace's admin changes, newest first, a page at a time. Owners only.
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.js';
import { dashboardAdmin, requireUser } from '../session.js';

const PAGE = 50;
const compact = (value: unknown) => (value === null || value === undefined ? '' : JSON.stringify(value).slice(0, 600));

export function registerAuditRoutes(app: FastifyInstance, services: DashboardDeps): void {
  app.get('/settings/audit', { preHandler: requireUser(services, ['owner']) }, async (req, reply) => {
    const ctx = req.dashboard!;
    const before = (req.query as { before?: unknown }).before;
    const page = await dashboardAdmin(services, req).audit({ workspace_id: ctx.workspace.workspaceId, limit: PAGE, before: typeof before === 'string' && /^aud_[0-9a-f]{28}$/.test(before) ? before : undefined });
    // Users are shown by email; an admin token or the CLI by its name.
    const userIds = [...new Set(page.data.filter((r) => r.actor.kind === 'user').map((r) => r.actor.id))];
    const emails = new Map(userIds.length ? (await services.db.selectFrom('users').select(['id', 'email']).where('id', 'in', userIds).execute()).map((u) => [u.id, u.email]) : []);
    const rows = page.data.map((r) => ({
      id: r.id,
      at: r.at.replace('T', ' ').slice(0, 19) + ' UTC',
      actor: r.actor.kind === 'user' ? (emails.get(r.actor.id) ?? r.actor.id) : `${{ cli: 'CLI', gateway: 'gateway', admin_token: 'admin token' }[r.actor.kind] ?? r.actor.kind} ${r.actor.id}`,
      action: r.action,
      target: r.target_id ?? '',
      before: compact(r.before),
      after: compact(r.after),
      address: r.address ?? '',
    }));
    const last = page.data[page.data.length - 1];
    return reply.view('audit', { title: 'Audit log', page: 'audit', dashboard: ctx, rows, nextUrl: page.has_more && last ? `/dashboard/settings/audit?before=${last.id}` : '', firstUrl: before ? '/dashboard/settings/audit' : '' });
  });
}

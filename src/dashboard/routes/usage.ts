// The Usage page: cost and tokens per day for the last 30 days, and tables by model and by key.
import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.js';
import { requireUser } from '../session.js';
import { usageOverview } from '../usage-chart.js';

export function registerUsageRoutes(app: FastifyInstance, services: DashboardDeps): void {
  app.get('/usage', { preHandler: requireUser(services) }, async (req, reply) => {
    const ctx = req.dashboard!;
    return reply.view('usage', { title: 'Usage', page: 'usage', dashboard: ctx, usage: await usageOverview(services.db, ctx.workspace.workspaceId) });
  });
}
